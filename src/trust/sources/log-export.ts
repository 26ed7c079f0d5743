// Where the exchange log is exported (issue 47 item 3): `"logExport": { "endpoint": URL, "headers"?: { name: value } }`
// in the user's configuration (`mcpGate.logExport` in VS Code's user settings) or in the administrator's policy file,
// whose value wins. The endpoint is an OTLP/HTTP logs endpoint (`…/v1/logs`, protobuf); it must be http(s) and must
// not carry credentials in the URL (they would be shown wherever the URL is: put them in "headers"). A header value
// may be `${env:NAME}`, read from the environment of the process that exports (so no secret sits in a file). Every
// header value is a secret to MCP Gate: it is masked in everything MCP Gate writes.

/** A validated export target. */
export interface LogExportSetting {
  endpoint: string;
  /** As written: a value may still be `${env:NAME}` (see {@link resolveHeaders}). */
  headers: Record<string, string>;
}

/** The target in force and where it was set. */
export interface LogExportTarget extends LogExportSetting {
  /** The file (or settings group) that set it. */
  from: string;
  layer: 'admin' | 'user';
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const ENV_REF = /^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$/;
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Validates a `logExport` value; `where` names it for a person (`/etc/mcp-gate/policy.json:12: "logExport"`). The
 * problem, when there is one, names the setting and says what it must be.
 */
export function parseLogExport(v: unknown, where: string): { value: LogExportSetting } | { problem: string } {
  const shape = `must be { "endpoint": "https://collector.example:4318/v1/logs", "headers"?: { "name": "value" } }`;
  if (!isObj(v)) return { problem: `${where} ${shape}` };
  const extra = Object.keys(v).find((k) => k !== 'endpoint' && k !== 'headers');
  if (extra !== undefined) return { problem: `${where} has unknown key "${extra}"; it ${shape}` };
  if (typeof v.endpoint !== 'string' || v.endpoint === '')
    return { problem: `${where}: "endpoint" ${shape.replace('must be ', 'must be set, as in ')}` };
  let url: URL;
  try {
    url = new URL(v.endpoint);
  } catch {
    return {
      problem: `${where}: "endpoint" ${JSON.stringify(v.endpoint)} is not a URL; it must be an http:// or https:// OTLP/HTTP logs URL`,
    };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { problem: `${where}: "endpoint" must be an http:// or https:// OTLP/HTTP logs URL, not ${url.protocol}` };
  if (url.username || url.password)
    return {
      problem: `${where}: "endpoint" carries credentials in the URL, where they would be shown wherever the URL is; put them in "headers" (a value may be "\${env:NAME}")`,
    };
  if (url.hash) return { problem: `${where}: "endpoint" must not have a #fragment` };
  const headers: Record<string, string> = {};
  if (v.headers !== undefined) {
    if (!isObj(v.headers)) return { problem: `${where}: "headers" must be an object of header names and text values` };
    for (const [name, value] of Object.entries(v.headers)) {
      if (!HEADER_NAME.test(name)) return { problem: `${where}: "headers" has ${JSON.stringify(name)}, which is not a header name` };
      if (typeof value !== 'string' || /[\r\n\0]/.test(value))
        return { problem: `${where}: "headers"."${name}" must be text on one line (or "\${env:NAME}")` };
      headers[name] = value;
    }
  }
  return { value: { endpoint: url.href, headers } };
}

/**
 * The headers with every `${env:NAME}` read from `env`; a variable that is not set is a problem naming it (the export
 * is not started without it: a collector would refuse every record).
 */
export function resolveHeaders(
  target: LogExportTarget,
  env: Readonly<Record<string, string | undefined>>,
): { headers: Record<string, string> } | { problem: string } {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(target.headers)) {
    const ref = ENV_REF.exec(value);
    if (!ref) headers[name] = value;
    else {
      const got = env[ref[1]!];
      if (!got) return { problem: `${target.from}: "logExport"."headers"."${name}" reads \${env:${ref[1]}}, which is not set here` };
      headers[name] = got;
    }
  }
  return { headers };
}

/**
 * The target in force: the administrator's when it sets one (a user's cannot change or turn it off), else the first
 * user layer's (VS Code's user settings before the configuration file). Empty when none sets one.
 */
export function exportTarget(
  admin: { file: string; status: string; logExport?: LogExportSetting },
  users: readonly { file: string; logExport?: LogExportSetting }[],
): { logExport?: LogExportTarget } {
  if (admin.status === 'ok' && admin.logExport) return { logExport: { ...admin.logExport, from: admin.file, layer: 'admin' } };
  const user = users.find((u) => u.logExport);
  return user?.logExport ? { logExport: { ...user.logExport, from: user.file, layer: 'user' } } : {};
}

/**
 * The export in one line for doctor, naming the layer that decided (the endpoint without its query, user or
 * password: it may carry a token; header values are never shown).
 */
export function exportTargetLine(t: LogExportTarget | undefined, env: Readonly<Record<string, string | undefined>> = {}): string {
  if (!t) return 'log export   none (an administrator\'s or your own "logExport" sends the exchange log over OTLP/HTTP)';
  const { endpoint: shown, headers: names } = exportTargetShown(t);
  const headers = names.length ? `, headers ${names.join(', ')}` : '';
  const line =
    t.layer === 'admin'
      ? `log export   ${shown}${headers} (the administrator's policy ${t.from} decides; a user's "logExport" is not used)`
      : `log export   ${shown}${headers} (your configuration ${t.from})`;
  const resolved = resolveHeaders(t, env);
  return 'problem' in resolved ? `${line}\n             not exported from here: ${resolved.problem}` : line;
}

/** The target as it may be shown: the endpoint without query, user or password, the header names only. */
export function exportTargetShown(t: LogExportTarget): { endpoint: string; headers: string[]; layer: string; from: string } {
  let endpoint = t.endpoint;
  try {
    const u = new URL(t.endpoint);
    endpoint = `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    // validated when read: kept as it is
  }
  return { endpoint, headers: Object.keys(t.headers).sort(), layer: t.layer, from: t.from };
}
