// Each CLI command as one function of its context (./context.ts), and the table main.ts runs them from: one entry
// per command id of ./usage.ts (the type makes a missing one an error).
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { gateConfigPath, type Machine } from '../trust/sources/catalogue';
import { exportTargetLine, exportTargetShown } from '../trust/sources/log-export';
import { editServer } from '../trust/sources/edit';
import { approveOrReject, GateRefusal, lockForApproval, minReleaseAge, reset as resetServers } from '../trust/approval/approvals';
import { imagePinForApproval } from '../trust/packages/image-pin';
import { evaluateGate } from '../trust/gate';
import { findServer } from '../trust/report';
import { escapeText } from '../text/escape';
import { explain as explainAction, mayCallTool } from '../policy/decide';
import { ruleText } from '../policy/rules';
import { OUTCOME_WORDS, OUTCOMES, type LoggedEvent } from '../host/log/log';
import type { ChainReport } from '../host/log/log-chain';
import { serverIdentity } from '../host/identity';
import {
  doctorText,
  preApprovalText,
  fullBlockText,
  listText,
  policyText,
  reportJson,
  sandboxText,
  serverJson,
  serverText,
} from '../report/render';
import { logLine } from '../report/log-line';
import { resultLines } from '../report/tool-text';
import { packageOps, UsageError, type Ctx } from './context';
import { SECRET_ENV_PREFIX, shellArg } from './words';
import { err, out } from './output';
import { finishBeforeStopping } from './signals';
import { writeInitialConfig } from './init';
import { updateCommand } from './update';
import { approvalsCommand } from './team';
import { checkCommand } from './check';
import { serveCommand } from './serve';
import { defaultGateCommand, installCommand, readText, sameBuildGate } from './install';
import { agentName, managedEdits, type Agent, type ManagedAgent } from '../trust/sources/tools';
import { AgentFileError } from '../trust/sources/tools/edits';
import {
  brokenGateEntries,
  gateEntries,
  installedGateOf,
  managedLayers,
  namesTaken,
  userAllowlistGaps,
  type AllowlistGap,
  type BrokenGateEntry,
  type GateEntry,
  type ManagedLayer,
  type NameTaken,
} from '../trust/sources/tools/installed';
import { preApprovalAttempts } from '../trust/sources/preapproval';
import type { CommandId } from './usage';

async function ask(question: string): Promise<string | undefined> {
  const rl = readline.createInterface({ input: process.stdin, terminal: false });
  process.stdout.write(question);
  return new Promise((resolve) => {
    let answered = false;
    rl.once('line', (line) => {
      answered = true;
      rl.close();
      resolve(line);
    });
    rl.once('close', () => {
      if (!answered) resolve(undefined);
    });
  });
}

async function init(ctx: Ctx): Promise<number> {
  const { machine, input, noPositionals } = ctx;
  noPositionals('init');
  const r = writeInitialConfig(gateConfigPath(machine), input.projectDir);
  if (!r.ok) {
    err(`mcp-gate: ${r.message}`);
    return 1;
  }
  out(`wrote ${r.file}: every example in it is a comment; uncomment the rules you want (mcp-gate explain <action> checks one)`);
  return 0;
}

async function list(ctx: Ctx): Promise<number> {
  const { o, input, storeHow, noPositionals } = ctx;
  noPositionals('list');
  const report = evaluateGate(input);
  if (o.json) out(JSON.stringify(reportJson(report, storeHow), null, 2));
  else out(listText(report));
  return report.fullBlock.length ? 1 : 0;
}

