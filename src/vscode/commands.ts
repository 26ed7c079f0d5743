// The palette (category "MCP Gate"), registered from one table: each command is a factory `(ctx) => handler`
// over the Ctx that extension.ts wires (service, documents, prompts). Each is a thin adapter: it picks a server,
// shows the core's rendering in a review document, with the decision in it (a changed server's code first, in the
// multi-file diff editor: see ./review.ts and ./decision.ts), and decides through
// the same core operation as the CLI (src/trust/approval/approvals.ts: record + gate.* event + refresh). An npm server's
// package is resolved before anything is shown (./resolving.ts), and the lock shown is the lock recorded; Update
// Pinned Package… resolves it again (src/trust/approval/lock-update.ts) and shows the new lock against the approved one.
import * as os from 'node:os';
import * as vscode from 'vscode';
import { doctorText, policyText, riskLine, sandboxText, serverText, summary } from '../report/render';
import { lockSummary, minAgeVerdict, type MinAge } from '../report/lock-text';
import { changeDocuments, updateDocuments } from '../report/change-text';
import { approveOrReject, lockForApproval, minReleaseAge, npmLaunchOf, reset } from '../trust/approval/approvals';
import { isUpdatable, planUpdate } from '../trust/approval/lock-update';
import { registryOf, type NpmLock } from '../trust/packages/npm-lock';
import { imageLaunchOf, imagePinForApproval, type ImagePin } from '../trust/packages/image-pin';
import { escapeLabel, escapeText } from '../text/escape';
import { asRef } from '../trust/approval/server-ref';
import { changedSinceApproval, isApprovable, isRejectable } from '../trust/approval/states';
import { CMD, type CommandId } from './command-ids';
import { sandboxAvailable } from '../host/sandbox/sandbox';
import { routeThroughGate } from './own-starts';
import { reviewFile, showServerActions } from './menus';
import { tryTool, type TryArgs } from './try-tool';
import { TrustPanel } from './panel';
import { packageWorker, withResolution } from './resolving';
import { Review, showDocument } from './review';
import { reopenThroughGate, routingText } from './routing';
import type { FolderState } from './service';
import { relativeTime, shortDigest, VSCODE_WORDS } from './words';
import {
  approvedWorkspaceOf,
  failed,
  find,
  grantsOf,
  item,
  refusedOf,
  showDefinition,
  target,
  where,
  type Ctx,
  type Entry,
} from './command-context';

export { SCHEME, DocumentProvider } from './review';
export { refOf, type Ctx } from './command-context';
export type { ServerRef } from '../trust/approval/server-ref';

