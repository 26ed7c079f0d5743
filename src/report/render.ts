// Text renderings of gate reports, shared by every front end (the CLI prints them; VS Code shows them in its
// approve modal and documents; the panel's model takes the one-line summary and state label): the server table,
// one server's full definition (escaped, untruncated) with its launch plan, closure, grants, sandbox and diff,
// and the doctor report. Pure functions of their inputs: the report, the user's policy, and — for the sandbox
// lines — the HOME the sandbox hides and whether bubblewrap starts here, which the front end passes (this module
// reads no home folder and starts no process).
import { describeContainment } from '../host/sandbox/decision';
import type { SandboxProbe } from '../host/sandbox/sandbox';
import { escapeLines, escapeText, quote, renderValue } from '../text/escape';
import { diffDefinitions, diffTools, refusedFileDiff, type DefinitionDiff } from '../trust/approval/diff';
import { refusalWords } from '../trust/approval/workspace-manifest';
import { canonicalJson, type PinnedDefinition } from '../trust/plan/digest';
import type { GateReport, ServerReport } from '../trust/report';
import { preApprovalLine, type PreApprovalReport } from '../trust/sources/preapproval';
import { definitionChanged, isWaiting } from '../trust/approval/states';
import { NEUTRAL_WORDS, type FrontEndWords } from '../trust/words';
import { grantsFor, type UserPolicy } from '../policy/user-policy';
import { formatOrigin } from '../policy/names';
import { ruleText } from '../policy/rules';
import { decideStart } from '../policy/start';
import { serverIdentity } from '../host/identity';
import { dependencyCount, lockSummary, type NpmLock } from '../trust/packages/npm-lock';
import type { ImagePin } from '../trust/packages/image-pin';
import { stateWords } from '../trust/approval/gate-state';
import { count as counted } from '../text/count';
import { exactTime } from '../text/time';
import { lockDocument, minAgeVerdict, type MinAge } from './lock-text';
import { riskLine } from './risk-text';

export { riskLine } from './risk-text';
import { NOT_PINNED, packageLaunchOf, type ImageLaunch } from '../trust/plan/launchers';

export function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join('  ')).join('\n');
}

/** One line saying what the server runs or reaches, every argument quoted and escaped. */
export function summary(s: ServerReport): string {
  const d = s.definition;
  if (!d) return '(invalid entry)';
  if (d.type === 'http') return `url ${quote(d.url!)}`;
  return [d.command!, ...d.args].map(quote).join(' ');
}

/** The state as a person reads it (src/trust/approval/gate-state.ts); JSON output keeps the state's code. */
export function stateLabel(s: ServerReport): string {
  return stateWords(s);
}

export function fullBlockText(report: GateReport): string {
  return report.fullBlock.map((b) => `BLOCKED: ${escapeText(b.reason)}\n  files: ${b.files.map(escapeText).join(', ')}`).join('\n');
}

export function listText(report: GateReport): string {
  const lines: string[] = [`project ${escapeText(report.project)}`];
  if (report.escapeHatch) lines.push('WARNING: MCP_GATE_ALLOW_PROJECT=1 is set: every repository server is trusted without review');
  if (report.fullBlock.length) lines.push(fullBlockText(report));
  if (report.servers.length === 0) lines.push('no MCP servers declared');
  else {
    const rows = [['STATE', 'SCOPE', 'SOURCE', 'SERVER', 'WHAT']];
    for (const s of report.servers)
      rows.push([stateLabel(s), s.gated ? s.scope : 'user', escapeText(s.source), escapeText(s.name), summary(s)]);
    lines.push(table(rows));
  }
  return lines.join('\n');
}

/** Changed files listed one by one (a whole-workspace server after a `git pull` may change thousands). */
export const MAX_LISTED_FILE_CHANGES = 500;

