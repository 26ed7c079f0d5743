// Local start: a stdio server is started from its verified launch plan (src/host/session/launch.ts) — the plan's program,
// arguments, working folder and declared variables, substituted once, by the plan — through the start the
// sandbox and the user's policy decide (src/host/sandbox/contain.ts: contained, or uncontained by the user's opt-out),
// with the secrets bound to it and nothing else of MCP Gate's environment but PATH, HOME, locale and temp. The
// transport is the process's stdio; the connection is ready once its tools are discovered.
import * as os from 'node:os';
import type { Client } from '@modelcontextprotocol/client';
import type { LaunchPlan } from '../../trust/plan/launch-plan';
import type { ServerReport } from '../../trust/report';
import { refusedSocketError, startPlan } from '../sandbox/contain';
import { ContainRefused, type StartPlan } from '../sandbox/contain-options';
import { serverIdentity } from '../identity';
import { LaunchRefused, verifiedPlan } from './launch';
import { minimalEnv, StdioTransport } from '../sandbox/stdio';
import { stripHidden } from './untrusted';
import { newClient } from './client';
import {
  describeError,
  DISCOVER_TIMEOUT_MS,
  DroppedError,
  LAUNCHER_START_TIMEOUT_MS,
  literalForm,
  unfilledWords,
  unresolvable,
  type Connection,
  type SessionContext,
} from './context';
import { discover } from './discover';
import { watchClosure } from './watch';
import { watchNewRepositories } from './new-repos';
import { PROTECTED_IN_WORKSPACE, PROTECTED_SUFFIXES } from '../sandbox/decision';
import { readRefusals, watchRefusals, type Refusal } from '../sandbox/load-guard';
import { observeGuardRefusal } from '../../trust/approval/approvals';
import { ApprovalStore } from '../../trust/approval/store';
import { approvingCannotHelp, refusalAct, refusalWords } from '../../trust/approval/workspace-manifest';

/**
 * The verified launch plan and how it starts (contained or by the user's opt-out). The session substitutes
 * nothing itself: a `${…}` MCP Gate does not fill in is looked for in the definition as written, and what runs
 * is the plan's arguments and variables as the plan substituted them — so a value that holds `${…}`-looking text
 * only after that substitution (the workspace's own path) reaches the server as it is.
 */
async function localStart(ctx: SessionContext, server: ServerReport): Promise<{ plan: LaunchPlan; start: StartPlan }> {
  const def = server.definition!;
  const project = ctx.project;
  const bound = await ctx.secretsFor(server);
  if (bound.drop) throw new DroppedError(bound.why);
  for (const n of bound.notes) ctx.note(`${server.name}: ${n}`, server);
  // A declared variable a bound secret replaces is not used, whatever it says.
  const declaredEnv = Object.entries(def.env).filter((e): e is [string, string] => e[1] !== null && !(e[0] in bound.env));
  const onCommandLine = unresolvable([def.command!, ...def.args]);
  if (onCommandLine) throw new DroppedError(unfilledWords(server, project, onCommandLine, undefined, ctx.words));
  for (const [k, v] of declaredEnv) {
    const bad = unresolvable([v]);
    if (bad) throw new DroppedError(unfilledWords(server, project, bad, k, ctx.words));
    const literal = literalForm(v);
    if (literal) ctx.note(`${server.name}: ${unfilledWords(server, project, literal, k, ctx.words)}`, server);
  }
  if (def.envFile)
    throw new DroppedError(
      'it reads an envFile, which MCP Gate does not load (it would hand the file\'s variables to the server unseen); set the variables in "env" instead',
    );
  let plan: LaunchPlan;
  try {
    plan = verifiedPlan(server, project, ctx.o.env.PATH);
  } catch (e) {
    if (e instanceof LaunchRefused) throw new DroppedError(e.message);
    throw e;
  }
  if (!plan.executable) throw new DroppedError(`it cannot be started: ${plan.notFound}`);
  let start: StartPlan;
  const home = ctx.o.env.HOME ?? os.homedir();
  try {
    start = await startPlan({
      server,
      who: serverIdentity(server, project),
      project,
      plan: { ...plan, executable: plan.executable },
      env: { ...minimalEnv(ctx.o.env), ...plan.env, ...bound.env },
      // The policy asked once for this start; the door's later questions go through it, by the rules then in force.
      decision: ctx.startDecision(server, home),
      home,
      hostEnv: ctx.o.env,
      words: ctx.words,
      npm: ctx.o.npm,
      limits: ctx.o.limitMechanism,
      storeDir: ctx.o.storeDir,
      guardDir: ctx.o.guardDir,
      onNetwork: (e) =>
        ctx.o.log.write({
          kind: e.outcome === 'connected' ? 'network.connect' : e.outcome === 'blocked' ? 'network.blocked' : 'network.failed',
          server: server.name,
          source: server.source,
          host: `${e.host.includes(':') ? `[${e.host}]` : e.host}:${e.port}`,
          ...(e.address ? { address: e.address } : {}),
          detail: e.permit ? `${e.detail}; the rule ${e.permit} would allow it` : e.detail,
          ...(e.permit ? { rule: e.permit } : {}),
        }),
    });
  } catch (e) {
    if (e instanceof ContainRefused) throw new DroppedError(e.message);
    throw e;
  }
  if (start.optOut)
    ctx.o.log.write({
      kind: 'sandbox.off',
      server: server.name,
      source: server.source,
      detail: `runs uncontained: your opt-out in ${start.optOut}`,
    });
  if (start.processes && !start.processes.pidNamespace)
    ctx.o.log.write({
      kind: 'server.start',
      server: server.name,
      source: server.source,
      detail: `runs without its own PID namespace: ${start.processes.why}`,
    });
  return { plan, start };
}