async function doctor(ctx: Ctx): Promise<number> {
  const { o, machine, input, storeHow, noPositionals, policyOf } = ctx;
  noPositionals('doctor');
  const report = evaluateGate(input);
  const policy = policyOf(report);
  const secretSet = (name: string) => Boolean(machine.env[SECRET_ENV_PREFIX + name]);
  const pre = preApprovalAttempts(report.project);
  const allowlists = agentAllowlists(
    machine,
    input.storeDir,
    report.servers.filter((x) => x.scope === 'repository'),
  );
  if (o.json)
    out(
      JSON.stringify(
        {
          ...reportJson(report, storeHow),
          preApprovals: pre,
          agentAllowlists: allowlists,
          logExport: report.logExport ? exportTargetShown(report.logExport) : null,
          policy: {
            file: policy.file,
            rules: policy.rules.length,
            secrets: policy.secrets.map((e) => ({ name: e.name, to: e.to, bind: e.bind, as: e.as, valueSet: secretSet(e.name) })),
            problems: policy.problems,
          },
        },
        null,
        2,
      ),
    );
  else
    out(
      doctorText(
        report,
        storeHow,
        ctx.words,
        ctx.store.others.map(
          (d) =>
            `another MCP Gate store holds approvals: ${d} — those are not seen here; to use it instead: export MCP_GATE_STORE=${shellArg(d)}`,
        ),
      ) +
        '\n\n' +
        preApprovalText(pre) +
        '\n\n' +
        policyText(policy, secretSet, ctx.words) +
        '\n\n' +
        sandboxText(report, policy, machine.home, ctx.sandboxProbe()) +
        '\n\n' +
        exportTargetLine(report.logExport, machine.env) +
        '\n\n' +
        agentAllowlistText(allowlists),
    );
  return report.fullBlock.length || policy.problems.length ? 1 : 0;
}

/**
 * Allowlists `mcp-gate install` wrote that no longer list a server the user added since (Claude Code; Gemini CLI
 * and Codex CLI with --managed), which administrator layers (`install <agent> --managed`) are in place, and the
 * repository servers that take a user server's name where an agent allows by name (each agent's adapter knows how).
 */
type AgentAllowlists = {
  gaps: AllowlistGap[];
  managed: ManagedLayer<ManagedAgent>[];
  namesTaken: NameTaken[];
  problems: string[];
  broken: BrokenGateEntry[];
  entries: GateEntry[];
};

function agentAllowlists(
  machine: Machine,
  storeDir: string,
  repositoryServers: readonly { name: string; source: string }[],
): AgentAllowlists {
  const problems: string[] = [];
  const gaps: AllowlistGap[] = [];
  let managed: ManagedLayer<ManagedAgent>[] = [];
  const taken: NameTaken[] = [];
  const listDir = (dir: string) => {
    try {
      return fs
        .readdirSync(dir, { withFileTypes: true })
        .filter((d) => d.isFile() || d.isSymbolicLink())
        .map((d) => d.name);
    } catch {
      return []; // no drop-in folder
    }
  };
  const attempt = (f: () => void) => {
    try {
      f();
    } catch (e) {
      if (e instanceof AgentFileError) problems.push(e.message);
      else throw e;
    }
  };
  const installed = (agent: Agent) => sameBuildGate(installedGateOf(agent, readText, machine, fs.existsSync));
  attempt(() =>
    gaps.push(
      ...userAllowlistGaps(readText, listDir, machine, (agent) => installed(agent) ?? defaultGateCommand(storeDir, { write: false })),
    ),
  );
  const broken: BrokenGateEntry[] = [];
  attempt(() => broken.push(...brokenGateEntries(readText, machine, fs.existsSync)));
  const entries: GateEntry[] = [];
  attempt(() => entries.push(...gateEntries(readText, machine)));
  attempt(() => {
    const m = managedLayers(readText, machine, (agent) => installed(agent) ?? defaultGateCommand());
    managed = m.layers;
    gaps.push(...m.gaps);
  });
  attempt(() => taken.push(...namesTaken(readText, machine, repositoryServers)));
  return { gaps, managed, namesTaken: taken, problems, broken, entries };
}