function diffText(diff: DefinitionDiff): string {
  const lines: string[] = [];
  for (const f of diff.fields) {
    lines.push(`  field ${f.field}:`);
    lines.push(`    - ${f.before === undefined ? '(absent)' : renderValue(f.before, '      ')}`);
    lines.push(`    + ${f.after === undefined ? '(absent)' : renderValue(f.after, '      ')}`);
  }
  if (diff.files.length) {
    const n = (k: string) => diff.files.filter((f) => f.change === k).length;
    const count = (x: number) => `${x} file${x === 1 ? '' : 's'}`;
    lines.push(
      `  ${count(diff.files.length)}: ${n('added')} added, ${n('removed')} removed, ${n('changed')} changed${diff.files.length > MAX_LISTED_FILE_CHANGES ? ` (the first ${MAX_LISTED_FILE_CHANGES} listed)` : ''}`,
    );
  }
  for (const f of diff.files.slice(0, MAX_LISTED_FILE_CHANGES)) {
    lines.push(
      `  file ${escapeText(f.path)}: ${f.change}${f.before ? ` (was sha256 ${f.before.slice(0, 12)})` : ''}${f.after ? ` (now sha256 ${f.after.slice(0, 12)})` : ''}`,
    );
    for (const h of f.hunks ?? []) {
      lines.push(`    @@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`);
      for (const l of h.lines) lines.push(`    ${escapeText(l)}`);
    }
    if (f.tooLarge) lines.push('    (changed, too large to show line by line: compare the file yourself before approving)');
    else if (!f.hunks && f.change === 'changed') lines.push('    (content not kept: binary or larger than 64 KiB)');
  }
  const rest = diff.files.slice(MAX_LISTED_FILE_CHANGES);
  if (rest.length)
    lines.push(
      `  … and ${rest.length} more file${rest.length === 1 ? '' : 's'} (${rest
        .slice(0, 3)
        .map((f) => escapeText(f.path))
        .join(', ')}, …): every one of them re-gates this server`,
    );
  return lines.join('\n');
}

/** Where the grants preview looks: the report's project (a real path) and the user's policy. */
export interface GrantsContext {
  project: string;
  policy: UserPolicy;
  /** The HOME the sandbox hides (the front end's machine's). */
  home: string;
  /** Whether bubblewrap can start a sandbox here (the front end probes it: src/host/sandbox/sandbox-probe.ts sandboxAvailable). */
  sandbox: SandboxProbe;
  /** The front end's wording for the next step. */
  words?: FrontEndWords;
  /** The approval store's folder: a file the load guard refused is shown against the content the approval kept. */
  storeDir?: string;
}

/**
 * "grants that would apply": every rule, secret (name and where it is bound, never a value) and local-development
 * exception of the user's policy that this server would get, each with its file:line; "none" when none. Entries
 * that name the server but are for another scope or project are listed as not applying.
 */
function grantsText(s: ServerReport, ctx: GrantsContext): string[] {
  const who = serverIdentity(s, ctx.project);
  let host: string | undefined;
  if (s.definition?.type === 'http') {
    try {
      host = new URL(s.definition.url!).hostname.replace(/^\[|\]$/g, '');
    } catch {
      host = undefined;
    }
  }
  const g = grantsFor(who, ctx.policy, host);
  const L: string[] = [];
  const as = who.scope === 'user' ? `your user-scope server ${quote(s.name)}` : `a repository server of ${escapeText(who.project)}`;
  const count = g.rules.length + g.secrets.length + (g.exception ? 1 : 0);
  L.push(`  grants that would apply (to ${as}, from your user policy ${escapeText(ctx.policy.file)}):${count ? '' : ' none'}`);
  for (const r of g.rules) L.push(`    rule      ${escapeText(ruleText(r))}  ${escapeText(formatOrigin(r.origin))} (rules[${r.index}])`);
  for (const e of g.secrets) {
    const where =
      e.bind === 'header' ? `header ${e.as ?? 'Authorization'}${e.as === undefined ? ' (Bearer)' : ''}` : `env ${e.as ?? e.name}`;
    L.push(`    secret    ${e.name} → ${where}, needs secret.use.${e.name}  ${escapeText(formatOrigin(e.origin))} (secrets[${e.index}])`);
  }
  if (g.exception) {
    const x = g.exception;
    const what =
      [x.allowLoopback ? 'allowLoopback' : '', x.allowPrivate ? 'allowPrivate' : ''].filter(Boolean).join(', ') || 'nothing switched on';
    L.push(`    exception local development: ${what}  ${escapeText(formatOrigin(x.origin))} (localExceptions[${x.index}])`);
  }
  for (const n of g.notApplying) {
    const why =
      n.qualifier === undefined
        ? 'it has no "project", so it is for your user-scope servers only'
        : `its "project" ${quote(n.qualifier)} is not this server's`;
    L.push(`    not applying: ${escapeText(n.what)}  ${escapeText(formatOrigin(n.origin))}: ${why}`);
  }
  if (count === 0 && who.scope === 'repository') {
    L.push(
      `    (rules, secrets and exceptions without "project" are for your user-scope servers; one with "project": ${quote(who.project)} grants this server)`,
    );
  }
  if (ctx.policy.problems.length)
    L.push(
      `    your policy has ${counted(ctx.policy.problems.length, 'invalid item')}, so nothing is allowed until they are fixed (${(ctx.words ?? NEUTRAL_WORDS).doctor})`,
    );
  return L;
}