/** A refusal of the load guard: logged, and recorded with the server's approval (it then waits for a review). */
async function guardRefused(ctx: SessionContext, server: ServerReport, r: Refusal): Promise<void> {
  ctx.o.log.write({
    kind: 'guard.refused',
    server: server.name,
    source: server.source,
    file: r.file,
    detail: `${refusalWords(r)}: ${r.took ? 'the server took it in, then turned text into code, and the load guard refused that' : 'the load guard refused to load it'}${r.how ? ` (${r.runtime ?? ''} ${r.how})`.replace('( ', '(') : ''}; the server was stopped`,
  });
  if (!server.pinned) return;
  try {
    await observeGuardRefusal(
      new ApprovalStore(ctx.o.storeDir, ctx.masker),
      ctx.project,
      server.source,
      server.name,
      server.pinned.digest,
      {
        file: r.file,
        why: r.why,
        at: r.at,
        ...(r.rule ? { rule: r.rule } : {}),
        ...(r.home ? { home: true as const } : {}),
        ...(r.took ? { took: true as const } : {}),
        ...(r.how ? { how: r.how.slice(0, 300) } : {}),
      },
    );
  } catch {
    // the store cannot be written: the server is stopped all the same, and the log names the file
  }
}

/** Starts a local server and discovers its tools. Throws DroppedError when it is left out. */
export async function openLocal(ctx: SessionContext, server: ServerReport): Promise<Connection> {
  // The watch starts before the verified copy is made (localStart): a change made in between is seen, and stops
  // the server as soon as it runs.
  let early: { file: string; live: boolean } | undefined;
  let onChanged: ((file: string, live: boolean) => void) | undefined;
  const watching = watchClosure(ctx.project, server, (file, live) => {
    if (onChanged) onChanged(file, live);
    else early ??= { file, live };
  });
  let opened = false;
  try {
    const conn = await openWatched(ctx, server, watching, (f) => {
      onChanged = f;
      if (early) f(early.file, early.live);
    });
    opened = true;
    return conn;
  } finally {
    if (!opened) watching.stop();
  }
}