function agentAllowlistText(r: AgentAllowlists): string {
  const L = ['agents behind the gate (mcp-gate install <agent>):'];
  const working = r.entries.filter((e) => !r.broken.some((b) => b.file === e.file));
  if (!r.entries.length) L.push('  (none: `mcp-gate install claude`, `codex`, `gemini` or `cursor` puts one behind it)');
  for (const e of working)
    L.push(
      `  ${agentName(e.agent)}: starts MCP Gate from ${escapeText(e.file)} (${escapeText([e.command, ...e.args].join(' '))}); its program is there`,
    );
  for (const b of r.broken) L.push(`  ${agentName(b.agent)}: BROKEN — see below`);
  L.push('', 'agent allowlists (the allowlists mcp-gate install wrote):');
  if (!r.gaps.length && !r.problems.length && !r.namesTaken.length && !r.broken.length) L.push('  (up to date, or none installed)');
  for (const b of r.broken) {
    L.push(
      `  broken: ${agentName(b.agent)}'s "mcp-gate" entry in ${escapeText(b.file)} runs ${escapeText(b.missing)}, which no longer exists: ${agentName(b.agent)} cannot start MCP Gate; run \`mcp-gate install ${b.agent}\` again`,
    );
  }
  for (const g of r.gaps) {
    L.push(
      `  stale: your ${g.server.scope} server ${escapeText(JSON.stringify(g.server.name))} is not in the ${g.key ?? 'allowedMcpServers'} of ${escapeText(g.allowlist)}: ${g.agent ?? 'Claude Code'} does not start it; run \`${g.fix}\` again${g.fix.endsWith('--managed') ? ' as root' : ''} to list it`,
    );
  }
  for (const n of r.namesTaken) L.push(`  ${n.note}`);
  for (const p of r.problems) L.push(`  could not check: ${escapeText(p)}`);
  L.push('', 'administrator layers (mcp-gate install <agent> --managed, as root):');
  for (const m of r.managed)
    L.push(
      `  ${agentName(m.agent)}: ${m.installed ? `installed in ${escapeText(m.file)}: ${managedEdits(m.agent).closes}` : `not installed (${escapeText(m.file)})`}`,
    );
  return L.join('\n');
}

async function explain(ctx: Ctx): Promise<number> {
  const { o, rest, input, policyOf } = ctx;
  if (rest.length !== 1) throw new UsageError('mcp-gate explain takes exactly one action, e.g. mcp.notion.host.com.notion.mcp');
  const report = evaluateGate(input);
  const policy = policyOf(report);
  const config = report.sources.find((x) => x.kind === 'gate');
  if (config && (config.status === 'unreadable' || config.status === 'invalid')) {
    out(`your MCP Gate configuration cannot be used, so every action is denied until it is fixed:`);
    for (const p of config.problems) out(`  ${p}`);
    out(`action: ${rest[0]}\ndecision: deny`);
    return 1;
  }
  if (policy.problems.length) {
    out(`your policy in ${policy.file} has invalid items, so every action is denied until they are fixed:`);
    for (const p of policy.problems) out(`  ${p}`);
    out(`action: ${rest[0]}\ndecision: deny`);
    return 1;
  }
  const server = /^mcp\.([^.]+)\./.exec(rest[0])?.[1] ?? '*';
  // Without --scope: the scope of the server the action names, when the project declares it in one scope only
  // (a repository server's rule needs its "project"); else the user's servers.
  const declared = new Set(report.servers.filter((x) => x.name === server).map((x) => (x.gated ? 'repository' : 'user')));
  const scope = o.scope ?? (declared.size === 1 && declared.has('repository') ? 'repository' : 'user');
  if (scope !== 'user' && scope !== 'repository') throw new UsageError(`--scope must be user or repository, not ${JSON.stringify(scope)}`);
  const who = serverIdentity({ name: server, gated: scope === 'repository' }, report.project);
  const lines = explainAction(
    rest[0],
    policy.rules,
    who,
    o.args !== undefined ? { args: jsonArgs(o.args), workspace: report.project } : { workspace: report.project },
  );
  out(lines.join('\n'));
  out(
    scope === 'user'
      ? 'as seen by: your user-scope servers (rules without "project"; --scope repository for the servers of a repository)'
      : `as seen by: the repository servers of ${report.project} (rules whose "project" is this folder or "*")${o.scope ? '' : `; "${server}" is declared by this repository (--scope user for your own server of that name)`}`,
  );
  for (const n of policy.notes) out(`note: ${n}`);
  out(`rules from: ${policy.file} (user scope; a repository cannot grant)`);
  return lines[1] === 'decision: allow' ? 0 : 1;
}