/**
 * The launch plan and its execution closure: what will be executed and every workspace file it can load. For a
 * server never decided, small text files are shown in full (escaped, nothing cut); larger or binary ones by path,
 * size and digest. For a changed server the diff below says what changed.
 */
function planText(s: ServerReport): string[] {
  const L: string[] = [];
  const plan = s.pinned?.plan;
  const pinned = s.pinned!.pinned;
  if (plan) {
    L.push('  launch plan (what will be executed):');
    L.push(
      `    program   ${plan.executable ? escapeText(plan.executable) : `(none: ${escapeText(plan.notFound ?? '')})`}${plan.executable && plan.executable !== plan.command ? `  (for ${quote(plan.command)})` : ''}`,
    );
    L.push(`    arguments ${plan.args.length ? plan.args.map(quote).join(' ') : '(none)'}`);
    L.push(`    folder    ${escapeText(plan.cwd)}${plan.cwdInWorkspace ? ` (workspace ${escapeText(plan.cwdInWorkspace)})` : ''}`);
    const env = Object.entries(plan.env);
    if (env.length) L.push(`    variables ${env.map(([k, v]) => `${escapeText(k)}=${quote(v)}`).join(' ')}`);
  }
  const files = Object.entries(pinned.files);
  const bytes = files.reduce((n, [, f]) => n + f.size, 0);
  if (!plan && !files.length) return L;
  if (pinned.guarded) {
    L.push(
      `  files it names (content pinned): ${counted(files.length, 'file')}, ${counted(bytes, 'byte')}; every other file it loads is checked when it loads against the workspace as it is when you approve (the load guard in each of its Node and Python processes: a file changed or added since is refused and the server stopped)`,
    );
    for (const why of pinned.guarded) L.push(`    checked when it loads: ${escapeText(why)}`);
  } else if (pinned.snapshot) {
    const when =
      s.record?.manifest && s.record.pinned && s.record.digest === s.pinned!.digest
        ? `as approved on ${exactTime(s.record.manifest.takenAt)} (${counted(s.record.manifest.files, 'file')})`
        : 'as it is when you approve';
    L.push(
      `  runs the workspace ${when}: a read-only copy, never the live files; later edits reach it when you review them and approve it again`,
    );
    for (const why of pinned.snapshot) L.push(`    why not checked file by file: ${escapeText(why)}`);
    L.push(`  files it names (content pinned): ${counted(files.length, 'file')}, ${counted(bytes, 'byte')}`);
  } else
    L.push(
      `  files it can load (every workspace file it may run or load; content pinned): ${counted(files.length, 'file')}, ${counted(bytes, 'byte')}`,
    );
  const roots = plan?.closure.roots ?? (pinned.roots ?? []).map((p) => ({ path: p, why: '' }));
  if (plan && roots.length && !roots.some((r) => r.path === '.') && !pinned.guarded)
    L.push('    computed: every load its files make names a literal path (read with a parser), so these folders are all it can load');
  for (const r of roots) {
    L.push(`    folder ${escapeText(r.path === '.' ? '. (the whole workspace)' : `${r.path}/`)}${r.why ? `  — ${escapeText(r.why)}` : ''}`);
  }
  const full = !s.record; // first review: read it all
  for (const [p, f] of files) {
    const text = s.pinned!.texts[p];
    L.push(
      `    file ${escapeText(p)}  ${f.size} bytes  sha256 ${f.sha256}${text === undefined ? '  (not shown: binary, over 64 KiB, or past the 256 KiB shown per server)' : ''}`,
    );
    if (full && text !== undefined) for (const line of text.split('\n')) L.push(`      | ${escapeText(line)}`);
  }
  for (const [p, t] of Object.entries(pinned.links ?? {})) L.push(`    link ${escapeText(p)} -> ${escapeText(t)}`);
  return L;
}

