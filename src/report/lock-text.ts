// The words for a package lock, shared by every front end: the one-line summary a confirmation shows, the
// user's minimum-release-age verdict, the lock as a document (one side of VS Code's package diff), and an
// update's comparison as lines (the CLI prints them; its diff documents are in ./change-text.ts). Pure functions
// of the lock, the update (src/trust/approval/lock-update.ts) and the clock; every text is escaped.
import { createTwoFilesPatch } from 'diff';
import { escapeText, quote } from '../text/escape';
import type { LockUpdate } from '../trust/approval/lock-update';
import { ago, dependencyCount, lockSummary, type NpmLock } from '../trust/packages/npm-lock';

export { lockSummary };

/** The user's minimum release age (src/trust/approval/approvals.ts minReleaseAge), when set. */
export interface MinAge {
  days: number;
  file: string;
}

/** Whether the lock's version is as old as the user asks: a line, or undefined when no minimum is set. */
export function minAgeVerdict(lock: NpmLock, minAge: MinAge | undefined, now = Date.now()): string | undefined {
  if (!minAge) return undefined;
  const rule = `your minimum release age is ${minAge.days} day${minAge.days === 1 ? '' : 's'} (${minAge.file})`;
  const at = lock.publishedAt ? Date.parse(lock.publishedAt) : NaN;
  if (!Number.isFinite(at)) return `${rule}: the registry gives no publication date for ${lock.version}`;
  const old = now - at >= minAge.days * 86_400_000;
  return `${rule}: ${lock.version} was ${ago(lock.publishedAt, now)}, ${old ? 'old enough' : 'NOT old enough'}`;
}

/** The lock as one side of a diff: exact version, full integrity, publication, dependencies one per line. */
export function lockDocument(lock: NpmLock, minAge?: MinAge, now = Date.now()): string {
  const n = dependencyCount(lock);
  const L = [
    `package      ${escapeText(lock.name)}`,
    `version      ${escapeText(lock.version)}`,
    `integrity    ${escapeText(lock.integrity)}`,
    `published    ${lock.publishedAt ? `${escapeText(lock.publishedAt)} (${ago(lock.publishedAt, now)})` : 'unknown'}`,
  ];
  const verdict = minAgeVerdict(lock, minAge, now);
  if (verdict) L.push(`release age  ${escapeText(verdict)}`);
  L.push(
    `spec         ${quote(lock.spec)} (${escapeText(lock.launcher)}) from ${escapeText(lock.registry)}`,
    `runs         ${escapeText(lock.bin.name)} (${escapeText(lock.bin.file)})`,
    `dependencies ${n}`,
  );
  const root = `node_modules/${lock.name}`;
  for (const k of Object.keys(lock.packages)
    .filter((x) => x !== '' && x !== root)
    .sort()) {
    const p = lock.packages[k];
    L.push(
      `  ${escapeText(k.replace(/^node_modules\//, ''))} ${escapeText(String(p.version ?? (p.link ? 'link' : '?')))} ${escapeText(String(p.integrity ?? ''))}`.trimEnd(),
    );
  }
  if (lock.installScripts.length) L.push(`install scripts NOT run: ${lock.installScripts.map(escapeText).join(', ')}`);
  L.push(`tree         ${escapeText(lock.tree)}`, `lock         ${escapeText(lock.digest)}`);
  return `${L.join('\n')}\n`;
}

const DEP_MARK = { added: '+', removed: '-', changed: '~' } as const;

/** What an update changes besides the files: the version line and one line per dependency. */
export function dependencyLines(u: LockUpdate): string[] {
  const L = [`version   ${escapeText(u.old.name)} ${escapeText(u.old.version)} → ${escapeText(u.fresh.version)}`];
  for (const d of u.dependencies) {
    L.push(
      `${DEP_MARK[d.change]} dependency ${escapeText(d.name)} ${d.change === 'changed' ? `${escapeText(d.before!)} → ${escapeText(d.after!)}` : escapeText((d.after ?? d.before)!)}`,
    );
  }
  if (!u.dependencies.length) L.push('dependencies: unchanged');
  return L;
}

const MAX_DIFF_LINES = 400;

/** The update as the CLI prints it: the version, the dependencies, then each changed file's unified diff. */
export function updateLines(u: LockUpdate): string[] {
  const L = dependencyLines(u);
  if (!u.files.compared) return [...L, `files: not compared (${escapeText(u.files.why)})`];
  L.push('files of the package:');
  let budget = MAX_DIFF_LINES;
  for (const f of u.files.files) {
    L.push(`${DEP_MARK[f.change]} ${escapeText(f.path)}`);
    const tx = f.before ? f.before.text : '';
    const ty = f.after ? f.after.text : '';
    if (tx === undefined || ty === undefined) {
      L.push('    (binary or larger than 64 KiB: not shown)');
      continue;
    }
    const patch = createTwoFilesPatch(`a/${f.path}`, `b/${f.path}`, tx, ty, '', '', { context: 2 }).split('\n').slice(2);
    for (const line of patch) {
      if (budget-- <= 0) break;
      L.push(`    ${escapeText(line)}`);
    }
    if (budget <= 0) {
      L.push('    … (diff cut here)');
      break;
    }
  }
  if (!u.files.files.length) L.push('  (no file of the package itself changed)');
  return L;
}
