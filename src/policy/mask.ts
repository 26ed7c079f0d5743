// The one masking function every writer uses (log file, output channel, webview messages,
// CLI output, error messages, tool results): it replaces each known secret value, and the
// encoded forms it travels in, with a fixed mask.

/**
 * What a secret is replaced with. It holds no letters and is shorter than
 * {@link MIN_SECRET_LENGTH}, so no value that can be masked is part of the
 * mask itself (a mask like «secret» would leak a secret whose value is "secret").
 */
export const MASK = '***';

/**
 * Values shorter than this are not masked: masking a 1–3 character value would
 * rewrite every such character sequence in all output while protecting nothing
 * an attacker could not guess. {@link Masker.add} returns false for them so the
 * caller can say so.
 */
export const MIN_SECRET_LENGTH = 4;

// The shortest base64 fragment matched for a value that sits at an unknown
// offset inside a longer base64 text.
const MIN_BASE64_CORE = 8;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

function toUrlSafe(b64: string): string {
  return b64.replace(/\+/g, '-').replace(/\//g, '_');
}

/**
 * The base64 characters that encode `bytes` wherever they sit in a longer
 * byte string: for each of the three alignments, the groups made only of the
 * value's bytes. (The whole-value encoding is added separately.)
 */
function base64Cores(bytes: Buffer): string[] {
  const out: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const padded = Buffer.concat([Buffer.alloc(shift), bytes]);
    const enc = padded.toString('base64');
    const start = shift === 0 ? 0 : 4;
    const fullGroups = Math.floor(padded.length / 3);
    const core = enc.slice(start, fullGroups * 4);
    if (core.length >= MIN_BASE64_CORE) out.push(core);
  }
  return out;
}

/** Every form in which `value` is masked. */
function formsOf(value: string): string[] {
  const forms = new Set<string>([value]);
  const trimmed = value.trim();
  if (trimmed !== value) forms.add(trimmed);
  for (const v of [...forms]) {
    try {
      const uri = encodeURIComponent(v);
      forms.add(uri);
      forms.add(uri.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()));
      forms.add(new URLSearchParams({ v }).toString().slice(2));
    } catch {
      // a lone surrogate cannot be URL-encoded, so it never travels that way
    }
    forms.add(JSON.stringify(v).slice(1, -1));
    const bytes = Buffer.from(v, 'utf8');
    const b64 = bytes.toString('base64').replace(/=+$/, '');
    forms.add(b64);
    forms.add(toUrlSafe(b64));
    for (const core of base64Cores(bytes)) {
      forms.add(core);
      forms.add(toUrlSafe(core));
    }
  }
  return [...forms].filter((f) => f.length >= MIN_SECRET_LENGTH);
}

/**
 * Masks known secret values in text and JSON values.
 *
 * Forms masked for each value: the raw value (so `Bearer <value>` becomes
 * `Bearer ***`), the value without surrounding whitespace, encodeURIComponent
 * (upper- and lower-case hex) and form encoding, the JSON string escape, and
 * base64 and base64url with or without padding — also where the value sits
 * inside a longer base64 text (e.g. a Basic credential), down to a few edge
 * characters. Longer forms are replaced first.
 */
export class Masker {
  private readonly values = new Set<string>();
  private pattern: RegExp | undefined;

  /**
   * Register a secret value. Returns false (and masks nothing) for a value
   * shorter than {@link MIN_SECRET_LENGTH} or not a string.
   */
  add(value: string): boolean {
    if (typeof value !== 'string' || value.length < MIN_SECRET_LENGTH) return false;
    if (!this.values.has(value)) {
      this.values.add(value);
      this.pattern = undefined;
    }
    return true;
  }

  /** How many values are registered. */
  get size(): number {
    return this.values.size;
  }

