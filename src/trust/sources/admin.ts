// The administrator's layer (issue 27 item 1): one machine-wide file at a fixed system path, written by root, that a
// user's configuration cannot loosen. Read with the other sources (so a change to it re-checks like any other), and
// trusted only when it and its folder are owned by root and writable by nobody else — a file anyone else could
// have written says nothing about what the administrator wants, so it blocks every repository server (fail closed),
// as does a file that cannot be read or parsed. Its path is a constant: no variable or flag points MCP Gate
// elsewhere (a user who could would point it at an empty file).
//
// What it holds (JSONC):
//   - "rules": policy rules that only restrict: where one of them says deny or ask, that holds whatever the user's
//     rules say; an allow there grants nothing by itself (src/policy/decide.ts). Without "project" an administrator's
//     rule is for every server of that name, user-scope and repository alike.
//   - "blockedServers": [{ "server": name, "digest"?: "sha256:…", "why"?: text }] — servers that stay blocked
//     (every definition of that name, or only the one with that digest), whoever approved them.
//   - "escapeHatch": false — MCP_GATE_ALLOW_PROJECT=1 no longer trusts repository servers.
//   - "sandbox": { "required": true } — every local server runs contained (the user's own too); no opt-out applies.
//   - "packages": { "minReleaseAgeDays": N, "registries": [URL, …] } — an npm approval never picks a version
//     younger than N days (the user's own setting may only ask for more), and resolves only from a listed registry.
//   - "logExport": { "endpoint": URL, "headers"?: {…} } — where the exchange log is exported (OTLP/HTTP,
//     ./log-export.ts); it wins over the user's own "logExport".
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ConfigParseError, decodeUtf8, MAX_CONFIG_BYTES, parseJsonc } from './parse';
import type { TrackingReader } from './fsread';
import { parseLogExport, type LogExportSetting } from './log-export';

/** The administrator's policy file. Fixed: see the header. */
export const ADMIN_POLICY_FILE = '/etc/mcp-gate/policy.json';

export interface BlockedServer {
  server: string;
  digest?: string;
  why?: string;
}

export interface AdminPolicy {
  file: string;
  /** `absent`: no administrator's layer. `invalid`: it exists but cannot be trusted or used (see `problems`). */
  status: 'absent' | 'ok' | 'invalid';
  problems: string[];
  rules?: unknown;
  blockedServers: BlockedServer[];
  /** False when the administrator turned the escape hatch off. */
  escapeHatch: boolean;
  /** Every local server runs contained, the user's own too, and no opt-out applies. */
  sandboxRequired: boolean;
  /** npm packages: a minimum release age the user's cannot lower, the only registries approvals may resolve from. */
  packages: { minReleaseAgeDays?: number; registries?: string[] };
  /** Where the exchange log is exported; wins over the user's. */
  logExport?: LogExportSetting;
  lineOf?: (keyPath: string[]) => number;
}

const KEYS = new Set(['$schema', 'rules', 'blockedServers', 'escapeHatch', 'sandbox', 'packages', 'logExport']);
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Why a file or folder cannot carry the administrator's word: not root's, or writable by others. */
function ownershipProblem(p: string, what: string): string | undefined {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(p);
  } catch (e) {
    return `${what} ${p} cannot be examined (${(e as Error).message})`;
  }
  if (st.isSymbolicLink()) return `${what} ${p} is a symbolic link; the administrator's policy must be a file of its own`;
  if (st.uid !== 0) return `${what} ${p} is owned by uid ${st.uid}, not root`;
  if (st.mode & 0o022)
    return `${what} ${p} is writable by ${st.mode & 0o002 ? 'everyone' : 'its group'} (mode ${(st.mode & 0o7777).toString(8)})`;
  return undefined;
}

/** No administrator's layer at `file`. */
function noAdminPolicy(file: string): AdminPolicy {
  return { file, status: 'absent', problems: [], blockedServers: [], escapeHatch: true, sandboxRequired: false, packages: {} };
}