/** openLocal once its closure is watched: `onChange` takes the handler for a change (and runs it for one seen already). */
async function openWatched(
  ctx: SessionContext,
  server: ServerReport,
  watching: ReturnType<typeof watchClosure>,
  onChange: (f: (file: string, live: boolean) => void) => void,
): Promise<Connection> {
  const { plan, start } = await localStart(ctx, server);
  // A repository it makes in its workspace while it runs, which git would obey outside the sandbox: held (moved aside).
  // Past what the watch can see (more folders made than it watches): the server is stopped, once it is running.
  let blind: string | undefined;
  let onBlind = (why: string): void => {
    blind = why;
  };
  const repos = start.sandbox
    ? watchNewRepositories(
        ctx.project,
        (h) =>
          ctx.o.log.write({
            kind: 'sandbox.held',
            server: server.name,
            source: server.source,
            file: h.rel,
            detail: `"${server.name}" made a git repository at ${h.rel} that git run outside the sandbox (by you, VS Code or an agent) would obey: ${h.why}. MCP Gate moved it to ${h.heldAs}; look at it there, and rename it back only if you trust what it holds`,
          }),
        {
          blind: (why) => onBlind(why),
          obeyed: {
            names: PROTECTED_IN_WORKSPACE.filter((n) => n !== '.git'),
            suffixes: PROTECTED_SUFFIXES,
            appeared: (rel) =>
              ctx.o.log.write({
                kind: 'sandbox.appeared',
                server: server.name,
                source: server.source,
                file: rel,
                detail: `${rel} appeared in the workspace while "${server.name}" ran contained; agents or editors obey it without asking. If you did not make it, look at it before an agent or editor opens this folder (MCP Gate cannot tell who wrote it, so it leaves it in place)`,
              }),
          },
        },
      )
    : undefined;
  if (repos?.problem)
    ctx.o.log.write({
      kind: 'server.start',
      server: server.name,
      source: server.source,
      detail: `new repositories in its workspace: ${repos.problem}`,
    });
  let handedOn = false;
  try {
    const conn = await openStarted(ctx, server, watching, onChange, plan, start);
    conn.afterClose = () => repos?.stop() ?? Promise.resolve();
    onBlind = (why) => {
      const detail = `"${server.name}" was stopped: ${why}, so a repository it made could go unseen until git obeys it outside the sandbox; MCP Gate looked through the workspace once more when it stopped. Find what in its workspace makes that many folders (or cannot be read); its next start is watched anew`;
      conn.changed = detail;
      ctx.o.log.write({ kind: 'server.stop', server: server.name, source: server.source, detail });
      void conn.client
        .close()
        .catch(() => undefined)
        .then(() => conn.transport.close().catch(() => undefined));
    };
    if (blind) onBlind(blind);
    handedOn = true;
    return conn;
  } finally {
    if (!handedOn) void repos?.stop();
  }
}

/**
 * Watches a contained server's limits from its first instant (`limits`: its StartPlan's), and words an exit they
 * explain; one reached stops it (`stopFor`). Returns the stop of the watch.
 */
function watchLimits(
  transport: StdioTransport,
  limits: StartPlan['limits'],
  stopped: () => string | undefined,
  stopFor: (why: string) => void,
): () => void {
  let unwatchLimits = () => undefined as void;
  if (limits) {
    transport.onspawn = (pid) => {
      unwatchLimits = limits.held.watch(pid, (r) => {
        stopFor(limits.reached(r));
        void transport.close().catch(() => undefined);
      });
    };
    transport.onexit = (code) => {
      unwatchLimits();
      const r = stopped() ? undefined : limits.held.explainExit(code, transport.stderrText());
      if (r) stopFor(limits.reached(r));
    };
  }
  return () => unwatchLimits();
}

