// `mcp-gate`: the command-line face of the same core the extension uses — same catalogue, same store, same
// states. Exit codes: 0 ok, 1 full block or refusal, 2 usage.
import * as path from 'node:path';
import * as readline from 'node:readline';
import { parseArgs } from 'node:util';
import { currentMachine, gateConfigPath } from '../trust/catalogue';
import { editServer, EditRefusal } from '../trust/edit';
import { GateRefusal, recordDecision, resetDecisions } from '../trust/decisions';
import { evaluateGate, findServer, ProjectError, type GateInput } from '../trust/gate';
import { findStoreDir } from '../trust/location';
import { escapeText } from '../trust/escape';
import { StoreLockError } from '../trust/store';
import { defaultMasker } from '../policy/mask';
import { explain } from '../policy/decide';
import { loadUserPolicies, type UserPolicy } from '../policy/user-policy';
import { EventLog, OUTCOMES, type LoggedEvent } from '../host/log';
import { Session } from '../host/session';
import { mayCallTool } from '../policy/decide';
import { serverIdentity } from '../host/identity';
import { err, out, setMask } from './output';
import { writeInitialConfig } from './init';
import { finishBeforeStopping, installSignalHandlers, serversMayStart, trackSession } from './signals';
import { doctorText, fullBlockText, listText, policyText, reportJson, sandboxText, serverJson, serverText } from '../report/render';

/** The CLI's secret values come from its own environment: MCP_GATE_SECRET_<NAME>. */
export const SECRET_ENV_PREFIX = 'MCP_GATE_SECRET_';

const USAGE = `usage: mcp-gate <command> [options]

commands:
  init                           write your user configuration (commented examples for --project), if none exists
  list [--json]                  every declared server with its scope, source and state
  get <server>                   one server's exact definition, state, pinned files, and diff if changed
  approve <server> [--yes]       show the exact definition, then record approval (asks unless --yes)
  reject <server>                record that this server must not run
  reset <server> | --all         return a server (or every server of the project) to pending
  enable|disable|remove <server> edit a server in MCP Gate's own configuration (others: names the file to edit)
  doctor [--json]                what is declared, imported, unreadable, blocked, and what needs review
  explain <action> [--scope user|repository]   the decision for an action, the rule that made it, the rule that
                                 would permit it; for your user-scope servers (default) or for the repository
                                 servers of --project (rules whose "project" is that folder or "*")
  tools <server>                 start the server through the gate and list its tools with what the policy says
  call <server> <tool> [--args JSON]   call one tool through the gate (ask = refusal here)
  log [--server S] [--outcome O] [--json]   the exchange log, oldest first

options:
  --project DIR    the workspace folder (default: the current folder)
  --store DIR      the approval store folder (default: MCP_GATE_STORE, else the extension's globalStorage)
  --source FILE    which file, when a server name is declared in several
  -h, --help       this text

exit codes: 0 ok, 1 full block or refusal, 2 usage`;

class UsageError extends Error {}

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