/**
 * Everything a person needs to decide about one server, with the grants that would apply to it. Nothing is
 * truncated; hidden characters are escaped.
 */
/**
 * What a package launcher downloads and what of it is pinned: the lock being approved (`shown`), else the one
 * approved, else that it is resolved at approval; for a launcher MCP Gate cannot pin, "not pinned" and why.
 */
export function packageText(s: ServerReport, shown?: NpmLock, minAge?: MinAge, shownImage?: ImagePin): string[] {
  const plan = s.pinned?.plan;
  const p = plan ? packageLaunchOf(plan.command, plan.args) : undefined;
  if (!p) return [];
  if (p.kind === 'unpinned') return [`  package     ${escapeText(p.what)} (${escapeText(p.launcher)}): ${escapeText(p.why)}`];
  if (p.kind === 'image') return imageText(s, p, shownImage);
  const lock = shown ?? (s.record?.decision === 'approved' && s.record.lock?.spec === p.spec ? s.record.lock : undefined);
  if (!lock) {
    return [
      `  package     ${quote(p.spec)} (${escapeText(p.launcher)}): pinned at approval to an exact version, its integrity and its dependency tree${s.gated ? '' : ' — not for a user server: it runs as written (not pinned: the bytes this downloads can change)'}`,
    ];
  }
  const n = dependencyCount(lock);
  const L = [
    `  package     ${escapeText(lockSummary(lock))}${shown ? '' : ' (approved)'}`,
    `              ${quote(p.spec)} from ${escapeText(lock.registry)}; runs ${escapeText(lock.bin.name)} (${escapeText(lock.bin.file)}) from MCP Gate's package cache, never re-resolved`,
    `              integrity ${escapeText(lock.integrity)}`,
    `              tree ${escapeText(lock.tree)} (${n + 1} package${n ? 's' : ''}); lock ${escapeText(lock.digest)}`,
  ];
  const verdict = shown ? minAgeVerdict(lock, minAge) : undefined;
  if (verdict) L.push(`              ${escapeText(verdict)}`);
  if (lock.installScripts.length)
    L.push(
      `              install scripts NOT run: ${lock.installScripts.map(escapeText).join(', ')} (a package that needs them may fail to start)`,
    );
  return L;
}

/** The image approved for this container launch, when it is the one the definition names. */
function approvedImage(s: ServerReport, p: ImageLaunch): ImagePin | undefined {
  const r = s.record;
  return r?.decision === 'approved' && r.image?.image === p.image && r.image.runtime === p.runtime ? r.image : undefined;
}

/** A container launch by tag: the digest being approved (`shown`), else the one approved, else that it is resolved at approval. */
function imageText(s: ServerReport, p: ImageLaunch, shown?: ImagePin): string[] {
  const head = `  image       ${quote(p.image)} (${escapeText(p.launcher)})`;
  if (!s.gated) return [`${head}: not for a user server: it runs as written (${NOT_PINNED})`];
  const pin = shown ?? approvedImage(s, p);
  if (!pin) return [`${head}: pinned at approval to its content digest (name@sha256:…), read from ${escapeText(p.runtime)}`];
  if (!pin.pinned) return [`${head}: ${escapeText(pin.why ?? NOT_PINNED)}${shown ? '' : ' (approved so)'}`];
  return [
    `${head}: pinned${shown ? '' : ' (approved)'} to ${escapeText(pin.pinned)}`,
    `              read from ${escapeText(pin.runtime)} at ${escapeText(pin.resolvedAt)}; every start runs that digest, never the tag (a re-tagged image does not run)`,
  ];
}

