// What a thread took in (taken.ts), told to the loader thread that loads ES modules for it (src/guard/CONTRACT.md,
// "Text turned into code"): a loader thread — module.register's, when the server registered hooks of its own, or on a
// Node with no other way — loads a data: import too, and cannot see what the thread it loads for took in. It is told
// through shared memory: [0] the state (1: took in, 2: started), [1] the length of [took.in as JSON] from byte 8.
// While one is told, names looked at are compared at once (it cannot ask that thread to compare them when it loads).

export interface Taken {
  p: string;
  rel: string | null;
  why: 'changed' | 'new' | 'scratch' | 'manifest';
  sum: string;
  /** How it differs, when not by its content (a name looked at: its metadata). */
  what?: string;
}

const SHARED_BYTES = 8192;
let shared: Int32Array | null = null;
let told: Int32Array | null = null;

/** This thread tells a loader thread from now: the memory to hand it (module.register's data). */
export function share(): SharedArrayBuffer {
  const sab = new SharedArrayBuffer(SHARED_BYTES);
  shared = new Int32Array(sab);
  return sab;
}

export const sharing = (): boolean => shared !== null;

/** What this thread took in and whether it started, written where the loader thread reads it. */
export function publish(tookIn: Taken | null, started: boolean): void {
  if (shared === null) return;
  if (tookIn !== null && (Atomics.load(shared, 0) & 1) === 0) {
    const t = tookIn;
    const bytes = Buffer.from(JSON.stringify([t.p, t.rel, t.why, t.sum, t.what ?? null]));
    const n = Math.min(bytes.length, SHARED_BYTES - 8);
    new Uint8Array(shared.buffer, 8, n).set(bytes.subarray(0, n));
    Atomics.store(shared, 1, n);
  }
  Atomics.store(shared, 0, (tookIn !== null ? 1 : 0) | (started ? 2 : 0));
}

/** In a loader thread: the memory the thread it loads for shared (the hooks' initialize). */
export function toldBy(sab: unknown): void {
  if (typeof SharedArrayBuffer === 'function' && sab instanceof SharedArrayBuffer && sab.byteLength === SHARED_BYTES)
    told = new Int32Array(sab);
}

/** In a loader thread: what the thread it loads for told, or null when none is told. */
export function readTold(): { in: Taken | null; started: boolean } | null {
  if (told === null) return null;
  const st = Atomics.load(told, 0);
  let taken: Taken | null = null;
  if (st & 1) {
    let t: unknown[] = [];
    try {
      const n = Atomics.load(told, 1);
      t = JSON.parse(Buffer.from(new Uint8Array(told.buffer, 8, n)).toString()) as unknown[];
    } catch {
      t = [];
    }
    taken = {
      p: String(t[0] ?? '(the thread this one loads for)'),
      rel: typeof t[1] === 'string' ? t[1] : null,
      why: t[2] === 'new' || t[2] === 'scratch' ? t[2] : 'changed',
      sum: String(t[3] ?? ''),
      ...(typeof t[4] === 'string' ? { what: t[4] } : {}),
    };
  }
  return { in: taken, started: (st & 2) !== 0 };
}