  private regex(): RegExp | undefined {
    if (this.values.size === 0) return undefined;
    if (this.pattern === undefined) {
      const all = new Set<string>();
      for (const v of this.values) for (const f of formsOf(v)) all.add(f);
      const sorted = [...all].sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
      this.pattern = new RegExp(sorted.map(escapeRegExp).join('|'), 'g');
    }
    return this.pattern;
  }

  /** Replace every known value, in every form, with {@link MASK}. */
  mask(text: string): string {
    const str = typeof text === 'string' ? text : String(text);
    const re = this.regex();
    if (re === undefined) return str;
    re.lastIndex = 0;
    return str.replace(re, MASK);
  }

  /**
   * A masked copy of a JSON-like value: strings (and numbers that spell a
   * value) are masked, object keys too (two keys that mask alike keep the
   * later value). Errors become `{ name, message }` (masked); objects with
   * `toJSON` are masked as what they serialise to; cycles become "[Circular]".
   * `before`, when given, rewrites every string and key first (the session
   * cleans a server's text of hidden characters in the same walk).
   */
  maskDeep<T>(value: T, before?: (text: string) => string): T {
    return this.deep(value, new Set(), before) as T;
  }

  private deep(value: unknown, seen: Set<object>, before: ((text: string) => string) | undefined): unknown {
    if (typeof value === 'string') return this.mask(before ? before(value) : value);
    if (typeof value === 'number' || typeof value === 'bigint') {
      if (this.values.size === 0) return value;
      const s = String(value);
      const m = this.mask(s);
      return m === s ? value : m;
    }
    if (value === null || typeof value !== 'object') return value;
    if (seen.has(value)) return '[Circular]';
    seen.add(value);
    try {
      if (value instanceof Error) {
        return { name: this.mask(value.name), message: this.mask(value.message) };
      }
      if (Array.isArray(value)) return value.map((v) => this.deep(v, seen, before));
      const withJson = value as { toJSON?: unknown };
      if (typeof withJson.toJSON === 'function') {
        return this.deep((withJson.toJSON as () => unknown).call(value), seen, before);
      }
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(value)) {
        const key = this.mask(before ? before(k) : k);
        const v = this.deep((value as Record<string, unknown>)[k], seen, before);
        // "__proto__" (a key JSON.parse makes an own property) stays an own property, not the copy's prototype.
        if (key === '__proto__') Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
        else out[key] = v;
      }
      return out;
    } finally {
      seen.delete(value);
    }
  }

  /**
   * A masked copy of a thrown value as an Error: name, message, stack, own
   * enumerable properties (e.g. `code`) and `cause` are masked. Use it before an
   * error reaches any writer — Node quotes header values in some error messages.
   */
  maskError(error: unknown): Error {
    if (!(error instanceof Error)) return new Error(this.mask(String(error)));
    const out = new Error(this.mask(error.message));
    out.name = this.mask(error.name);
    out.stack = error.stack === undefined ? undefined : this.mask(error.stack);
    for (const [k, v] of Object.entries(error)) {
      if (k === 'message' || k === 'stack' || k === 'name' || k === 'cause') continue;
      (out as unknown as Record<string, unknown>)[this.mask(k)] = this.maskDeep(v);
    }
    if (error.cause !== undefined) {
      (out as Error & { cause?: unknown }).cause = error.cause instanceof Error ? this.maskError(error.cause) : this.maskDeep(error.cause);
    }
    return out;
  }
}

const GLOBAL_KEY = Symbol.for('mcp-gate.policy.defaultMasker');

/**
 * The process-wide masker. Every secret the process reads is added here, and
 * every writer masks through it. Kept on `globalThis` so two bundled copies of
 * this module in one process share it.
 */
export const defaultMasker: Masker = (() => {
  const g = globalThis as unknown as Record<symbol, Masker | undefined>;
  const existing = g[GLOBAL_KEY];
  // Duck-typed: another bundled copy has its own Masker class.
  if (existing && typeof existing.add === 'function' && typeof existing.mask === 'function') return existing;
  const created = new Masker();
  g[GLOBAL_KEY] = created;
  return created;
})();