async function get(ctx: Ctx): Promise<number> {
  const { o, input, needName, policyOf } = ctx;
  const name = needName('get');
  const report = evaluateGate(input);
  if (report.fullBlock.length) err(fullBlockText(report));
  const found = findServer(report, name, o.source, ctx.words);
  if (!found.ok) throw new GateRefusal(found.message);
  if (o.json) out(JSON.stringify(serverJson(found.server), null, 2));
  else out(serverText(found.server, ctx.grantsOf(report)));
  return report.fullBlock.length ? 1 : 0;
}

async function approve(ctx: Ctx): Promise<number> {
  const { o, input, log, needName, policyOf } = ctx;
  const name = needName('approve');
  const report = evaluateGate(input);
  if (report.fullBlock.length) throw new GateRefusal(`the project is blocked, so nothing can be approved:\n${fullBlockText(report)}`);
  const found = findServer(report, name, o.source, ctx.words);
  if (!found.ok) throw new GateRefusal(found.message);
  const s = found.server;
  if (!s.gated) throw new GateRefusal(`"${s.name}" comes from user scope (${s.source}); it is trusted and needs no approval`);
  if (s.state === 'blocked' || !s.pinned) throw new GateRefusal(`"${s.name}" is blocked: ${s.reason}`);
  if (s.state === 'approved' && !s.viaEscapeHatch) {
    out(serverText(s, ctx.grantsOf(report)));
    out(`"${s.name}" is already approved with this exact definition.`);
    return 0;
  }
  // An npm launch is resolved now, and the exact tree shown is the one recorded.
  const minAge = minReleaseAge(report);
  const lock = await lockForApproval(input, s, { npm: packageOps });
  const image = await imagePinForApproval(input, s);
  out(serverText(s, ctx.grantsOf(report), { lock, minAge, image }));
  if (!o.yes) {
    const answer = await ask(`\nApprove "${s.name}" from ${s.source} exactly as shown above? Type "yes" to approve: `);
    if (answer === undefined || !/^(y|yes)$/i.test(answer.trim())) {
      out('\nnot approved; nothing was recorded');
      return 1;
    }
  }
  const r = await finishBeforeStopping(
    approveOrReject(input, name, o.source, 'approved', { log, expectedDigest: s.pinned.digest, lock, image }),
  );
  out(`approved "${r.server.name}" (${r.server.source}) at ${r.server.pinned!.digest}`);
  return 0;
}

