// `mcp-gate check`: the gate's verdict on a project for a CI pipeline. It evaluates the project as doctor does and
// sorts what it finds into four categories — servers waiting for a first review (pending), servers changed since
// approval (changed), servers rejected or blocked and sources MCP Gate cannot use (blocked), and repository files
// that try to pre-approve servers for other agents or that the pre-approval check cannot read (preapproval) — and
// exits with the sum of the bits of the categories that have entries and are in --fail-on (8, 16, 32, 64), or 1 when
// the project cannot be evaluated at all (the approval store cannot be read). Text for a person, or one JSON object.
// Every folder of the checkout that is a project of its own for the agents (it declares servers or pre-approves them,
// at any depth: src/trust/sources/nested-projects.ts) is checked too, its entries named with the folder.
import { evaluateGate } from '../trust/gate';
import type { GateInput, GateReport, ServerReport, SourceReport } from '../trust/report';
import { holdOf, type Hold } from '../trust/approval/states';
import { stateWords } from '../trust/approval/gate-state';
import { preApprovalAttempts, preApprovalLine, type PreApproval, type PreApprovalReport } from '../trust/sources/preapproval';
import { MAX_PROJECT_WALK, nestedProjects } from '../trust/sources/nested-projects';
import { escapeText } from '../text/escape';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ImportOutcome } from '../trust/approval/team';
import { UsageError, type Ctx } from './context';
import { importText, withTeamApprovals } from './team';
import { err, out } from './output';
import { cliWords, shellArg } from './words';
import { CHECK_BITS, CHECK_CATEGORIES, type CheckCategory } from './usage';

/** A server the gate holds back, as the check reports it. */
interface ServerEntry {
  kind: 'server';
  /** The folder of the checkout it is declared in, when that is not the root (relative, POSIX). */
  folder?: string;
  name: string;
  source: string;
  file: string;
  line: number;
  scope: string;
  gated: boolean;
  state: ServerReport['state'];
  disabled: boolean;
  reason: string;
  next: string;
}

/** A reason the whole project is blocked (the report's full block). */
interface FullBlockEntry {
  kind: 'full-block';
  folder?: string;
  reason: string;
  files: string[];
  next: string;
}

/** A configuration file MCP Gate found but cannot read or parse (not already a full block). */
interface SourceEntry {
  kind: 'source';
  folder?: string;
  source: string;
  file: string;
  scope: string;
  status: SourceReport['status'];
  problems: string[];
  next: string;
}

/** A repository file that tries to pre-approve servers for another agent (file, agent, key, what, position). */
type AttemptEntry = { kind: 'attempt'; folder?: string } & PreApproval & { next: string };

/** A file the pre-approval check could not read or parse: what it pre-approves is unknown, so it fails closed. */
interface UnreadableEntry {
  kind: 'unreadable';
  folder?: string;
  problem: string;
  next: string;
}

export interface CheckResult {
  project: string;
  ok: boolean;
  exitCode: number;
  failOn: CheckCategory[];
  store: { file: string; health: GateReport['store']['health'] };
  escapeHatch: boolean;
  /** Why the project could not be evaluated (exit 1), when it could not. */
  error?: string;
  pending: ServerEntry[];
  changed: ServerEntry[];
  blocked: (ServerEntry | FullBlockEntry | SourceEntry)[];
  preapproval: (AttemptEntry | UnreadableEntry)[];
  /** The folders below the root checked as projects of their own (relative, POSIX). */
  folders?: string[];
  /** The folders `--skip` kept out of the walk (relative, POSIX): what they declare is not checked. */
  skipped?: string[];
  /** With --team: the team file and what became of each of its entries. */
  team?: { file: string; entries: ImportOutcome[] };
}

/** The categories of `--fail-on a,b`, in their own order; every category without the option. */
export function failOnCategories(value: string | undefined): CheckCategory[] {
  if (value === undefined) return [...CHECK_CATEGORIES];
  const names = value
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  const valid = `the categories are ${CHECK_CATEGORIES.join(', ')}`;
  if (!names.length) throw new UsageError(`--fail-on takes a comma-separated list of categories; ${valid}`);
  const unknown = names.filter((n) => !(CHECK_CATEGORIES as readonly string[]).includes(n));
  if (unknown.length)
    throw new UsageError(
      `--fail-on: unknown ${unknown.length === 1 ? 'category' : 'categories'} ${unknown.map((n) => JSON.stringify(n)).join(', ')}; ${valid}`,
    );
  return CHECK_CATEGORIES.filter((c) => names.includes(c));
}

/** What a person does about a server the gate holds back (commands without this machine's paths: run in a clone). */
function serverNext(s: ServerReport, report: GateReport): string {
  // A name declared in several files needs --source in each command.
  const words = cliWords(report.servers.filter((x) => x.name === s.name).length > 1 ? `--source ${shellArg(s.source)}` : '');
  const hold = holdOf(s);
  if (hold === 'pending') return `${words.review(s.name)} on a machine you trust`;
  if (hold === 'changed') return `${words.review(s.name)} again on a machine you trust (\`get\` shows what changed)`;
  if (s.state === 'rejected') return `a person rejected it in this store: remove it from ${s.source}, or ${words.resetServer(s.name)}`;
  if (report.fullBlock.length) return 'fix what blocks the whole project (listed in this category)';
  return `fix or remove its entry in ${s.source}`;
}