export function serverText(
  s: ServerReport,
  grants?: GrantsContext,
  shown?: { lock?: NpmLock; minAge?: MinAge; image?: ImagePin; riskAbove?: boolean },
  words: FrontEndWords = grants?.words ?? NEUTRAL_WORDS,
): string {
  const lines: string[] = [];
  lines.push(`server ${quote(s.name)}`);
  lines.push(
    `  declared in ${escapeText(s.file)}:${s.position.line}:${s.position.column} (${s.scope} scope${s.importedBy.length ? `, imported by ${s.importedBy.map(escapeText).join(', ')}` : ''})`,
  );
  lines.push(`  state       ${stateLabel(s)}: ${escapeText(s.reason)}`);
  // `riskAbove`: the risk headline is already the first line of what shows this (VS Code's review): not twice.
  const risk = shown?.riskAbove ? undefined : riskLine(s, shown?.lock);
  if (risk) lines.push(`  ${risk}`);
  if (s.definition) {
    lines.push(s.definition.type === 'http' ? `  connects to ${quote(s.definition.url!)}` : `  runs        ${summary(s)}`);
    if (s.definition.cwd) lines.push(`  in folder   ${quote(s.definition.cwd)}`);
  }
  lines.push('  definition as written:');
  lines.push('  ' + renderValue(s.raw, '  '));
  if (s.pinned) {
    lines.push(...planText(s));
    lines.push(...packageText(s, shown?.lock, shown?.minAge, shown?.image));
    if (s.pinned.pinned.envFile)
      lines.push(
        `  envFile ${escapeText(s.pinned.pinned.envFile.path)} ${s.pinned.pinned.envFile.missing ? '(missing)' : `sha256 ${s.pinned.pinned.envFile.sha256}`}`,
      );
    if (s.pinned.pinned.inputs.length) lines.push('  inputs it asks for:\n  ' + renderValue(s.pinned.pinned.inputs, '  '));
    lines.push(`  digest      ${s.pinned.digest}`);
  }
  if (definitionChanged(s)) {
    lines.push('  changed since approval:');
    lines.push(diffText(diffDefinitions(s.record!, s.pinned!)));
  }
  const refused = s.record?.guardRefused && grants?.storeDir ? refusedFileDiff(grants.storeDir, grants.project, s.record) : undefined;
  if (refused && s.state === 'approval-changed') {
    lines.push(`  refused when it loaded (${refusalWords(s.record!.guardRefused!)}): approved ↔ now`);
    lines.push(diffText({ fields: [], files: [refused] }));
  }
  if (s.record?.toolsChanged && s.record.tools) {
    const d = diffTools(s.record.tools.snapshot, s.record.toolsChanged.snapshot);
    lines.push(`  tools changed since approval (seen ${exactTime(s.record.toolsChanged.observedAt)}):`);
    for (const n of d.added) lines.push(`    + tool ${quote(n)}`);
    for (const n of d.removed) lines.push(`    - tool ${quote(n)}`);
    for (const c of d.changed) {
      lines.push(`    ~ tool ${quote(c.name)}`);
      for (const f of c.fields)
        lines.push(
          `        ${f.field}:\n          - ${renderValue(f.before, '            ')}\n          + ${renderValue(f.after, '            ')}`,
        );
    }
    if (d.instructions)
      lines.push(
        `    ~ instructions:\n          - ${renderValue(d.instructions.before ?? '', '            ')}\n          + ${renderValue(d.instructions.after ?? '', '            ')}`,
      );
  }
  if (grants) {
    lines.push(...grantsText(s, grants));
    if (s.definition?.type === 'stdio' && s.state !== 'blocked') {
      const c = describeContainment(s, decideStart(grants.policy, serverIdentity(s, grants.project), grants.home), () => grants.sandbox);
      if (c.length) lines.push(`  sandbox     ${escapeText(c[0])}`, ...c.slice(1).map((l) => `              ${escapeText(l)}`));
    }
  } else lines.push(`  grants that would apply: not computed here (${words.showGrants(s.name)})`);
  return lines.join('\n');
}