const approve =
  (ctx: Ctx) =>
  async (arg?: unknown): Promise<boolean> => {
    const x = await target(ctx, arg, isApprovable, vscode.l10n.t('Approve which server? Its exact definition is shown first.'));
    if (!x) return false;
    const s = x.server;
    if (!isApprovable(s) || !s.pinned) {
      void vscode.window.showWarningMessage(
        vscode.l10n.t('MCP Gate: "{0}" cannot be approved: {1}', escapeText(s.name), escapeText(s.reason)),
      );
      return false;
    }
    // An npm launch: the exact lock is resolved first, shown, and recorded as shown (never resolved again). A
    // container launch by tag: its digest is read first (src/trust/packages/image-pin.ts), shown, and recorded as shown.
    let shown: { lock?: NpmLock; minAge?: MinAge; image?: ImagePin };
    try {
      const minAge = minAgeOf(x);
      const lock = npmLaunchOf(s)
        ? await resolve(x, (signal) => lockForApproval(x.folder.input, s, { signal, npm: npmOps(ctx) }), 'approved')
        : undefined;
      const container = imageLaunchOf(s);
      const image = container
        ? await withResolution(
            vscode.l10n.t('MCP Gate: reading the digest of {0} for "{1}"…', escapeText(container.image), escapeText(s.name)),
            () => imagePinForApproval(x.folder.input, s),
            (why) =>
              vscode.l10n.t(
                'reading the digest of {0} for "{1}" {2}; nothing was approved.',
                escapeText(container.image),
                escapeText(s.name),
                why,
              ),
          )
        : undefined;
      shown = { lock, minAge, image };
    } catch (e) {
      return failed(e);
    }
    const review = new Review(ctx.docs);
    let yes: boolean;
    try {
      const here = ctx.service.cannotStartHere();
      const cannot = here?.servers.some(
        (c) => c.server.name === s.name && c.server.source === s.source && c.folder.folder === x.folder.folder,
      )
        ? here
        : undefined;
      // The risk headline is the review's first line (and the modal's first), once: not in the definition below it.
      const risk = riskLine(s, shown.lock);
      const digest = shortDigest(s.pinned.digest);
      const short =
        `${risk?.concat('\n') ?? ''}${summary(s)}\n${vscode.l10n.t('declared in {0}', where(x))} · ${digest}${packageLine(shown)}` +
        (cannot
          ? `\n\n${vscode.l10n.t('It cannot start on this machine until the sandbox works: {0}. Fix: {1}', cannot.reason, cannot.install ?? cannot.fix)}`
          : '');
      const changes = changedSinceApproval(s) ? changeDocuments(s, shown, refusedOf(ctx, x), approvedWorkspaceOf(ctx, x)) : [];
      const sides = vscode.l10n.t('approved ↔ now');
      const definition = serverText(s, grantsOf(ctx, x), { ...shown, riskAbove: !!risk });
      if (changes.length) {
        // The code first: the multi-file diff in front, the review document (the decision) the tab beside it.
        const title = vscode.l10n.t(
          '"{0}" changed since it was approved ({1})',
          escapeText(s.name),
          s.record ? relativeTime(s.record.decidedAt) : '',
        );
        const view = await review.document(
          s,
          vscode.l10n.t('{0} — approve the change?', s.name),
          reviewText(`${title}. ${Review.changedHeading(s, changes, sides)}`, short, definition, risk),
        );
        await review.diffs(s, changes, sides);
        yes = await ctx.prompts.confirmChange(
          title,
          vscode.l10n.t('Approve these changes to "{0}" · {1}', escapeText(s.name), digest),
          short,
          undefined,
          view,
        );
      } else {
        const message = vscode.l10n.t('Approve "{0}" from {1} exactly as shown in the editor?', escapeText(s.name), escapeText(s.source));
        const view = await review.document(s, vscode.l10n.t('{0} — approve?', s.name), reviewText(message, short, definition, risk));
        yes = await ctx.prompts.confirm(message, short, vscode.l10n.t('Approve "{0}" · {1}', escapeText(s.name), digest), view);
      }
    } catch (e) {
      await review.close();
      return failed(e);
    }
    try {
      if (!yes) return false;
      await approveOrReject(x.folder.input, s.name, s.source, 'approved', {
        log: ctx.service.log,
        expectedDigest: s.pinned.digest,
        lock: shown.lock,
        image: shown.image,
        after: () => refresh(ctx),
      });
      void vscode.window.showInformationMessage(vscode.l10n.t('MCP Gate: approved "{0}".', escapeText(s.name)));
      return true;
    } catch (e) {
      return failed(e);
    } finally {
      await review.close();
    }
  };

/**
 * A review document: the risk headline on its first line (when there is one), then the question (the choices are
 * the lenses above the first line and below the last), the short summary (without the headline: it is
 * shown once, first), then everything that is decided, to its end (the definition without the headline: once, first).
 */
function reviewText(question: string, short: string, body: string, risk?: string): string {
  const rule = '─'.repeat(80);
  const header = risk && short.startsWith(`${risk}\n`) ? short.slice(risk.length + 1) : short;
  return `${risk ? `${risk}\n` : ''}${question}\n${vscode.l10n.t('Read it to the end; choose above the first line or below the last. Closing this tab means Not now.')}\n${rule}\n${header}\n${rule}\n\n${body.replace(/\n*$/, '\n')}\n${rule}\n${vscode.l10n.t('End of the review of "{0}".', escapeText(question))}\n`;
}

