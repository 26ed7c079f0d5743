// What a Python file's code does that a person reviewing it should read first (./capabilities.ts), by a careful
// line-based reading, not a parser: MCP Gate runs no Python to analyse a file. Comments and the contents of
// strings (single, double, triple-quoted, across lines) are blanked first, keeping every line where it was, so a
// string or a comment that names subprocess is not a use of it; then each line is matched for imports and calls:
// subprocess, os.system/popen/exec*/spawn*, pty, asyncio's subprocesses (programs); socket, urllib, http.client,
// requests, httpx, aiohttp, websockets, ftplib, smtplib (network); eval, exec, compile, __import__, importlib
// (computed code); open() or pathlib of an absolute path, `~` or the home folder (outside the workspace).
// Conservative by construction: a name matched is reported, even where Python would resolve it to something else.
import type { Capability, CapabilityKind } from './capability';

/** The text with every comment and every string's contents replaced by spaces (quotes and newlines kept). */
export function blankPython(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '#') {
      const end = text.indexOf('\n', i);
      const stop = end < 0 ? text.length : end;
      out += ' '.repeat(stop - i);
      i = stop;
      continue;
    }
    if (c === '"' || c === "'") {
      const q = text.startsWith(c.repeat(3), i) ? c.repeat(3) : c;
      out += q;
      i += q.length;
      while (i < text.length && !text.startsWith(q, i)) {
        if (text[i] === '\\' && i + 1 < text.length) {
          out += text[i + 1] === '\n' ? ' \n' : '  ';
          i += 2;
          continue;
        }
        if (q.length === 1 && text[i] === '\n') break; // an unterminated one-line string ends at the line
        out += text[i] === '\n' ? '\n' : ' ';
        i++;
      }
      if (text.startsWith(q, i)) {
        out += q;
        i += q.length;
      }
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

const RULES: [CapabilityKind, RegExp][] = [
  ['programs', /^\s*(import|from)\s+(subprocess|pty|pexpect|sh|plumbum)\b/],
  [
    'programs',
    /\b(subprocess\s*\.\s*\w+|os\s*\.\s*(system|popen|exec[lv]p?e?|spawn[lv]p?e?|posix_spawnp?|fork)|pty\s*\.\s*spawn|create_subprocess_(exec|shell))\s*\(/,
  ],
  [
    'network',
    /^\s*(import|from)\s+(socket|ssl|urllib\d?|http\.client|http\b|requests|httpx|aiohttp|websockets?|ftplib|smtplib|telnetlib|paramiko|grpc)\b/,
  ],
  [
    'network',
    /\b(socket\s*\.\s*(socket|create_connection)|urlopen|requests\s*\.\s*(get|post|put|patch|delete|request|Session)|httpx\s*\.\s*\w+)\s*\(/,
  ],
  ['computed-code', /^\s*(import|from)\s+(importlib|runpy|marshal|ctypes)\b/],
  ['computed-code', /(^|[^\w.])(eval|exec|compile|__import__)\s*\(/],
  [
    'outside-workspace',
    /\b(expanduser|Path\s*\.\s*home|gethomedir)\s*\(|\bos\s*\.\s*environ\s*(\[|\.get\s*\()\s*["'](HOME|USERPROFILE|APPDATA)["']/,
  ],
];

/** open()/Path()/os and shutil file calls whose first argument is a string: in code (contents blanked)… */
const PATH_CALL = /\b(open|Path|os\s*\.\s*(remove|unlink|rmdir|makedirs|listdir)|shutil\s*\.\s*\w+)\s*\(\s*[rbfuRBFU]*["']/;
/** …and that string, in the original line, starting with `/`, `~` or a drive. */
const ABSOLUTE_OPEN =
  /\b(open|Path|os\s*\.\s*(remove|unlink|rmdir|makedirs|listdir)|shutil\s*\.\s*\w+)\s*\(\s*[rbfuRBFU]*["'](\/|~|[A-Za-z]:[\\/])/;

/** What one Python file does (see the file's header), each match once per line. */
export function pythonCapabilities(file: string, text: string): Capability[] {
  const blank = blankPython(text).split('\n');
  const lines = text.split('\n');
  const out: Capability[] = [];
  blank.forEach((code, i) => {
    const kinds = new Set<CapabilityKind>();
    for (const [kind, re] of RULES) if (!kinds.has(kind) && re.test(code)) kinds.add(kind);
    // The string's contents are blank in `code`: the call must be code there, the path is read from the original.
    if (!kinds.has('outside-workspace') && PATH_CALL.test(code) && ABSOLUTE_OPEN.test(lines[i] ?? '')) kinds.add('outside-workspace');
    const evidence = (lines[i] ?? '').trim().replace(/\s+/g, ' ');
    for (const kind of kinds)
      out.push({
        kind,
        file,
        line: i + 1,
        evidence: evidence.length > 80 ? `${evidence.slice(0, 79)}…` : evidence,
        how: /^(import|from)\s/.test(evidence) ? 'import' : 'call',
      });
  });
  return out;
}