/** Reads the administrator's layer (absent when there is no file). Never throws. */
export function readAdminPolicy(reader: TrackingReader, file = ADMIN_POLICY_FILE): AdminPolicy {
  const none = noAdminPolicy(file);
  const r = reader.read(file, MAX_CONFIG_BYTES);
  if (r.kind === 'missing') return none;
  const invalid = (problems: string[]): AdminPolicy => ({ ...none, status: 'invalid', problems, escapeHatch: false });
  if (r.kind === 'error') return invalid([`${file} cannot be read: ${r.error.message}`]);
  const owner = [ownershipProblem(file, 'the file'), ownershipProblem(path.dirname(file), 'its folder')].filter((x): x is string => !!x);
  if (owner.length) return invalid(owner);
  let doc;
  try {
    doc = parseJsonc(file, decodeUtf8(file, r.data));
  } catch (e) {
    if (e instanceof ConfigParseError) return invalid([e.message]);
    throw e;
  }
  const v = doc.value;
  if (!isObj(v)) return invalid([`${file}: the top level must be an object`]);
  const problems: string[] = [];
  const at = (k: string[]) => `${file}:${doc.positionOf(k).line}`;
  for (const k of Object.keys(v))
    if (!KEYS.has(k))
      problems.push(
        `${at([k])}: unknown key "${k}"; the administrator's policy has "rules", "blockedServers", "escapeHatch", "sandbox", "packages" and "logExport"`,
      );
  if (v.escapeHatch !== undefined && typeof v.escapeHatch !== 'boolean')
    problems.push(`${at(['escapeHatch'])}: "escapeHatch" must be true or false`);
  if (
    v.sandbox !== undefined &&
    (!isObj(v.sandbox) || Object.keys(v.sandbox).some((k) => k !== 'required') || typeof v.sandbox.required !== 'boolean')
  ) {
    problems.push(`${at(['sandbox'])}: "sandbox" must be { "required": true | false }`);
  }
  let packages: AdminPolicy['packages'] = {};
  if (v.packages !== undefined) {
    const p = v.packages;
    if (!isObj(p) || Object.keys(p).some((k) => k !== 'minReleaseAgeDays' && k !== 'registries'))
      problems.push(`${at(['packages'])}: "packages" must be { "minReleaseAgeDays"?: days, "registries"?: [URL, …] }`);
    else {
      if (
        p.minReleaseAgeDays !== undefined &&
        (typeof p.minReleaseAgeDays !== 'number' || !Number.isFinite(p.minReleaseAgeDays) || p.minReleaseAgeDays < 0)
      )
        problems.push(`${at(['packages', 'minReleaseAgeDays'])}: "minReleaseAgeDays" must be a number of days, 0 or more`);
      const regs = p.registries;
      const urls: string[] = [];
      if (regs !== undefined) {
        if (!Array.isArray(regs) || regs.length === 0)
          problems.push(`${at(['packages', 'registries'])}: "registries" must be a list of registry URLs`);
        else
          for (const r of regs) {
            const u = typeof r === 'string' ? registryUrl(r) : undefined;
            if (!u) problems.push(`${at(['packages', 'registries'])}: ${JSON.stringify(r)} is not an http(s) registry URL`);
            else urls.push(u);
          }
      }
      packages = {
        ...(typeof p.minReleaseAgeDays === 'number' ? { minReleaseAgeDays: p.minReleaseAgeDays } : {}),
        ...(regs !== undefined ? { registries: urls } : {}),
      };
    }
  }
  const exported = v.logExport === undefined ? undefined : parseLogExport(v.logExport, `${at(['logExport'])}: "logExport"`);
  if (exported && 'problem' in exported) problems.push(exported.problem);
  const logExport = exported && 'value' in exported ? exported.value : undefined;
  const blocked: BlockedServer[] = [];
  if (v.blockedServers !== undefined) {
    if (!Array.isArray(v.blockedServers)) problems.push(`${at(['blockedServers'])}: "blockedServers" must be a list`);
    else {
      v.blockedServers.forEach((b, i) => {
        const where = at(['blockedServers', String(i)]);
        if (!isObj(b) || typeof b.server !== 'string' || b.server === '')
          return problems.push(`${where}: blockedServers[${i}] must be {"server": name, "digest"?: "sha256:…", "why"?: text}`);
        const extra = Object.keys(b).filter((k) => !['server', 'digest', 'why'].includes(k));
        if (extra.length) return problems.push(`${where}: blockedServers[${i}] has unknown key "${extra[0]}"`);
        if (b.digest !== undefined && (typeof b.digest !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(b.digest)))
          return problems.push(`${where}: blockedServers[${i}].digest must be "sha256:" and 64 hex digits`);
        if (b.why !== undefined && typeof b.why !== 'string') return problems.push(`${where}: blockedServers[${i}].why must be text`);
        blocked.push({ server: b.server, ...(b.digest ? { digest: b.digest as string } : {}), ...(b.why ? { why: b.why as string } : {}) });
      });
    }
  }
  if (problems.length) return invalid(problems);
  return {
    file,
    status: 'ok',
    problems: [],
    rules: v.rules,
    blockedServers: blocked,
    escapeHatch: v.escapeHatch !== false,
    sandboxRequired: isObj(v.sandbox) && v.sandbox.required === true,
    packages,
    ...(logExport ? { logExport } : {}),
    lineOf: (k) => doc.positionOf(k).line,
  };
}

/** Whether the administrator's layer lets npm packages come from this registry (any, when it names none). */
export function registryListed(admin: Pick<AdminPolicy, 'packages'>, registry: string): boolean {
  const allowed = admin.packages.registries;
  return !allowed || allowed.includes(registryUrl(registry) ?? registry);
}

/** A registry URL in one comparable form (lower-case scheme and host, one trailing slash), or undefined. */
export function registryUrl(text: string): string | undefined {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return undefined;
  if (u.username || u.password || u.search || u.hash) return undefined;
  return `${u.protocol}//${u.host}${u.pathname.endsWith('/') ? u.pathname : `${u.pathname}/`}`;
}
