// The CLI's only way to write: every byte to stdout or stderr passes through here, so the masking of secret
// values (src/policy) applies to all of it.
export type Mask = (text: string) => string;

let mask: Mask = (t) => t;

export function setMask(m: Mask): void {
  mask = m;
}

export function out(text: string): void {
  process.stdout.write(mask(text.endsWith('\n') ? text : text + '\n'));
}

export function err(text: string): void {
  process.stderr.write(mask(text.endsWith('\n') ? text : text + '\n'));
}

// A closed pipe (`mcp-gate log | head`) ends the command quietly instead of with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
}