/** The administrator's layer in one line: none, in force (what it holds), or unusable. */
function adminLine(report: GateReport): string {
  const a = report.adminPolicy;
  if (a.status === 'absent') return `no administrator's policy (${escapeText(a.file)} does not exist)`;
  if (a.status === 'invalid')
    return `${escapeText(a.file)} CANNOT BE USED: ${a.problems.map(escapeText).join('; ')} (a full block until an administrator fixes it)`;
  const rules = Array.isArray(a.rules) ? a.rules.length : 0;
  const parts = [
    `${rules} ${rules === 1 ? 'rule' : 'rules'} that your rules cannot loosen`,
    `${a.blockedServers.length} blocked ${a.blockedServers.length === 1 ? 'server' : 'servers'}`,
    `escape hatch ${a.escapeHatch ? 'allowed' : 'off'}`,
  ];
  if (a.sandboxRequired) parts.push('sandbox required for every local server');
  if (a.packages.minReleaseAgeDays !== undefined) parts.push(`npm versions at least ${a.packages.minReleaseAgeDays} days old`);
  if (a.packages.registries) parts.push(`npm only from ${a.packages.registries.map(escapeText).join(', ')}`);
  return `${escapeText(a.file)} in force: ${parts.join(', ')}`;
}

export function doctorText(
  report: GateReport,
  storeHow: string,
  words: FrontEndWords = NEUTRAL_WORDS,
  storeNotes: readonly string[] = [],
): string {
  const L: string[] = [];
  L.push(`project   ${escapeText(report.project)}`);
  const h = report.store.health;
  const health =
    h.status === 'corrupt'
      ? `CORRUPT: ${escapeText(h.problem)} — nothing is approved until you approve again${h.backup ? `; the unreadable file is kept as ${escapeText(h.backup)}` : ''}`
      : h.status === 'missing'
        ? 'nothing decided yet'
        : 'readable';
  L.push(`store     ${escapeText(report.store.file)} (${storeHow}; ${health})`);
  for (const note of storeNotes) L.push(`WARNING   ${escapeText(note)}`);
  if (report.escapeHatch) L.push('WARNING   MCP_GATE_ALLOW_PROJECT=1 is set: every repository server is trusted without review');
  L.push(`admin     ${adminLine(report)}`);
  if (report.escapeHatchRefused) L.push(`note      ${escapeText(report.escapeHatchRefused)}`);
  if (report.fullBlock.length) {
    L.push('');
    L.push('FULL BLOCK: no tool of this project may be called until this is fixed');
    for (const b of report.fullBlock) L.push(`  - ${escapeText(b.reason)}\n    files: ${b.files.map(escapeText).join(', ')}`);
  }
  L.push('');
  L.push('sources:');
  const present = report.sources.filter((s) => s.status !== 'missing');
  if (present.length === 0) L.push('  (none of the known configuration files exist)');
  for (const s of present) {
    L.push(
      `  ${s.status.padEnd(10)} ${s.scope.padEnd(10)} ${escapeText(s.file)}  (${s.kind}, ${s.servers} server${s.servers === 1 ? '' : 's'}${s.importedBy.length ? `, imported by ${s.importedBy.map((i) => `${escapeText(i.file)} [${i.scope}]`).join(', ')}` : ''})`,
    );
    for (const p of s.problems) L.push(`             ${escapeText(p)}`);
  }
  if (report.importers.length) {
    L.push('');
    L.push('imports:');
    for (const i of report.importers) L.push(`  ${escapeText(i.file)}:${i.position.line} (${i.scope}) imports ${i.kinds.join(', ')}`);
    for (const t of report.missingImportTargets)
      L.push(`  missing import target: ${escapeText(t.file)} (${t.kind}, imported by ${t.importedBy.map(escapeText).join(', ')})`);
  }
  if (report.ignoredGrants.length) {
    L.push('');
    L.push('ignored (a repository cannot grant):');
    for (const g of report.ignoredGrants) L.push(`  ${escapeText(g.file)}: "${g.key}"`);
  }
  L.push('');
  L.push('servers:');
  if (report.servers.length === 0) L.push('  (none declared)');
  for (const s of report.servers) {
    L.push(
      `  ${escapeText(s.name)}  [${stateLabel(s)}]  ${s.scope} scope${s.gated ? ' (gated)' : ' (trusted)'}, ${escapeText(s.source)}:${s.position.line}:${s.position.column}${s.importedBy.length ? `, imported by ${s.importedBy.map(escapeText).join(', ')}` : ''}`,
    );
    L.push(`      ${escapeText(s.reason)}`);
  }
  const review = report.servers.filter(isWaiting);
  if (review.length) {
    L.push('');
    L.push(
      `needs review (${review.length}): ${review.map((s) => `${escapeText(s.name)} (${s.state === 'pending' ? 'never decided' : 'changed since approval'})`).join(', ')}`,
    );
    L.push(`  ${words.reviewAll}`);
  }
  if (report.agentFiles.length) {
    L.push('');
    L.push('agent and prompt files (not gated: they run no command; from this repository):');
    for (const a of report.agentFiles) L.push(`  ${escapeText(a.path)}  (${a.what}, from this repository)`);
  }
  return L.join('\n');
}