function serverEntry(s: ServerReport, report: GateReport): ServerEntry {
  return {
    kind: 'server',
    name: s.name,
    source: s.source,
    file: s.file,
    line: s.position.line,
    scope: s.scope,
    gated: s.gated,
    state: s.state,
    disabled: s.disabled,
    reason: s.reason,
    next: serverNext(s, report),
  };
}

/** Sorts a report and the pre-approval check into the four categories, with the exit code for `failOn`. */
export function checkResult(report: GateReport, pre: PreApprovalReport, failOn: CheckCategory[]): CheckResult {
  const servers = (hold: Hold) => report.servers.filter((s) => holdOf(s) === hold).map((s) => serverEntry(s, report));
  const inFullBlock = new Set(report.fullBlock.flatMap((b) => b.files));
  const blocked: CheckResult['blocked'] = [
    ...report.fullBlock.map((b): FullBlockEntry => ({
      kind: 'full-block',
      reason: b.reason,
      files: b.files,
      next: 'nothing of this project may run until it is fixed',
    })),
    // A source that exists but cannot be used is not an empty one: it fails closed, in any scope.
    ...report.sources
      .filter((s) => (s.status === 'unreadable' || s.status === 'invalid') && !inFullBlock.has(s.file))
      .map((s): SourceEntry => ({
        kind: 'source',
        source: s.source,
        file: s.file,
        scope: s.scope,
        status: s.status,
        problems: s.problems,
        next: `MCP Gate cannot tell what it declares: fix or remove ${s.source}`,
      })),
    ...servers('blocked'),
  ];
  const preapproval: CheckResult['preapproval'] = [
    ...pre.attempts.map((a): AttemptEntry => ({
      kind: 'attempt',
      ...a,
      next: `remove ${a.key} from ${a.file}: MCP Gate ignores it, but ${a.agent} obeys it where MCP Gate is not in front of it`,
    })),
    ...pre.problems.map((p): UnreadableEntry => ({
      kind: 'unreadable',
      problem: p,
      next: 'MCP Gate cannot tell what it pre-approves: fix or remove it',
    })),
  ];
  const r = { pending: servers('pending'), changed: servers('changed'), blocked, preapproval };
  const health = report.store.health;
  const error =
    health.status === 'corrupt'
      ? `the approval store ${report.store.file} cannot be read (${health.problem}), so what is approved is unknown`
      : undefined;
  const exitCode = error ? 1 : failOn.reduce((code, c) => code + (r[c].length ? CHECK_BITS[c] : 0), 0);
  return {
    project: report.project,
    ok: exitCode === 0,
    exitCode,
    failOn,
    store: report.store,
    escapeHatch: report.escapeHatch,
    ...(error ? { error } : {}),
    ...r,
  };
}

function serverLine(e: ServerEntry): string {
  return `${escapeText(e.name)}  ${escapeText(e.source)}:${e.line}  ${e.scope} scope  ${stateWords(e)}: ${escapeText(e.reason)} — ${escapeText(e.next)}`;
}

function entryLine(e: CheckResult[CheckCategory][number]): string {
  return e.folder ? `in ${escapeText(e.folder)}/: ${entryText(e)}` : entryText(e);
}

function entryText(e: CheckResult[CheckCategory][number]): string {
  switch (e.kind) {
    case 'server':
      return serverLine(e);
    case 'full-block':
      return `the whole project: ${escapeText(e.reason)} (files: ${e.files.map(escapeText).join(', ')}) — ${e.next}`;
    case 'source':
      return `${escapeText(e.source)}  ${e.scope} scope  ${e.status}: ${e.problems.map(escapeText).join('; ')} — ${escapeText(e.next)}`;
    case 'attempt':
      return `${escapeText(preApprovalLine(e))} — ${escapeText(e.next)}`;
    case 'unreadable':
      return `could not read: ${escapeText(e.problem)} — ${e.next}`;
  }
}

const HEADINGS: Record<CheckCategory, string> = {
  pending: 'waiting for a first review',
  changed: 'changed since approval',
  blocked: 'rejected, blocked, or cannot be read',
  preapproval: 'pre-approval attempts for other agents',
};