/** The npm libraries run in a worker thread (src/host/workers/lock-worker.ts), not in the extension host. */
function npmOps(ctx: Ctx) {
  return packageWorker(ctx.context);
}

function minAgeOf(x: Entry): MinAge | undefined {
  return x.folder.report ? minReleaseAge(x.folder.report) : undefined;
}

/** The modal's line for the lock: name, exact version, integrity shortened, dependencies, age (and the verdict). */
function packageLine(shown: { lock?: NpmLock; minAge?: MinAge; image?: ImagePin }): string {
  if (shown.image)
    return `\n${vscode.l10n.t('image {0}', escapeText(shown.image.pinned ?? `${shown.image.image}: ${shown.image.why ?? 'not pinned'}`))}`;
  if (!shown.lock) return '';
  const verdict = minAgeVerdict(shown.lock, shown.minAge);
  return `\n${vscode.l10n.t('package {0}', escapeText(lockSummary(shown.lock)))}${verdict ? `\n${escapeText(verdict)}` : ''}`;
}

/** Resolves a server's package under a cancellable, time-bounded progress notification (./resolving.ts). */
function resolve<T>(x: Entry, run: (signal: AbortSignal) => Promise<T>, verb: 'approved' | 'updated'): Promise<T> {
  const s = x.server;
  const spec = npmLaunchOf(s)?.spec ?? s.name;
  const registry = registryOf(x.folder.input.machine.home, x.folder.input.machine.env);
  return withResolution(
    vscode.l10n.t('MCP Gate: resolving {0} for "{1}" at {2}…', escapeText(spec), escapeText(s.name), registry),
    run,
    (why) =>
      verb === 'approved'
        ? vscode.l10n.t(
            '"{0}" ({1}) was not approved: resolving {2} at {3} {4}. Nothing was recorded; check that the registry answers, then approve it again.',
            escapeText(s.name),
            escapeText(s.source),
            escapeText(spec),
            registry,
            why,
          )
        : vscode.l10n.t(
            '"{0}" ({1}) was not updated: resolving {2} at {3} {4}. It keeps running its approved package; check that the registry answers, then update it again.',
            escapeText(s.name),
            escapeText(s.source),
            escapeText(spec),
            registry,
            why,
          ),
  );
}

/**
 * Update Pinned Package…: resolves an approved npm server's spec again, opens the new lock against the approved
 * one in the multi-file diff editor (for a small package, each changed file first), and records the new lock only
 * when the person chooses to in the review document (no key press approves). True when the new lock was approved.
 */
