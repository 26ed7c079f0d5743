// A server's processes as /proc shows them, read without starting anything: what the stop (./stdio.ts), the limits
// (./limits.ts) and the CLI's signal handling walk to end a whole tree.
import * as fs from 'node:fs';

/** Every descendant of `pid` (children, grandchildren, …) from /proc; empty where /proc is not available. */
export function descendants(pid: number): number[] {
  const parentOf = new Map<number, number>();
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return [];
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parentOf.set(Number(e), ppid);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const queue = [pid];
  while (queue.length) {
    const p = queue.shift()!;
    for (const [child, parent] of parentOf)
      if (parent === p && !out.includes(child)) {
        out.push(child);
        queue.push(child);
      }
  }
  return out;
}
