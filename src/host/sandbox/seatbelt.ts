// The macOS equivalent of the bubblewrap sandbox (designed, generated and tested; not yet started by anything): a
// Seatbelt profile for `sandbox-exec -p <profile> -- <command>` built from the same SandboxDescription that
// buildSandbox (./sandbox.ts) derives from the one sandbox decision, so that both platforms contain a server by the
// same rule. Seatbelt filters paths and cannot mount, which changes two things, said here so the port is one step:
// - no empty HOME or private /tmp: HOME and everything outside the allowed paths is denied instead (reads too);
// - no verified copy mounted over a workspace file: on macOS the server must be started from the copy's own folder
//   (the launch plan rewritten to the copy), and the workspace file itself is denied for writing like any
//   read-only path. Until that rewrite exists, MCP Gate refuses to start repository servers on macOS.
// SBPL rules are matched last-to-first for the same operation, so the read-only denials come after the read-write
// allowances they carve out of.
import type { SandboxDescription } from './sandbox';

/** macOS system folders a process needs to read (the counterpart of bwrap's read-only /usr, /bin, /lib, /etc). */
export const MACOS_SYSTEM_READ = ['/System', '/usr', '/bin', '/sbin', '/Library/Apple', '/private/etc', '/private/var/db/timezone', '/dev'];

/** A path as an SBPL string literal: backslash and double quote escaped, control characters refused. */
export function sbplString(p: string): string {
  if (!p.startsWith('/')) throw new Error(`a Seatbelt path must be absolute: ${JSON.stringify(p)}`);
  if (/[\u0000-\u001f\u007f]/.test(p)) throw new Error(`a Seatbelt path may not hold control characters: ${JSON.stringify(p)}`);
  return `"${p.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The Seatbelt profile for a sandbox description: deny by default, the same read-write, read-only and network rule. */
export function seatbeltProfile(
  d: Pick<SandboxDescription, 'network' | 'readWrite' | 'readOnly' | 'overlays'>,
  system: readonly string[] = MACOS_SYSTEM_READ,
): string {
  const sub = (p: string) => `(subpath ${sbplString(p)})`;
  const L = [
    '(version 1)',
    '(deny default)',
    '(allow process-fork)',
    '(allow process-exec)',
    '(allow signal (target same-sandbox))',
    '(allow sysctl-read)',
    '(allow mach-lookup (global-name "com.apple.system.logger"))',
    `(allow file-read* ${system.map(sub).join(' ')})`,
  ];
  if (d.readWrite.length) L.push(`(allow file-read* file-write* ${d.readWrite.map(sub).join(' ')})`);
  const readOnly = [...d.readOnly, ...d.overlays];
  if (readOnly.length) {
    L.push(`(allow file-read* ${readOnly.map(sub).join(' ')})`);
    L.push(`(deny file-write* ${readOnly.map(sub).join(' ')})`);
  }
  // Without the network rule: no socket at all, the host's loopback and Unix sockets included (deny default).
  if (d.network) L.push('(allow network*)');
  return L.join('\n') + '\n';
}
