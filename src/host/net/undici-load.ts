// Loads ./undici.ts (undici's agent, connector, fetch and Response) once, when the host first needs one of them:
// the bundles carry it as dist/undici.js, so nothing of undici is loaded before a remote server is reached.
import type * as Undici from './undici';

let loaded: typeof Undici | undefined;
export function undici(): typeof Undici {
  loaded ??= require('./undici') as typeof Undici;
  return loaded;
}
