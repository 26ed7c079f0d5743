// The shape of what a server's code can do (./capabilities.ts reads it from the pinned texts), and the order its
// kinds are named in. No imports: the readers of each language and the risk headline share it.
export type CapabilityKind = 'programs' | 'network' | 'outside-workspace' | 'computed-code' | 'install-script';

export interface Capability {
  kind: CapabilityKind;
  /** The file as pinned (workspace-relative), or `package <name>` for the lock of an npm launch. */
  file: string;
  /** 1-based; 0 when it has none (a package's install script). */
  line: number;
  /** The short source it was read from (`child_process.exec`, `require('node:net')`). */
  evidence: string;
  /** Taking a module (`import`) or using it (`call`): a headline names a use before an import. */
  how: 'import' | 'call';
}

/** The order kinds are named in, most consequential first. */
export const CAPABILITY_KINDS: readonly CapabilityKind[] = ['programs', 'network', 'outside-workspace', 'computed-code', 'install-script'];