const updatePackage =
  (ctx: Ctx) =>
  async (arg?: unknown): Promise<boolean> => {
    const x = await target(
      ctx,
      arg,
      isUpdatable,
      vscode.l10n.t('Update which pinned package? The registry is asked again and what changed is shown first.'),
    );
    if (!x) return false;
    const s = x.server;
    if (!isUpdatable(s) || !s.pinned) {
      void vscode.window.showWarningMessage(
        vscode.l10n.t('MCP Gate: "{0}" has no approved package lock to update ({1}).', escapeText(s.name), escapeText(s.reason)),
      );
      return false;
    }
    let minAge: MinAge | undefined;
    let u: Awaited<ReturnType<typeof planUpdate>>;
    try {
      minAge = minAgeOf(x);
      u = await resolve(x, (signal) => planUpdate(x.folder.input, s, { signal, npm: npmOps(ctx) }), 'updated');
    } catch (e) {
      return failed(e);
    }
    if (u.upToDate && !changedSinceApproval(s)) {
      void vscode.window.showInformationMessage(
        vscode.l10n.t(
          'MCP Gate: "{0}" is up to date: the registry resolves {1} to the approved {2} {3}.',
          escapeText(s.name),
          escapeText(u.spec),
          escapeText(u.old.name),
          escapeText(u.old.version),
        ),
      );
      return false;
    }
    const review = new Review(ctx.docs);
    let yes: boolean;
    try {
      const sides = vscode.l10n.t('approved ↔ update');
      const changes = [...updateDocuments(u, minAge), ...changeDocuments(s, undefined, undefined, approvedWorkspaceOf(ctx, x))];
      const title = vscode.l10n.t(
        'Update "{0}": {1} {2} → {3}',
        escapeText(s.name),
        escapeText(u.old.name),
        escapeText(u.old.version),
        escapeText(u.fresh.version),
      );
      const line = packageLine({ lock: u.fresh, minAge }).slice(1);
      const view = await review.document(
        s,
        vscode.l10n.t('{0} — approve the update?', s.name),
        reviewText(`${title}. ${Review.changedHeading(s, changes, sides)}`, line, changes[0].now),
      );
      await review.diffs(s, changes, sides);
      yes = await ctx.prompts.confirmChange(
        title,
        vscode.l10n.t(
          'Approve "{0}" running {1} {2} · {3}',
          escapeText(s.name),
          escapeText(u.fresh.name),
          escapeText(u.fresh.version),
          shortDigest(u.fresh.integrity),
        ),
        line,
        {
          label: vscode.l10n.t('Not now: keep {0} {1}', escapeLabel(u.old.name), escapeLabel(u.old.version)),
          detail: vscode.l10n.t('Nothing is recorded; it keeps running the approved package.'),
        },
        view,
      );
    } catch (e) {
      await review.close();
      return failed(e);
    }
    try {
      if (!yes) return false;
      await approveOrReject(x.folder.input, s.name, s.source, 'approved', {
        log: ctx.service.log,
        expectedDigest: s.pinned.digest,
        lock: u.fresh,
        detail: `update ${u.old.name} ${u.old.version} → ${u.fresh.version} ${u.fresh.integrity}`,
        after: () => refresh(ctx),
      });
      void vscode.window.showInformationMessage(
        vscode.l10n.t('MCP Gate: "{0}" now runs {1} {2}.', escapeText(s.name), escapeText(u.fresh.name), escapeText(u.fresh.version)),
      );
      return true;
    } catch (e) {
      return failed(e);
    } finally {
      await review.close();
    }
  };

const reject =
  (ctx: Ctx) =>
  async (arg?: unknown): Promise<boolean> => {
    const x = await target(ctx, arg, isRejectable, vscode.l10n.t('Reject which server?'));
    if (!x) return false;
    if (!isRejectable(x.server)) {
      void vscode.window.showWarningMessage(
        vscode.l10n.t('MCP Gate: "{0}" cannot be rejected: {1}', escapeText(x.server.name), escapeText(x.server.reason)),
      );
      return false;
    }
    const yes = await ctx.prompts.confirm(
      vscode.l10n.t('Reject "{0}" from {1}?', escapeText(x.server.name), escapeText(x.server.source)),
      vscode.l10n.t('It will not run, and MCP Gate will not ask about it again, until you approve or reset it.'),
      vscode.l10n.t('Reject'),
    );
    if (!yes) return false;
    try {
      await approveOrReject(x.folder.input, x.server.name, x.server.source, 'rejected', {
        log: ctx.service.log,
        after: () => refresh(ctx),
      });
      return true;
    } catch (e) {
      return failed(e);
    }
  };

