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