function packageJson(s: ServerReport) {
  const plan = s.pinned?.plan;
  const p = plan ? packageLaunchOf(plan.command, plan.args) : undefined;
  if (!p) return undefined;
  if (p.kind === 'unpinned') return { launcher: p.launcher, what: p.what, pinned: false, why: p.why };
  if (p.kind === 'image') {
    const pin = s.gated ? approvedImage(s, p) : undefined;
    return {
      launcher: p.launcher,
      image: p.image,
      pinned: Boolean(pin?.pinned),
      ...(pin?.pinned ? { reference: pin.pinned, resolvedAt: pin.resolvedAt } : {}),
      ...(pin?.why ? { why: pin.why } : !s.gated ? { why: NOT_PINNED } : {}),
    };
  }
  const l = s.record?.decision === 'approved' && s.record.lock?.spec === p.spec ? s.record.lock : undefined;
  return {
    launcher: p.launcher,
    spec: p.spec,
    pinned: Boolean(l),
    ...(l
      ? {
          name: l.name,
          version: l.version,
          integrity: l.integrity,
          registry: l.registry,
          dependencies: dependencyCount(l),
          tree: l.tree,
          lock: l.digest,
        }
      : {}),
  };
}

export function serverJson(s: ServerReport) {
  return {
    name: s.name,
    source: s.source,
    file: s.file,
    line: s.position.line,
    column: s.position.column,
    scope: s.scope,
    gated: s.gated,
    importedBy: s.importedBy,
    state: s.state,
    reason: s.reason,
    viaEscapeHatch: s.viaEscapeHatch,
    disabled: s.disabled,
    digest: s.pinned?.digest,
    definition: s.definition,
    package: packageJson(s),
  };
}

export function reportJson(report: GateReport, storeHow: string) {
  return {
    project: report.project,
    blocked: report.fullBlock.length > 0,
    fullBlock: report.fullBlock,
    escapeHatch: report.escapeHatch,
    admin: {
      file: report.adminPolicy.file,
      status: report.adminPolicy.status,
      problems: report.adminPolicy.problems,
      blockedServers: report.adminPolicy.blockedServers,
      escapeHatch: report.adminPolicy.escapeHatch,
      sandboxRequired: report.adminPolicy.sandboxRequired,
      packages: report.adminPolicy.packages,
    },
    store: { ...report.store, how: storeHow },
    sources: report.sources.filter((s) => s.status !== 'missing'),
    importers: report.importers,
    missingImportTargets: report.missingImportTargets,
    ignoredGrants: report.ignoredGrants,
    servers: report.servers.map(serverJson),
    agentFiles: report.agentFiles,
  };
}

/** Repository entry fields that speak about containment: never obeyed (the user owns the sandbox), so reported. */
const REPOSITORY_SANDBOX_FIELDS = [
  'sandbox',
  'sandboxEnabled',
  'sandboxed',
  'sandboxOptions',
  'containment',
  'isolation',
  'network',
  'allowNetwork',
];