/** Returns servers to pending. 'all': every server of every folder of the workspace. Returns how many. */
const resetCmd =
  (ctx: Ctx) =>
  async (arg?: unknown): Promise<number> => {
    let targets: { folder: FolderState; name?: string; source?: string }[];
    const ref = asRef(arg);
    if (arg === 'all') targets = ctx.service.folders().map((folder) => ({ folder }));
    else if (ref) {
      const x = find(ctx, ref);
      targets = x ? [{ folder: x.folder, name: x.server.name, source: x.server.source }] : [];
    } else {
      const all = {
        label: `$(clear-all) ${vscode.l10n.t('Every server of this workspace')}`,
        description: '',
        detail: undefined as string | undefined,
        item: 'all' as const,
      };
      const items = [
        all,
        ...ctx.service
          .servers()
          .filter((x) => x.server.record)
          .map((x) => item(ctx, x)),
      ];
      const chosen = await vscode.window.showQuickPick(items, { placeHolder: vscode.l10n.t('Return which server to pending?') });
      if (!chosen) return 0;
      targets =
        chosen.item === 'all'
          ? ctx.service.folders().map((folder) => ({ folder }))
          : [{ folder: chosen.item.folder, name: chosen.item.server.name, source: chosen.item.server.source }];
    }
    let removed = 0;
    try {
      for (const t of targets) removed += (await reset(t.folder.input, t.name, t.source, { log: ctx.service.log })).length;
    } catch (e) {
      failed(e);
    }
    refresh(ctx);
    return removed;
  };

function refresh(ctx: Ctx): void {
  ctx.service.refresh(true);
  ctx.decided();
}

const showDefinitionCmd =
  (ctx: Ctx) =>
  async (arg?: unknown): Promise<string | undefined> => {
    const x = await target(ctx, arg, () => true, vscode.l10n.t("Show which server's definition?"));
    if (!x) return undefined;
    if (
      changedSinceApproval(x.server) &&
      (await new Review(ctx.docs).diffs(
        x.server,
        changeDocuments(x.server, undefined, refusedOf(ctx, x), approvedWorkspaceOf(ctx, x)),
        vscode.l10n.t('approved ↔ now'),
      )) > 0
    )
      return serverText(x.server, grantsOf(ctx, x));
    await showDefinition(ctx, x);
    return serverText(x.server, grantsOf(ctx, x));
  };

const doctor = (ctx: Ctx) => async (): Promise<string> => {
  const { service } = ctx;
  const parts = service
    .folders()
    .map((f) =>
      f.report
        ? `${doctorText(f.report, 'VS Code globalStorage', VSCODE_WORDS)}\n\n${policyText(service.policy(f), () => false, VSCODE_WORDS)}\n\n${sandboxText(f.report, service.policy(f), os.homedir(), service.probeSandbox())}`
        : `${f.folder.uri.fsPath}: ${f.error}`,
    );
  const text = parts.length ? `${parts.join('\n\n')}\n\n${routingText(service)}` : vscode.l10n.t('No workspace folder is open.');
  await showDocument(ctx.docs.show('/MCP Gate Doctor', text), { preview: true });
  return text;
};

function secretNames(ctx: Ctx): string[] {
  return [...new Set(ctx.service.folders().flatMap((f) => ctx.service.policy(f).secrets.map((e) => e.name)))];
}

const setSecret =
  (ctx: Ctx) =>
  async (name?: string): Promise<boolean> => {
    const names = secretNames(ctx);
    const chosen =
      name ??
      (names.length
        ? await vscode.window.showQuickPick(names, { placeHolder: vscode.l10n.t('Which secret from mcpGate.secrets?') })
        : undefined);
    if (!chosen) {
      if (!names.length)
        void vscode.window.showInformationMessage(vscode.l10n.t('MCP Gate: the secrets block (mcpGate.secrets) names no secret yet.'));
      return false;
    }
    const value = await ctx.prompts.secretValue(chosen);
    if (!value) return false;
    await ctx.service.setSecret(chosen, value);
    ctx.service.log.write({ kind: 'secret.set', detail: `secret ${chosen} set` });
    return true;
  };