/** The check as a person reads it: the project and store, each entry under its category, then the summary. */
export function checkText(r: CheckResult): string {
  const health =
    r.store.health.status === 'missing' ? 'nothing approved yet' : r.store.health.status === 'ok' ? 'readable' : 'CANNOT BE READ';
  const L = [`project ${escapeText(r.project)}`, `store   ${escapeText(r.store.file)} (${health})`];
  if (r.folders?.length) L.push(`folders ${r.folders.map(escapeText).join(', ')} (projects of their own: checked too)`);
  if (r.skipped?.length) L.push(`skipped ${r.skipped.map(escapeText).join(', ')} (--skip: not checked)`);
  if (r.escapeHatch) L.push('WARNING MCP_GATE_ALLOW_PROJECT=1 is set: every repository server counts as approved without review');
  for (const c of CHECK_CATEGORIES) {
    if (!r[c].length) continue;
    L.push('', `${c} (${r[c].length}, ${HEADINGS[c]}${r.failOn.includes(c) ? '' : '; not in --fail-on, reported only'}):`);
    for (const e of r[c]) L.push(`  ${entryLine(e)}`);
  }
  const failing = r.failOn.filter((c) => r[c].length);
  const why = r.error
    ? `could not evaluate: ${escapeText(r.error)}`
    : failing.length
      ? failing.map((c) => `${CHECK_BITS[c]} ${c}`).join(' + ')
      : 'nothing to fail on';
  L.push(
    '',
    `check: ${CHECK_CATEGORIES.map((c) => `${r[c].length} ${c}`).join(', ')}; fails on ${r.failOn.join(', ')}; exit ${r.exitCode} (${why})`,
  );
  return L.join('\n');
}

/**
 * The root's result with every nested project's entries added (each named with its folder) and the exit code over
 * all of them. A walk that stops at its bound fails closed: what the folders past it declare is unknown.
 */
export function withNestedProjects(
  root: CheckResult,
  input: GateInput,
  failOn: CheckCategory[],
  skip: ReadonlySet<string> = new Set(),
): CheckResult {
  const nested = nestedProjects(root.project, MAX_PROJECT_WALK, skip);
  const rel = (dir: string) => path.relative(root.project, dir).split(path.sep).join('/');
  const r: CheckResult = { ...root, folders: [], skipped: nested.skipped.map(rel) };
  for (const dir of nested.folders) {
    const folder = rel(dir);
    const sub = checkResult(evaluateGate({ ...input, projectDir: dir }), preApprovalAttempts(dir), failOn);
    r.folders!.push(folder);
    for (const c of CHECK_CATEGORIES) (r[c] as { folder?: string }[]).push(...sub[c].map((e) => ({ ...e, folder })));
    if (sub.error && !r.error) r.error = sub.error;
  }
  for (const problem of nested.unreadable)
    r.preapproval.push({
      kind: 'unreadable',
      problem: `a folder of the checkout cannot be listed (${problem}): what it declares or pre-approves is unknown`,
      next: 'make it readable to the user who runs the check, or remove it',
    });
  if (nested.truncated)
    r.preapproval.push({
      kind: 'unreadable',
      problem: `the checkout holds more than ${MAX_PROJECT_WALK.toLocaleString('en-US')} files and folders outside node_modules, more than MCP Gate walks to find every folder that declares or pre-approves servers`,
      next: 'check a smaller folder of it (--project)',
    });
  r.exitCode = r.error ? 1 : failOn.reduce((code, c) => code + (r[c].length ? CHECK_BITS[c] : 0), 0);
  r.ok = r.exitCode === 0;
  return r;
}

/**
 * The real paths of `--skip` folders: each a folder of the checkout below its root. A name that is not one is a
 * usage error (a typo would otherwise skip nothing, or a link would skip a folder the person did not name).
 */
export function skipFolders(project: string, names: readonly string[] = []): Set<string> {
  const root = fs.realpathSync(project);
  const skip = new Set<string>();
  for (const name of names) {
    const given = path.resolve(root, name);
    let real: string;
    try {
      real = fs.realpathSync(given);
    } catch {
      throw new UsageError(`--skip ${JSON.stringify(name)}: no such folder in ${root}`);
    }
    const rel = path.relative(root, real);
    if (real !== given || !rel || rel.startsWith('..') || path.isAbsolute(rel) || !fs.statSync(real).isDirectory())
      throw new UsageError(`--skip ${JSON.stringify(name)}: not a folder below the checkout's root ${root} (links are not followed)`);
    skip.add(real);
  }
  return skip;
}

export async function checkCommand(ctx: Ctx): Promise<number> {
  const { o, input, noPositionals } = ctx;
  noPositionals('check');
  const failOn = failOnCategories(o['fail-on']);
  // With --team: the team file's signed approvals count, checked as `approvals import` checks them, on a private
  // copy of the store (nothing is written to yours).
  const team = o.team !== undefined ? await withTeamApprovals(ctx, o.team) : undefined;
  try {
    const report = evaluateGate(team?.input ?? input);
    const skip = skipFolders(report.project, o.skip);
    const r = withNestedProjects(checkResult(report, preApprovalAttempts(report.project), failOn), team?.input ?? input, failOn, skip);
    if (team) {
      r.team = { file: path.resolve(o.team!), entries: team.outcomes };
      r.store = { ...r.store, file: team.ownStore };
    }
    out(o.json ? JSON.stringify(r, null, 2) : `${team ? `${importText(path.resolve(o.team!), team.outcomes)}\n\n` : ''}${checkText(r)}`);
    if (r.error) err(`mcp-gate: ${r.error}`);
    return r.exitCode;
  } finally {
    team?.done();
  }
}
