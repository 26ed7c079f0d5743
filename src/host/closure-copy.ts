// The verified copy of an execution closure: every pinned file is read once, hashed, compared with the digest
// the approval covers, and written from those same bytes into a private folder (0700, files read-only). The
// sandbox mounts each copy read-only over its workspace path, so what runs is byte for byte what was approved,
// whatever happens to the workspace file after the check — the check-then-spawn race is closed, and the server
// cannot change the files it runs. A file that no longer matches refuses the start.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import type { PinnedFile } from '../trust/plan/closure';
import { MAX_CLOSURE_FILE_BYTES } from '../trust/plan/closure';
import type { SandboxOverlay } from './sandbox';

export class CopyRefused extends Error {}

export interface ClosureCopy {
  dir: string;
  overlays: SandboxOverlay[];
  remove(): void;
}

function readExact(file: string, limit: number): { data: Buffer; mode: number } {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new CopyRefused(`${file} is no longer a regular file`);
    if (st.size > limit) throw new CopyRefused(`${file} grew past ${limit} bytes`);
    const buf = Buffer.alloc(st.size + 1);
    let total = 0;
    for (;;) {
      const n = fs.readSync(fd, buf, total, buf.length - total, null);
      if (n === 0) break;
      total += n;
      if (total > st.size) throw new CopyRefused(`${file} changed while it was read`);
    }
    return { data: buf.subarray(0, total), mode: st.mode };
  } finally {
    fs.closeSync(fd);
  }
}

/** Copies and verifies `files` (workspace-relative → pinned digest) of `workspace`. Throws CopyRefused. */
export function copyClosure(workspace: string, files: Readonly<Record<string, PinnedFile>>): ClosureCopy {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-run-'));
  fs.chmodSync(dir, 0o700);
  const remove = () => fs.rmSync(dir, { recursive: true, force: true });
  const overlays: SandboxOverlay[] = [];
  try {
    let i = 0;
    for (const [rel, pinned] of Object.entries(files)) {
      const source = path.join(workspace, ...rel.split('/'));
      let read;
      try {
        read = readExact(source, MAX_CLOSURE_FILE_BYTES);
      } catch (e) {
        throw e instanceof CopyRefused ? e : new CopyRefused(`${rel} cannot be read: ${(e as Error).message}`);
      }
      const digest = createHash('sha256').update(read.data).digest('hex');
      if (digest !== pinned.sha256 || read.data.length !== pinned.size) {
        throw new CopyRefused(`${rel} is not the file that was approved (it changed after the gate checked it)`);
      }
      const copy = path.join(dir, String(i++));
      fs.writeFileSync(copy, read.data, { mode: 0o600, flag: 'wx' });
      fs.chmodSync(copy, (read.mode & 0o111 ? 0o500 : 0o400));
      overlays.push({ source: copy, target: source });
    }
  } catch (e) {
    remove();
    throw e;
  }
  return { dir, overlays, remove };
}