async function tools(ctx: Ctx): Promise<number> {
  const { o, needName, startSession } = ctx;
  const name = needName('tools');
  const { report, policy, session, server } = await startSession(name);
  const who = serverIdentity(server, report.project);
  try {
    if (!session.servers().includes(server.name)) return 1;
    const host = server.definition?.type === 'http' ? new URL(server.definition.url!).hostname.replace(/^\[|\]$/g, '') : undefined;
    const tools = session.tools();
    if (o.json) {
      out(
        JSON.stringify(
          tools.map((t) => ({ ...t, policy: mayCallTool(who, host, t.name, policy.rules).decision })),
          null,
          2,
        ),
      );
      return 0;
    }
    out(`${tools.length} tool${tools.length === 1 ? '' : 's'} from ${server.name} (${server.source})${host ? ` at ${host}` : ''}:`);
    // Columns: name, [decision], first line of the description; each as wide as its widest cell.
    const rows = tools.map((t) => ({
      name: escapeText(t.name),
      decision: `[${mayCallTool(who, host, t.name, policy.rules).decision}]`,
      description: escapeText(t.description.split('\n')[0] ?? ''),
    }));
    const nameWidth = Math.max(0, ...rows.map((r) => r.name.length));
    const decisionWidth = Math.max(0, ...rows.map((r) => r.decision.length));
    for (const r of rows) out(`  ${r.name.padEnd(nameWidth)}  ${r.decision.padEnd(decisionWidth)}  ${r.description}`.trimEnd());
    // The hint only when it tells something: some tool cannot be called (the CLI refuses ask and deny).
    // Each hint, run as written, explains this very server: its scope (a repository server's rules need its
    // "project") and the command's --project/--store (test/unit/cli/hints.test.ts runs them).
    const blocked = tools.filter((t) => mayCallTool(who, host, t.name, policy.rules).decision !== 'allow');
    if (blocked.length > 0) {
      const scope = server.gated ? ' --scope repository' : '';
      const project = server.gated && !/--project /.test(ctx.flags) ? ` --project ${shellArg(report.project)}` : '';
      const first = blocked[0]!;
      const permit =
        mayCallTool(who, host, first.name, policy.rules)
          .steps?.filter((s) => s.decision !== 'allow' && s.permittedBy)
          .map((s) => ruleText(s.permittedBy!)) ?? [];
      out(
        `${blocked.length} of ${tools.length} cannot be called without an allow rule; why: mcp-gate explain ${shellArg(`mcp.${server.name}.tool.${first.name}`)}${scope}${project}${ctx.flags ? ` ${ctx.flags}` : ''}`,
      );
      if (permit.length)
        out(`to allow ${escapeText(first.name)}, add to "rules" in ${escapeText(policy.file)}: ${permit.map(escapeText).join(' and ')}`);
    }
    return 0;
  } finally {
    await session.close();
  }
}

/** `--args`: a tool call's arguments, a JSON object. */
function jsonArgs(text: string): Record<string, unknown> {
  let args: unknown;
  try {
    args = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`--args is not JSON: ${(e as Error).message}`);
  }
  if (!args || typeof args !== 'object' || Array.isArray(args)) throw new UsageError('--args must be a JSON object');
  return args as Record<string, unknown>;
}

async function call(ctx: Ctx): Promise<number> {
  const { o, rest, startSession } = ctx;
  if (rest.length !== 2) throw new UsageError('mcp-gate call takes a server and a tool name');
  const args = o.args !== undefined ? jsonArgs(o.args) : {};
  const { session, server } = await startSession(rest[0]);
  try {
    if (!session.servers().includes(server.name)) return 1;
    const r = await session.call(server.name, rest[1], args);
    if (!r.result) {
      err(`mcp-gate: ${r.outcome ? OUTCOME_WORDS[r.outcome] : 'refused'}: ${r.error}`);
      return 1;
    }
    if (o.json) out(JSON.stringify(r.result, null, 2));
    else {
      for (const line of resultLines(r.result)) out(line);
    }
    return r.ok ? 0 : 1;
  } finally {
    await session.close();
  }
}

async function update(ctx: Ctx): Promise<number> {
  return updateCommand({
    input: ctx.input,
    name: ctx.needName('update'),
    source: ctx.o.source,
    yes: Boolean(ctx.o.yes),
    ask,
    log: ctx.log,
    words: ctx.words,
  });
}

async function serve(ctx: Ctx): Promise<number> {
  const { input, rest, o, log, policyOf, secrets, machine } = ctx;
  return serveCommand({ input, rest, source: o.source, log, policyOf, secrets, env: machine.env, flags: ctx.flags });
}

async function install(ctx: Ctx): Promise<number> {
  const { command, rest, o, input, store, machine } = ctx;
  if (command !== 'install' && command !== 'uninstall') throw new UsageError(`${command} is not install or uninstall`);
  return finishBeforeStopping(
    installCommand({
      verb: command,
      rest,
      yes: Boolean(o.yes),
      managed: Boolean(o.managed),
      projectDir: input.projectDir,
      projectGiven: o.project !== undefined,
      storeDir: store.dir,
      home: machine.home,
      env: machine.env,
      ask,
      isTTY: Boolean(process.stdin.isTTY),
    }),
  );
}