/** What a change to a file it runs does to a started server: it is stopped (after its calls, unless it can see the change). */
function stopOnChange(
  ctx: SessionContext,
  server: ServerReport,
  conn: Connection,
  client: Client,
  transport: StdioTransport,
): (file: string, live: boolean) => void {
  return (file, live) => {
    conn.changed = `${file} changed on disk since "${server.name}" was approved and started; it was stopped (it ran its approved copy until then): ${ctx.words.review(server.name)}`;
    ctx.o.log.write({ kind: 'server.stop', server: server.name, source: server.source, detail: `${file} changed on disk while it ran` });
    const stop = () => {
      conn.closeWhenIdle = undefined;
      void client
        .close()
        .catch(() => undefined)
        .then(() => transport.close().catch(() => undefined));
    };
    // Its calls answer first (a server's own write is a change too) — unless the change is one the server can see:
    // a file Node or npm looks up above its folders that was not there at approval (not in its verified copy).
    if (conn.inflight && !live) conn.closeWhenIdle = stop;
    else stop();
    try {
      ctx.o.onClosureChanged?.(server.name, file);
    } catch {
      // the front end's re-check failing changes nothing here: the server is stopped and its calls are refused
    }
  };
}

/** What a file the load guard refused does to a started server: it is stopped, and the approval records the refusal (once). */
function refusalStop(
  ctx: SessionContext,
  server: ServerReport,
  conn: Connection,
  client: Client,
  transport: StdioTransport,
): (r: Refusal) => Promise<void> {
  let recorded: Promise<void> | undefined;
  return (r: Refusal): Promise<void> => {
    if (recorded) return recorded;
    conn.changed = `${refusalWords(r)}; ${refusalAct(r, `"${server.name}"`)} and MCP Gate stopped the server: ${r.home ? `delete ${r.path}, then start it again` : approvingCannotHelp(r) ? 'fix what it names, then start it again' : ctx.words.review(server.name)}`;
    recorded = guardRefused(ctx, server, r);
    void client
      .close()
      .catch(() => undefined)
      .then(() => transport.close().catch(() => undefined));
    try {
      ctx.o.onClosureChanged?.(server.name, r.file);
    } catch {
      // as for a changed file above: the server is stopped whatever the front end does
    }
    return recorded;
  };
}