export async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        project: { type: 'string' },
        store: { type: 'string' },
        source: { type: 'string' },
        json: { type: 'boolean' },
        yes: { type: 'boolean' },
        all: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        args: { type: 'string' },
        server: { type: 'string' },
        outcome: { type: 'string' },
        scope: { type: 'string' },
      },
    });
  } catch (e) {
    err(`mcp-gate: ${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values: o, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (o.help || command === 'help') {
    out(USAGE);
    return 0;
  }
  if (!command) {
    err(USAGE);
    return 2;
  }
  const machine = currentMachine();
  // Every value that could be sent is masked in everything the CLI writes, before anything is written.
  for (const [k, v] of Object.entries(machine.env)) if (k.startsWith(SECRET_ENV_PREFIX) && v) defaultMasker.add(v);
  setMask((t) => defaultMasker.mask(t));
  const store = findStoreDir(machine, o.store);
  const input: GateInput = { projectDir: path.resolve(o.project ?? process.cwd()), storeDir: store.dir, machine };
  const storeHow = { flag: '--store', env: 'MCP_GATE_STORE', found: 'found', default: 'default location' }[store.how];

  const needName = (verb: string): string => {
    if (rest.length !== 1) throw new UsageError(`mcp-gate ${verb} takes exactly one server name`);
    return rest[0];
  };
  const log = new EventLog(store.dir, defaultMasker);
  const secretSource = async (name: string) => machine.env[SECRET_ENV_PREFIX + name] || undefined;
  const startSession = async (name: string) => {
    const report = evaluateGate(input);
    const policy = policyOf(report);
    if (report.escapeHatch) log.write({ kind: 'gate.escape-hatch', project: report.project, detail: 'MCP_GATE_ALLOW_PROJECT=1 trusts every repository server' });
    const found = findServer(report, name, o.source);
    if (!found.ok) throw new GateRefusal(found.message);
    serversMayStart();
    const started = await Session.start({ report, policy, log, storeDir: store.dir, secrets: secretSource, env: machine.env, clientName: 'mcp-gate-cli' }, [found.server]);
    // A signal closes the session; closing it normally unregisters it.
    const untrack = trackSession(started);
    const session = Object.assign(started, { close: () => Session.prototype.close.call(started).finally(untrack) });
    for (const n of session.notes) err(n);
    return { report, policy, session, server: found.server };
  };
  const policyOf = (report: ReturnType<typeof evaluateGate>): UserPolicy => loadUserPolicies(report.userPolicyLayers);
  const noPositionals = (verb: string) => {
    if (rest.length) throw new UsageError(`mcp-gate ${verb} takes no arguments (got ${rest.join(' ')})`);
  };

  try {
    switch (command) {
      case 'init': {
        noPositionals('init');
        const r = writeInitialConfig(gateConfigPath(machine), input.projectDir);
        if (!r.ok) {
          err(`mcp-gate: ${r.message}`);
          return 1;
        }
        out(`wrote ${r.file}: every example in it is a comment; uncomment the rules you want (mcp-gate explain <action> checks one)`);
        return 0;
      }
      case 'list': {
        noPositionals('list');
        const report = evaluateGate(input);
        if (o.json) out(JSON.stringify(reportJson(report, storeHow), null, 2));
        else out(listText(report));
        return report.fullBlock.length ? 1 : 0;
      }
      case 'doctor': {
        noPositionals('doctor');
        const report = evaluateGate(input);
        const policy = policyOf(report);
        const secretSet = (name: string) => Boolean(machine.env[SECRET_ENV_PREFIX + name]);
        if (o.json) out(JSON.stringify({ ...reportJson(report, storeHow), policy: { file: policy.file, rules: policy.rules.length, secrets: policy.secrets.map((e) => ({ name: e.name, to: e.to, bind: e.bind, as: e.as, valueSet: secretSet(e.name) })), problems: policy.problems } }, null, 2));
        else out(doctorText(report, storeHow) + '\n\n' + policyText(policy, secretSet, SECRET_ENV_PREFIX) + '\n\n' + sandboxText(report, policy, machine.home));
        return report.fullBlock.length || policy.problems.length ? 1 : 0;
      }
      case 'explain': {
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
        const scope = o.scope ?? 'user';
        if (scope !== 'user' && scope !== 'repository') throw new UsageError(`--scope must be user or repository, not ${JSON.stringify(scope)}`);
        const server = /^mcp\.([^.]+)\./.exec(rest[0])?.[1] ?? '*';
        const who = serverIdentity({ name: server, gated: scope === 'repository' }, report.project);
        const lines = explain(rest[0], policy.rules, who);
        out(lines.join('\n'));
        out(scope === 'user'
          ? 'as seen by: your user-scope servers (rules without "project"; --scope repository for the servers of a repository)'
          : `as seen by: the repository servers of ${report.project} (rules whose "project" is this folder or "*")`);
        for (const n of policy.notes) out(`note: ${n}`);
        out(`rules from: ${policy.file} (user scope; a repository cannot grant)`);
        return lines[1] === 'decision: allow' ? 0 : 1;
      }
      case 'get': {
        const name = needName('get');
        const report = evaluateGate(input);
        if (report.fullBlock.length) err(fullBlockText(report));
        const found = findServer(report, name, o.source);
        if (!found.ok) throw new GateRefusal(found.message);
        if (o.json) out(JSON.stringify(serverJson(found.server), null, 2));
        else out(serverText(found.server, { project: report.project, policy: policyOf(report) }));
        return report.fullBlock.length ? 1 : 0;
      }
      case 'approve': {
        const name = needName('approve');
        const report = evaluateGate(input);
        if (report.fullBlock.length) throw new GateRefusal(`the project is blocked, so nothing can be approved:\n${fullBlockText(report)}`);
        const found = findServer(report, name, o.source);
        if (!found.ok) throw new GateRefusal(found.message);
        const s = found.server;
        if (!s.gated) throw new GateRefusal(`"${s.name}" comes from user scope (${s.source}); it is trusted and needs no approval`);
        if (s.state === 'blocked' || !s.pinned) throw new GateRefusal(`"${s.name}" is blocked: ${s.reason}`);
        out(serverText(s, { project: report.project, policy: policyOf(report) }));
        if (s.state === 'approved' && !s.viaEscapeHatch) {
          out(`"${s.name}" is already approved with this exact definition.`);
          return 0;
        }
        if (!o.yes) {
          const answer = await ask(`\nApprove "${s.name}" from ${s.source} exactly as shown above? Type "yes" to approve: `);
          if (answer === undefined || !/^(y|yes)$/i.test(answer.trim())) {
            out('\nnot approved; nothing was recorded');
            return 1;
          }
        }
        const r = await finishBeforeStopping(recordDecision(input, name, o.source, 'approved', s.pinned.digest));
        log.write({ kind: 'gate.approve', server: r.server.name, source: r.server.source, project: report.project, digest: r.server.pinned!.digest });
        out(`approved "${r.server.name}" (${r.server.source}) at ${r.server.pinned!.digest}`);
        return 0;
      }
      case 'tools': {
        const name = needName('tools');
        const { report, policy, session, server } = await startSession(name);
        const who = serverIdentity(server, report.project);
        try {
          if (!session.servers().includes(server.name)) return 1;
          const host = server.definition?.type === 'http' ? new URL(server.definition.url!).hostname.replace(/^\[|\]$/g, '') : undefined;
          const tools = session.tools();
          if (o.json) {
            out(JSON.stringify(tools.map((t) => ({ ...t, policy: mayCallTool(who, host, t.name, policy.rules).decision })), null, 2));
            return 0;
          }
          out(`${tools.length} tool${tools.length === 1 ? '' : 's'} from ${server.name} (${server.source})${host ? ` at ${host}` : ''}:`);
          // Columns: name, [decision], first line of the description; each as wide as its widest cell.
          const rows = tools.map((t) => ({ name: escapeText(t.name), decision: `[${mayCallTool(who, host, t.name, policy.rules).decision}]`, description: escapeText(t.description.split('\n')[0] ?? '') }));
          const nameWidth = Math.max(0, ...rows.map((r) => r.name.length));
          const decisionWidth = Math.max(0, ...rows.map((r) => r.decision.length));
          for (const r of rows) out(`  ${r.name.padEnd(nameWidth)}  ${r.decision.padEnd(decisionWidth)}  ${r.description}`.trimEnd());
          // The hint only when it tells something: some tool cannot be called (the CLI refuses ask and deny).
          const blocked = rows.filter((r) => r.decision !== '[allow]');
          if (blocked.length > 0) {
            out(`${blocked.length} of ${rows.length} cannot be called without an allow rule; why: mcp-gate explain mcp.${server.name}.tool.${blocked[0]!.name}`);
          }
          return 0;
        } finally {
          await session.close();
        }
      }
      case 'call': {
        if (rest.length !== 2) throw new UsageError('mcp-gate call takes a server and a tool name');
        let args: Record<string, unknown> = {};
        if (o.args !== undefined) {
          try {
            args = JSON.parse(o.args);
          } catch (e) {
            throw new UsageError(`--args is not JSON: ${(e as Error).message}`);
          }
          if (!args || typeof args !== 'object' || Array.isArray(args)) throw new UsageError('--args must be a JSON object');
        }
        const { session, server } = await startSession(rest[0]);
        try {
          if (!session.servers().includes(server.name)) return 1;
          const r = await session.call(server.name, rest[1], args);
          if (!r.result) {
            err(`mcp-gate: ${r.outcome}: ${r.error}`);
            return 1;
          }
          if (o.json) out(JSON.stringify(r.result, null, 2));
          else {
            for (const c of r.result.content ?? []) {
              if (c.type === 'text') out(c.text);
              else out(`[${c.type}${'mimeType' in c && c.mimeType ? ` ${c.mimeType}` : ''}]`);
            }
            if (r.result.structuredContent) out(JSON.stringify(r.result.structuredContent, null, 2));
          }
          return r.ok ? 0 : 1;
        } finally {
          await session.close();
        }
      }
      case 'log': {
        noPositionals('log');
        if (o.outcome && !(OUTCOMES as readonly string[]).includes(o.outcome)) throw new UsageError(`--outcome must be one of ${OUTCOMES.join(', ')}`);
        const events = log.read().filter((e: LoggedEvent) => (!o.server || ('server' in e && e.server === o.server)) && (!o.outcome || ('outcome' in e && e.outcome === o.outcome)));
        if (o.json) out(JSON.stringify(events, null, 2));
        else if (events.length === 0) out(`no events${log.file ? ` in ${log.file}` : ''}`);
        else for (const e of events) out(logLine(e));
        return 0;
      }
      case 'enable':
      case 'disable':
      case 'remove': {
        const name = needName(command);
        const report = evaluateGate(input);
        const msg = await finishBeforeStopping(editServer(report, gateConfigPath(machine), name, command, o.source));
        out(msg);
        return 0;
      }
      case 'reject': {
        const name = needName('reject');
        const r = await finishBeforeStopping(recordDecision(input, name, o.source, 'rejected'));
        log.write({ kind: 'gate.reject', server: r.server.name, source: r.server.source, digest: r.server.pinned?.digest });
        out(`rejected "${r.server.name}" (${r.server.source}); it will not run until you reset or approve it`);
        return 0;
      }
      case 'reset': {
        if (o.all && rest.length) throw new UsageError('mcp-gate reset takes a server name or --all, not both');
        if (!o.all && rest.length !== 1) throw new UsageError('mcp-gate reset takes a server name or --all');
        const removed = await finishBeforeStopping(resetDecisions(input, o.all ? undefined : rest[0], o.source));
        if (removed.length === 0) out('nothing to reset: no decision was recorded');
        for (const r of removed) log.write({ kind: 'gate.reset', server: r.server, source: r.source, project: r.project, detail: `was ${r.decision}` });
        if (removed.length) for (const r of removed) out(`reset "${r.server}" (${r.source}): was ${r.decision}; now pending`);
        return 0;
      }
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      err(`mcp-gate: ${e.message}\n\n${USAGE}`);
      return 2;
    }
    if (e instanceof ProjectError) {
      err(`mcp-gate: ${e.message}`);
      return 2;
    }
    if (e instanceof GateRefusal || e instanceof StoreLockError || e instanceof EditRefusal) {
      err(`mcp-gate: ${e.message}`);
      return 1;
    }
    err(`mcp-gate: unexpected error: ${(e as Error).stack ?? e}`);
    return 1;
  }
}

if (require.main === module) {
  installSignalHandlers();
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}

function logLine(e: LoggedEvent): string {
  const f = e as unknown as Record<string, unknown>;
  const parts = [String(f.at), String(f.kind)];
  for (const k of ['server', 'host', 'about', 'tool', 'status', 'outcome', 'ok', 'bytes', 'source', 'digest']) if (f[k] !== undefined) parts.push(`${k}=${escapeText(String(f[k]))}`);
  if (f.detail !== undefined) parts.push(`— ${escapeText(String(f.detail))}`);
  return parts.join(' ');
}