async function showLog(ctx: Ctx): Promise<number> {
  const { o, log, noPositionals } = ctx;
  noPositionals('log');
  if (o.verify) {
    if (o.server || o.outcome) throw new UsageError('mcp-gate log --verify checks the whole log: it takes no --server or --outcome');
    const r = log.verify();
    out(o.json ? JSON.stringify(r, null, 2) : chainText(r));
    return r.breaks.length ? 1 : 0;
  }
  if (o.outcome && !(OUTCOMES as readonly string[]).includes(o.outcome))
    throw new UsageError(`--outcome must be one of ${OUTCOMES.join(', ')}`);
  const events = log
    .read()
    .filter(
      (e: LoggedEvent) =>
        (!o.server || ('server' in e && e.server === o.server)) && (!o.outcome || ('outcome' in e && e.outcome === o.outcome)),
    );
  if (o.json) out(JSON.stringify(events, null, 2));
  else if (events.length === 0) out(`no events${log.file ? ` in ${log.file}` : ''}`);
  else for (const e of events) out(logLine(e));
  return 0;
}

/** What `log --verify` found, as a person reads it. */
function chainText(r: ChainReport): string {
  const where = `${r.lines} line${r.lines === 1 ? '' : 's'} in ${r.files.length} file${r.files.length === 1 ? '' : 's'}${r.files.length ? ` (${r.files.map((f) => path.basename(f)).join(', ')})` : ''}, ${r.runs} writer run${r.runs === 1 ? '' : 's'}`;
  const head = r.breaks.length
    ? [
        `the log's chain is broken: ${where}`,
        ...r.breaks.map((b) => `  ${b.file}:${b.line}  ${b.why}`),
        'those lines were changed, removed, moved or added after MCP Gate wrote them (or a write did not complete)',
      ]
    : [`the log's chain holds: ${where}`];
  return [
    ...head,
    ...r.notes.map((n) => `note: ${n}`),
    'a chain cannot show the last lines of a run removed with nothing after them, nor a log rewritten whole with new hashes: keep a copy elsewhere for that',
  ].join('\n');
}

async function edit(ctx: Ctx): Promise<number> {
  const { o, machine, input, needName, command } = ctx;
  const name = needName(command);
  const report = evaluateGate(input);
  const msg = await finishBeforeStopping(
    editServer(report, gateConfigPath(machine), name, command as 'enable' | 'disable' | 'remove', o.source),
  );
  out(msg);
  return 0;
}

async function reject(ctx: Ctx): Promise<number> {
  const { o, input, log, needName } = ctx;
  const name = needName('reject');
  ctx.exportLog();
  const r = await finishBeforeStopping(approveOrReject(input, name, o.source, 'rejected', { log }));
  out(`rejected "${r.server.name}" (${r.server.source}); it will not run until you reset or approve it`);
  return 0;
}

async function reset(ctx: Ctx): Promise<number> {
  const { o, rest, input, log } = ctx;
  if (o.all && rest.length) throw new UsageError('mcp-gate reset takes a server name or --all, not both');
  if (!o.all && rest.length !== 1) throw new UsageError('mcp-gate reset takes a server name or --all');
  ctx.exportLog();
  const removed = await finishBeforeStopping(resetServers(input, o.all ? undefined : rest[0], o.source, { log }));
  if (removed.length === 0) out('nothing to reset: no decision was recorded');
  if (removed.length) for (const r of removed) out(`reset "${r.server}" (${r.source}): was ${r.decision}; now waiting for review`);
  return 0;
}

export type Command = (ctx: Ctx) => Promise<number>;

export const COMMANDS: Record<CommandId, Command> = {
  init,
  list,
  get,
  approve,
  update,
  reject,
  reset,
  enable: edit,
  disable: edit,
  remove: edit,
  doctor,
  check: checkCommand,
  approvals: approvalsCommand,
  explain,
  tools,
  call,
  log: showLog,
  install,
  uninstall: install,
  serve,
};
