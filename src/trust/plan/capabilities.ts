// What a server's code can do that a reviewer should read first: starts programs, reaches the network, reads or
// writes outside the workspace, loads code computed at run time, install scripts — each with its file, line and
// the source it was read from. Read from the texts pinned with the server (`pinned.texts`, now; `record.texts`, as
// approved): JavaScript and TypeScript with the closure's parser (./capabilities-js.ts), Python line by line with
// comments and strings blanked (./capabilities-py.ts), and a package.json's install scripts (an npm launch's lock:
// src/trust/approval/risk.ts). For a changed server only what is new counts: a kind in a file that did not have it
// at approval (or a file that is new). A file whose text was not kept (binary or larger than 64 KiB) is not read.
// Pure: texts in, capabilities out.
import { createHash } from 'node:crypto';
import type { Capability } from './capability';
import { jsCapabilities } from './capabilities-js';
import { pythonCapabilities } from './capabilities-py';

export { CAPABILITY_KINDS, type Capability, type CapabilityKind } from './capability';

const JS = /\.(js|mjs|cjs|jsx|ts|mts|cts|tsx)$/i;
const PY = /\.pyw?$/i;
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare'];

function packageJsonCapabilities(file: string, text: string): Capability[] {
  let scripts: unknown;
  try {
    scripts = (JSON.parse(text) as { scripts?: unknown }).scripts;
  } catch {
    return [];
  }
  if (!scripts || typeof scripts !== 'object') return [];
  const out: Capability[] = [];
  for (const name of INSTALL_SCRIPTS) {
    const run = (scripts as Record<string, unknown>)[name];
    if (typeof run !== 'string') continue;
    const at = text.search(new RegExp(`"${name}"\\s*:`));
    const line = at < 0 ? 0 : text.slice(0, at).split('\n').length;
    const evidence = `"${name}": ${JSON.stringify(run)}`;
    out.push({ kind: 'install-script', file, line, evidence: evidence.length > 80 ? `${evidence.slice(0, 79)}…` : evidence, how: 'call' });
  }
  return out;
}

/** What one file's code does, by line (a module taken before its use on the same line). */
export function capabilitiesOf(file: string, text: string): Capability[] {
  // The panel's model is built again on every change: a file read once is not parsed again while its text is the same.
  const key = `${file}\0${createHash('sha256').update(text).digest('hex')}`;
  const known = READ.get(key);
  if (known) return known.map((c) => ({ ...c }));
  const how = (c: Capability) => (c.how === 'import' ? 0 : 1);
  const found = readFile(file, text).sort((a, b) => a.line - b.line || how(a) - how(b));
  if (READ.size >= READ_MAX) READ.delete(READ.keys().next().value!);
  READ.set(key, found);
  return found.map((c) => ({ ...c }));
}

/** What files read (by name and text digest) could do, the oldest forgotten first. */
const READ = new Map<string, Capability[]>();
const READ_MAX = 5000;

/** By the file's name (and a `#!` line for a file without an extension); others: nothing. */
function readFile(file: string, text: string): Capability[] {
  const base = file.split('/').pop() ?? file;
  if (base === 'package.json') return packageJsonCapabilities(file, text);
  if (JS.test(file)) return jsCapabilities(file, text);
  if (PY.test(file)) return pythonCapabilities(file, text);
  if (!base.includes('.')) {
    const shebang = /^#!.*\b(node|deno|bun|tsx|ts-node|python[\d.]*)\b/.exec(text);
    if (shebang) return shebang[1].startsWith('python') ? pythonCapabilities(file, text) : jsCapabilities(file, text);
  }
  return [];
}

/** Every file's capabilities, files in name order, each file's by line. `envFile:` texts are data, not code. */
export function capabilitiesOfTexts(texts: Readonly<Record<string, string>>): Capability[] {
  return Object.keys(texts)
    .filter((f) => !f.startsWith('envFile:'))
    .sort()
    .flatMap((f) => capabilitiesOf(f, texts[f]));
}

/** What `now` can do that `approved` could not: a kind in a file that did not have it, or any in a file that is new. */
export function newCapabilities(approved: Readonly<Record<string, string>>, now: Readonly<Record<string, string>>): Capability[] {
  const before = new Set(capabilitiesOfTexts(approved).map((c) => `${c.kind}\0${c.file}`));
  return capabilitiesOfTexts(now).filter((c) => !before.has(`${c.kind}\0${c.file}`));
}
