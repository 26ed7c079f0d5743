// What dist/lock-worker.js carries in place of three libraries the npm libraries require but, as MCP Gate runs
// them, never call (scripts/build-options.mjs aliases each here; 785 KiB of the minified worker): iconv-lite
// (minipass-fetch decodes with it only in Body.textConverted()), sigstore (pacote verifies with it only under
// verifyAttestations, which MCP Gate never sets) and @npmcli/query (arborist parses with it only in
// Node.querySelectorAll(), that is `npm query`). Should one ever be called, it throws, naming itself.
const absent = (what: string) => (): never => {
  throw new Error(`${what} is not bundled in MCP Gate's package worker (src/host/workers/npm-absent.ts)`);
};

/** iconv-lite's decode (minipass-fetch's Body.textConverted()). */
export const decode = absent('iconv-lite');
/** sigstore's verify (pacote, verifyAttestations). */
export const verify = absent('sigstore');
/** @npmcli/query's parser (arborist's Node.querySelectorAll()). */
export const parser = absent('@npmcli/query');
/** @npmcli/query's marker of an array in a query result, compared by identity only. */
export const arrayDelimiter = Symbol('arrayDelimiter');
