// Waiting in the real extension host: poll a condition until it holds or a deadline passes (VS Code starts
// servers, writes settings and refreshes views asynchronously, so the suites wait for what a person would see).
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `f` every 150 ms until it returns something truthy, and returns it; throws naming `what` after `ms`. */
export async function waitFor<T>(what: string, f: () => T | undefined | false | Promise<T | undefined | false>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(150);
  }
}
