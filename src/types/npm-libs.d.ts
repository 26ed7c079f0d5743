// Just the parts of the npm team's libraries MCP Gate calls (they ship no type declarations).
declare module 'npm-package-arg' {
  interface Result {
    type: string;
    name: string | null;
    rawSpec: string;
    fetchSpec: string | null;
  }
  function npa(spec: string, where?: string): Result;
  export = npa;
}
declare module 'pacote' {
  export function manifest(spec: string, opts?: Record<string, unknown>): Promise<Record<string, unknown>>;
  export function packument(spec: string, opts?: Record<string, unknown>): Promise<Record<string, unknown>>;
  export function extract(spec: string, dest: string, opts?: Record<string, unknown>): Promise<Record<string, unknown>>;
}
declare module '@npmcli/arborist' {
  class Arborist {
    constructor(opts: Record<string, unknown>);
    buildIdealTree(opts?: Record<string, unknown>): Promise<{ meta: { commit(): Record<string, unknown> } }>;
    reify(opts?: Record<string, unknown>): Promise<unknown>;
  }
  export = Arborist;
}