/** openWatched once it is prepared to start (`start`): connects, discovers, and watches what it loads. */
async function openStarted(
  ctx: SessionContext,
  server: ServerReport,
  watching: ReturnType<typeof watchClosure>,
  onChange: (f: (file: string, live: boolean) => void) => void,
  plan: Awaited<ReturnType<typeof localStart>>['plan'],
  start: Awaited<ReturnType<typeof localStart>>['start'],
): Promise<Connection> {
  const transport = new StdioTransport(start.launch);
  // A package launcher may download its package before it answers: it gets longer to start (not to list tools).
  const timeout = ctx.o.discoverTimeoutMs ?? (plan.launcher ? LAUNCHER_START_TIMEOUT_MS : DISCOVER_TIMEOUT_MS);
  const client = newClient(ctx, server.name, timeout);
  // Its limits are watched from its first instant (a bomb during discovery too); one reached stops it, logged once.
  let stopped: string | undefined;
  let conn: Connection | undefined;
  const stopFor = (why: string) => {
    if (stopped) return;
    stopped = why;
    if (conn) conn.stopped = why;
    ctx.o.log.write({ kind: 'server.stop', server: server.name, source: server.source, detail: why });
  };
  const unwatchLimits = watchLimits(transport, start.limits, () => stopped, stopFor);
  try {
    await client.connect(transport, { timeout });
    const tools = await discover(ctx, server, client);
    // A file refused while it started (a load its code caught, so it went on): it is not offered.
    if (start.guardReport && readRefusals(start.guardReport, ctx.project).length > 0)
      throw new Error('the load guard refused a file while it started');
    ctx.o.log.write({ kind: 'mcp.request', server: server.name, host: 'stdio', about: 'discover', outcome: 'answered' });
    conn = { server, client, transport, tools, cleanup: start.cleanup, sandbox: start.sandbox?.text, stopped };
    onChange(stopOnChange(ctx, server, conn, client, transport));
    if (watching.problem)
      ctx.o.log.write({
        kind: 'server.start',
        server: server.name,
        source: server.source,
        detail: `changes cannot be watched: ${watching.problem}; the start-time check remains`,
      });
    // A file the load guard refused: the server is stopped at once (its running calls too: the refusal happened
    // inside one), the file named in the log, and the approval records it, so the server waits for a review. Seen by
    // a watch of the guard's report, and checked again when each call answers (session/call.ts), so an answer given
    // after a refusal is never handed on.
    const onRefusal = refusalStop(ctx, server, conn, client, transport);
    const report = start.guardReport;
    const unwatchGuard = report ? watchRefusals(report, ctx.project, (r) => void onRefusal(r)) : () => undefined;
    if (report) {
      conn.guardCheck = async () => {
        const first = readRefusals(report, ctx.project)[0];
        if (first) await onRefusal(first);
        return first ? conn!.changed : undefined;
      };
    }
    conn.unwatch = () => {
      watching.stop();
      unwatchGuard();
      unwatchLimits();
    };
    return conn;
  } catch (e) {
    await client.close().catch(() => undefined);
    await transport.close().catch(() => undefined);
    // Read before cleanup removes the report with the rest of the start's files.
    const guardRefusal = start.guardReport ? readRefusals(start.guardReport, ctx.project)[0] : undefined;
    start.cleanup();
    if (guardRefusal) {
      await guardRefused(ctx, server, guardRefusal);
      throw new DroppedError(
        `${refusalWords(guardRefusal)}; ${refusalAct(guardRefusal, 'it', ' while starting')} and MCP Gate stopped the server: ${guardRefusal.home ? `delete ${guardRefusal.path}, then start it again` : approvingCannotHelp(guardRefusal) ? 'fix what it names, then start it again' : ctx.words.review(server.name)}`,
      );
    }
    if (e instanceof DroppedError) throw e;
    if (stopped) throw new DroppedError(`reading its tools failed: ${stopped}`);
    // The last lines, and the line that names the error when a stack trace pushed it out of them.
    const lines = transport.stderrText().trim().split('\n');
    const named = lines.find((l) => /^(mcp-gate-guard:|[A-Z]\w*Error\b|Error\b)/.test(l.trim()));
    const stderr = [...(named && !lines.slice(-3).includes(named) ? [named.trim(), '…'] : []), ...lines.slice(-3)].join(' | ');
    const native = nativeModuleHint(transport.stderrText());
    ctx.o.log.write({
      kind: 'mcp.request',
      server: server.name,
      host: 'stdio',
      about: 'discover',
      outcome: 'no_answer',
      detail: ctx.masker.mask(`${describeError(e)}${stderr ? ` (stderr: ${stripHidden(stderr)})` : ''}${native ? `; ${native}` : ''}`),
    });
    const offline = start.networkRule
      ? `; it runs contained without network — if it must download or reach a host, your rule ${start.networkRule} gives it the network`
      : '';
    const refused = start.unixSocketsRefused;
    const said = refused ? refusedSocketError(transport.stderrText()) : undefined;
    const sockets =
      refused && (refused.shown || said) ? `; ${refused.hint}${said ? ` (it said: ${ctx.masker.mask(stripHidden(said))})` : ''}` : '';
    throw new DroppedError(
      `reading its tools failed: ${ctx.masker.mask(describeError(e))}${stderr ? ` (stderr: ${ctx.masker.mask(stripHidden(stderr))})` : ''}${native ? `; ${native}` : ''}${sockets}${offline}`,
    );
  }
}

/**
 * A native module that was never built (its package's install script did not run: MCP Gate installs the packages it
 * pins without running their scripts, and a repository's node_modules may have been installed with
 * --ignore-scripts), said as the likely cause when the server's stderr reads like it. Undefined otherwise.
 */
export function nativeModuleHint(stderr: string): string | undefined {
  const m =
    /Cannot find module '([^']*\.node)'|Could not locate the bindings file|No native build was found|(?:was compiled against a different Node\.js version|NODE_MODULE_VERSION \d+)/.exec(
      stderr,
    );
  if (!m) return undefined;
  const which = m[1] ? ` (${stripHidden(m[1]).slice(-200)})` : '';
  return `a native module${which} is missing or was built for another Node: its package's install script most likely did not run (MCP Gate runs no install scripts of the packages it pins); a server that needs one is declared in your user configuration after you installed and built it yourself`;
}
