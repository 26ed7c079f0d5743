// Which processes belong to this run of the suite: test/vscode/all.mjs runs several VS Code windows at once, some on
// the same fixture folder, so a process found by its command line may be another run's. This run's processes
// descend from its own code-server, the ancestor of this extension host that test/vscode/run.mjs started.
import * as fs from 'node:fs';

const parentOf = (pid: number): number | undefined => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
};

const cmdline = (pid: number) => {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
};

/** This run's code-server: the ancestor of the extension host whose parent is test/vscode/run.mjs (or e2e's run.mjs). */
function runRoot(): number {
  let pid = process.pid;
  for (let parent = parentOf(pid); parent && parent > 1; pid = parent, parent = parentOf(pid))
    if (/\/run\.mjs\b/.test(cmdline(parent))) return pid;
  return pid; // not started by the harness: the topmost ancestor below init
}

let root: number | undefined;

/** Whether `pid` descends from this run's code-server (it is one of this window's processes). */
export function inThisRun(pid: number): boolean {
  root ??= runRoot();
  for (let p: number | undefined = pid, hops = 0; p && p > 1 && hops < 64; p = parentOf(p), hops++) if (p === root) return true;
  return false;
}