const clearSecret =
  (ctx: Ctx) =>
  async (name?: string): Promise<boolean> => {
    const names = secretNames(ctx);
    const chosen =
      name ?? (names.length ? await vscode.window.showQuickPick(names, { placeHolder: vscode.l10n.t('Clear which secret?') }) : undefined);
    if (!chosen) return false;
    await ctx.service.clearSecret(chosen);
    ctx.service.log.write({ kind: 'secret.clear', detail: `secret ${chosen} cleared` });
    return true;
  };

/** The exchange log: the output channel that carries every mcp.request, tool.* and gate.* event. */
const showLog = (ctx: Ctx) => () => ctx.service.channel.show(true);

const openPanel = (ctx: Ctx) => () => {
  TrustPanel.show(ctx.context, ctx.service);
};

const routeVsCodeServers = (ctx: Ctx) => () => routeThroughGate(ctx.service, ctx.docs);

/** Reopens the window through MCP Gate's own workspace file, out of a repository's reach (./routing.ts). */
const reopen = (ctx: Ctx) => (opts?: { open?: boolean }) => reopenThroughGate(ctx.service, opts?.open !== false);

/**
 * When the sandbox cannot start here: a terminal with the command that installs bubblewrap typed in, not run (the
 * person presses Enter; sudo asks for their password there), or the fix in words with a Copy button where MCP Gate
 * knows no package manager. Returns what it did, for the tests.
 */
const installSandbox = (ctx: Ctx) => async (): Promise<'works' | 'terminal' | 'told'> => {
  const p = sandboxAvailable({ refresh: true });
  if (p.ok) {
    void vscode.window.showInformationMessage(
      vscode.l10n.t('MCP Gate: the sandbox works here (bubblewrap {0} at {1}).', p.version, p.bwrap),
    );
    ctx.service.refresh(true);
    return 'works';
  }
  if (p.install) {
    const term = vscode.window.createTerminal({ name: vscode.l10n.t('MCP Gate: install bubblewrap') });
    term.show();
    term.sendText(p.install, false);
    void vscode.window.showInformationMessage(
      vscode.l10n.t('MCP Gate typed "{0}" into a terminal: press Enter there to run it, then MCP Gate checks again by itself.', p.install),
    );
    return 'terminal';
  }
  const copy = vscode.l10n.t('Copy the fix');
  if (
    (await vscode.window.showWarningMessage(
      vscode.l10n.t('MCP Gate: repository servers cannot start here: {0}. Fix: {1}', p.reason, p.fix),
      copy,
    )) === copy
  )
    await vscode.env.clipboard.writeText(p.fix);
  return 'told';
};

/** Every command, by id. */
export const COMMANDS: Record<CommandId, (ctx: Ctx) => (...args: never[]) => unknown> = {
  [CMD.openPanel]: openPanel,
  [CMD.approve]: approve,
  [CMD.reject]: reject,
  [CMD.reset]: resetCmd,
  [CMD.updatePackage]: updatePackage,
  [CMD.showDefinition]: showDefinitionCmd,
  [CMD.doctor]: doctor,
  [CMD.setSecret]: setSecret,
  [CMD.clearSecret]: clearSecret,
  [CMD.showLog]: showLog,
  [CMD.routeVsCodeServers]: routeVsCodeServers,
  [CMD.reopenThroughGate]: reopen,
  [CMD.installSandbox]: installSandbox,
  [CMD.reviewFile]: (ctx: Ctx) => (arg?: unknown) => reviewFile(ctx.service, arg),
  [CMD.serverActions]: (ctx: Ctx) => (arg?: unknown) => showServerActions(ctx.service, arg),
  [CMD.tryTool]: (ctx: Ctx) => (arg?: TryArgs) => tryTool(ctx.service, ctx.docs, ctx.gateway, arg ?? {}),
};

export function registerCommands(ctx: Ctx): void {
  for (const [id, factory] of Object.entries(COMMANDS)) ctx.context.subscriptions.push(vscode.commands.registerCommand(id, factory(ctx)));
}