/**
 * The doctor's sandbox section: whether bubblewrap can start here, how each local server would run (contained,
 * opted out, cannot start), the user's sandbox settings that cannot be used, and repository fields that try to
 * set the sandbox (ignored: only the user's settings decide; a repository cannot loosen them).
 */
export function sandboxText(report: GateReport, policy: UserPolicy, home: string, p: SandboxProbe): string {
  const L: string[] = ['sandbox (local servers; settings from user scope only):'];
  L.push(
    `  bubblewrap ${p.ok ? `${escapeText(p.bwrap)} ${escapeText(p.version)}: available` : `UNAVAILABLE: ${escapeText(p.reason)}; fix: ${escapeText(p.install ? `\`${p.install}\`` : p.fix)} — repository servers do not start until it is fixed`}`,
  );
  for (const problem of policy.sandbox.problems)
    L.push(`  INVALID  ${escapeText(problem)} — no server that should be contained starts until it is fixed`);
  for (const s of report.servers) {
    if (s.definition?.type !== 'stdio' || s.state === 'blocked') continue;
    const c = describeContainment(s, decideStart(policy, serverIdentity(s, report.project), home), () => p);
    const net = c.find((l) => l.startsWith('network: '));
    // The fix is said once, on the bubblewrap line above; each server only says that it waits for it.
    const line = c[0]?.startsWith('contained')
      ? `contained (bubblewrap); ${net ? net.replace(/ — .*/, '') : ''}`
      : !p.ok && c[0]?.startsWith('cannot start here')
        ? 'cannot start here: it must run contained (see the bubblewrap line above)'
        : c[0];
    if (c.length) L.push(`  ${escapeText(s.name)} (${escapeText(s.source)}): ${escapeText(line)}`);
    // An uncontained server: whether a stop reaches every process it starts (its own PID namespace, or not here).
    const own = c.find((l) => l.startsWith('its own processes: '));
    if (own) L.push(`    ${escapeText(own)}`);
    const fields = Object.keys(s.raw)
      .filter((k) => REPOSITORY_SANDBOX_FIELDS.includes(k))
      .sort();
    if (s.gated && fields.length)
      L.push(
        `    ignored: ${fields.map((f) => `"${f}"`).join(', ')} in ${escapeText(s.source)} — a repository cannot set its own sandbox; your settings decide`,
      );
  }
  return L.join('\n');
}

export function policyText(policy: UserPolicy, valueSet: (name: string) => boolean, words: FrontEndWords = NEUTRAL_WORDS): string {
  const L: string[] = ['policy (user scope only; a repository cannot grant):'];
  L.push(`  file     ${escapeText(policy.file)}`);
  L.push(`  rules    ${policy.rules.length}${policy.rules.length === 0 ? ' (no rule: everything is denied)' : ''}`);
  for (const e of policy.secrets) {
    L.push(
      `  secret   ${e.name} → ${e.to} as ${e.bind}${e.as ? ` ${e.as}` : ''}${e.project !== undefined ? ` for project ${quote(e.project)}` : ''}: ${valueSet(e.name) ? 'value set' : `no value (${words.setSecret(e.name)})`}`,
    );
  }
  for (const n of policy.notes) L.push(`  NOTE     ${escapeText(n)}`);
  if (policy.problems.length) {
    L.push(`  INVALID: every action is denied until these are fixed:`);
    for (const p of policy.problems) L.push(`    ${escapeText(p)}`);
  }
  return L.join('\n');
}

/** Doctor's section on repository files that try to pre-approve servers for an agent (none changes a state). */
export function preApprovalText(r: PreApprovalReport): string {
  const L = ['pre-approval attempts (reported only: none of them changes an MCP Gate state):'];
  if (!r.attempts.length && !r.problems.length) L.push('  (none found)');
  for (const a of r.attempts) L.push(`  ${escapeText(preApprovalLine(a))}`);
  for (const p of r.problems) L.push(`  could not read: ${escapeText(p)}`);
  return L.join('\n');
}
