// SSH signatures for team approvals (issue 27 item 2): the mechanism git uses for signed commits, `ssh-keygen -Y
// sign` and `ssh-keygen -Y verify` with an allowed-signers file (ssh-keygen(1), "ALLOWED SIGNERS"), under a namespace
// of MCP Gate's own so a signature made for git or anything else never verifies here. The signed bytes are given
// on stdin or in a private temporary folder (mode 0700, removed after); every run is bounded (30 s) and reads
// nothing from a terminal. No ssh-keygen on the machine: refused, saying which package brings it.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The namespace (`-n`) of every MCP Gate approval signature. */
export const SIGNATURE_NAMESPACE = 'mcp-gate-approval@mcp-gate.dev';
const TIMEOUT_MS = 30_000;
const MAX_SIGNATURE_BYTES = 16 * 1024;

export class SignatureError extends Error {}

function sshKeygen(args: string[], input?: string): { code: number; stdout: string; stderr: string } {
  const r = spawnSync('ssh-keygen', args, {
    input: input ?? '',
    encoding: 'utf8',
    timeout: TIMEOUT_MS,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C' },
  });
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT') {
    throw new SignatureError(
      'ssh-keygen is not installed; team approvals are signed and checked with it (Debian/Ubuntu: apt-get install openssh-client; macOS has it)',
    );
  }
  if (r.error) throw new SignatureError(`ssh-keygen did not finish: ${r.error.message}`);
  return { code: r.status ?? -1, stdout: r.stdout ?? '', stderr: (r.stderr ?? '').trim() };
}

function inPrivateFolder<T>(f: (dir: string) => T): T {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-sig-'));
  try {
    fs.chmodSync(dir, 0o700);
    return f(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Signs `data` with the SSH key in `keyFile` (a private key, or a public key whose private half ssh-agent holds). */
export function sign(keyFile: string, data: string): string {
  if (!fs.existsSync(keyFile)) throw new SignatureError(`the signing key ${keyFile} does not exist`);
  return inPrivateFolder((dir) => {
    const file = path.join(dir, 'entry');
    fs.writeFileSync(file, data, { mode: 0o600 });
    const r = sshKeygen(['-Y', 'sign', '-q', '-f', keyFile, '-n', SIGNATURE_NAMESPACE, file]);
    const sig = `${file}.sig`;
    if (r.code !== 0 || !fs.existsSync(sig))
      throw new SignatureError(`ssh-keygen could not sign with ${keyFile}: ${r.stderr || `exit ${r.code}`}`);
    return fs.readFileSync(sig, 'utf8');
  });
}

/** What a verification found: the key that signed (its fingerprint), or why the signature does not hold. */
export type Verified = { ok: true; key: string } | { ok: false; why: string };

/**
 * Whether `signature` over `data` was made, under MCP Gate's namespace, by a key that `allowedSigners` lists for
 * `principal` (and is valid now by that file's `valid-after`/`valid-before`).
 */
export function verify(allowedSigners: string, principal: string, data: string, signature: string): Verified {
  if (typeof signature !== 'string' || !signature.includes('BEGIN SSH SIGNATURE')) return { ok: false, why: 'it carries no SSH signature' };
  if (Buffer.byteLength(signature) > MAX_SIGNATURE_BYTES) return { ok: false, why: `its signature is over ${MAX_SIGNATURE_BYTES} bytes` };
  if (!/^[A-Za-z0-9._@+-]{1,256}$/.test(principal))
    return {
      ok: false,
      why: `its signer ${JSON.stringify(principal).slice(0, 80)} is not a principal MCP Gate accepts (letters, digits and . _ @ + -; an allowed-signers pattern such as "*" is not a name)`,
    };
  return inPrivateFolder((dir) => {
    const sig = path.join(dir, 'entry.sig');
    fs.writeFileSync(sig, signature, { mode: 0o600 });
    const r = sshKeygen(['-Y', 'verify', '-f', allowedSigners, '-I', principal, '-n', SIGNATURE_NAMESPACE, '-s', sig], data);
    if (r.code === 0) {
      const key = /\bkey (SHA256:[A-Za-z0-9+/=]+)/.exec(r.stdout)?.[1] ?? 'an allowed key';
      return { ok: true, key };
    }
    const said =
      (r.stderr || r.stdout)
        .split('\n')
        .filter((l) => l.trim())
        .slice(-1)[0] ?? `exit ${r.code}`;
    return { ok: false, why: `its signature does not verify for ${principal} with ${allowedSigners} (ssh-keygen: ${said.trim()})` };
  });
}
