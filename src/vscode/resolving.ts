// Resolving a pinned package from VS Code: the registry is asked while a notification shows progress, which the
// person can cancel, and which stops on its own after RESOLVE_LIMIT_MS — nothing a repository names (a spec that
// resolves slowly, a huge dependency tree) keeps a review waiting in the extension host. The registry requests
// are aborted (src/trust/packages/npm-resolve.ts takes the signal; the package worker, src/host/workers/package-worker.ts, is ended); the
// review goes on only with a whole result.
import * as vscode from 'vscode';
import { workerOps } from '../host/workers/package-worker';
import { LockError, type NpmOps } from '../trust/packages/npm-lock';

/** The npm libraries as the extension runs them: in the package worker shipped beside it (dist/lock-worker.js). */
export function packageWorker(context: vscode.ExtensionContext): NpmOps {
  return workerOps(vscode.Uri.joinPath(context.extensionUri, 'dist', 'lock-worker.js').fsPath);
}

/** How long an approval or an update waits for the registry. */
export const RESOLVE_LIMIT_MS = 120_000;

/**
 * Runs `run` under a cancellable progress notification, at most RESOLVE_LIMIT_MS. When it is cancelled or too slow,
 * throws an Error with `stopped(why)` as its message ("cancelled", "took longer than 120 s").
 */
export async function withResolution<T>(
  title: string,
  run: (signal: AbortSignal) => Promise<T>,
  stopped: (why: string) => string,
  limitMs = RESOLVE_LIMIT_MS,
): Promise<T> {
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title, cancellable: true },
    async (_progress, token) => {
      const ac = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      let sub: vscode.Disposable | undefined;
      const halted = new Promise<never>((_resolve, reject) => {
        const stop = (why: string) => {
          const e = new LockError(stopped(why));
          ac.abort(e);
          reject(e);
        };
        sub = token.onCancellationRequested(() => stop(vscode.l10n.t('was cancelled')));
        timer = setTimeout(() => stop(vscode.l10n.t('took longer than {0} s', Math.ceil(limitMs / 1000))), limitMs);
      });
      const work = run(ac.signal);
      work.catch(() => undefined); // once halted, its own (later) failure is not news
      try {
        return await Promise.race([work, halted]);
      } finally {
        if (timer) clearTimeout(timer);
        sub?.dispose();
      }
    },
  );
}
