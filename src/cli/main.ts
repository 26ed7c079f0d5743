// `mcp-gate`: the command-line face of the same core the extension uses — same catalogue, same store, same
// states. Exit codes: 0 ok, 1 full block or refusal, 2 usage.
import * as path from 'node:path';
import * as readline from 'node:readline';
import { parseArgs } from 'node:util';
import { currentMachine } from '../trust/catalogue';
import { GateRefusal, recordDecision, resetDecisions } from '../trust/decisions';
import { evaluateGate, findServer, ProjectError, type GateInput } from '../trust/gate';
import { findStoreDir } from '../trust/location';
import { StoreLockError } from '../trust/store';
import { defaultMasker } from '../policy/mask';
import { explain } from '../policy/decide';
import { loadUserPolicy, type UserPolicy } from '../policy/user-policy';
import { err, out, setMask } from './output';
import { doctorText, fullBlockText, listText, policyText, reportJson, serverJson, serverText } from './render';

/** The CLI's secret values come from its own environment: MCP_GATE_SECRET_<NAME>. */
export const SECRET_ENV_PREFIX = 'MCP_GATE_SECRET_';

const USAGE = `usage: mcp-gate <command> [options]

commands:
  list [--json]                  every declared server with its scope, source and state
  get <server>                   one server's exact definition, state, pinned files, and diff if changed
  approve <server> [--yes]       show the exact definition, then record approval (asks unless --yes)
  reject <server>                record that this server must not run
  reset <server> | --all         return a server (or every server of the project) to pending
  doctor [--json]                what is declared, imported, unreadable, blocked, and what needs review
  explain <action>               the decision for an action, the rule that made it, the rule that would permit it

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
  const policyOf = (report: ReturnType<typeof evaluateGate>): UserPolicy => loadUserPolicy(report.userPolicy);
  const noPositionals = (verb: string) => {
    if (rest.length) throw new UsageError(`mcp-gate ${verb} takes no arguments (got ${rest.join(' ')})`);
  };

  try {
    switch (command) {
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
        else out(doctorText(report, storeHow) + '\n\n' + policyText(policy, secretSet, SECRET_ENV_PREFIX));
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
        const lines = explain(rest[0], policy.rules);
        out(lines.join('\n'));
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
        else out(serverText(found.server));
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
        out(serverText(s));
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
        const r = await recordDecision(input, name, o.source, 'approved', s.pinned.digest);
        out(`approved "${r.server.name}" (${r.server.source}) at ${r.server.pinned!.digest}`);
        return 0;
      }
      case 'reject': {
        const name = needName('reject');
        const r = await recordDecision(input, name, o.source, 'rejected');
        out(`rejected "${r.server.name}" (${r.server.source}); it will not run until you reset or approve it`);
        return 0;
      }
      case 'reset': {
        if (o.all && rest.length) throw new UsageError('mcp-gate reset takes a server name or --all, not both');
        if (!o.all && rest.length !== 1) throw new UsageError('mcp-gate reset takes a server name or --all');
        const removed = await resetDecisions(input, o.all ? undefined : rest[0], o.source);
        if (removed.length === 0) out('nothing to reset: no decision was recorded');
        else for (const r of removed) out(`reset "${r.server}" (${r.source}): was ${r.decision}; now pending`);
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
    if (e instanceof GateRefusal || e instanceof StoreLockError) {
      err(`mcp-gate: ${e.message}`);
      return 1;
    }
    err(`mcp-gate: unexpected error: ${(e as Error).stack ?? e}`);
    return 1;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
