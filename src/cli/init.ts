// `mcp-gate init`: writes MCP Gate's user configuration file (MCP_GATE_CONFIG, else
// ~/.config/mcp-gate/config.json) as a commented starting point, creating its folder. Never overwrites: an existing
// file (or one created meanwhile) is refused with its name. The examples name the project given with --project
// (its real path), so uncommenting a rule is all it takes for that repository's servers.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The commented configuration; every example is a comment, so the file grants nothing until you edit it. */
export function initialConfig(project: string): string {
  const p = JSON.stringify(project);
  return `// MCP Gate's user configuration (user scope: only you write it; a repository never can).
// JSON with comments. Reference: docs/policy.md in MCP Gate's repository; check a rule with \`mcp-gate explain <action>\`.
{
  // Servers you declare yourself (trusted, not gated):
  // "servers": { "everything-http": { "url": "http://localhost:3001/mcp" } },

  // Rules: "allow" | "ask" | "deny"; most specific wins, deny wins a tie; no rule is deny.
  // A rule with "project" is for that repository's servers (compared by real path); without it, for your own
  // servers only.
  "rules": [
    // { "action": "mcp.everything.tool.echo", "decision": "allow", "project": ${p} },
    // { "action": "mcp.everything.network",   "decision": "allow", "project": ${p} }
  ]

  // Secrets (values come from MCP_GATE_SECRET_<NAME> in the CLI, from SecretStorage in VS Code):
  // , "secrets": [{ "name": "NOTION_TOKEN", "to": "mcp.notion.*", "bind": "header", "as": "Authorization" }]

  // A local-development exception: this one server may reach loopback over plain http:
  // , "localExceptions": [{ "server": "everything-http", "allowLoopback": true }]
}
`;
}

export type InitResult = { ok: true; file: string } | { ok: false; file: string; message: string };

export function writeInitialConfig(file: string, projectDir: string): InitResult {
  let project = path.resolve(projectDir);
  try {
    project = fs.realpathSync(project);
  } catch {
    return { ok: false, file, message: `${project}: no such folder (--project names the repository the example rules are for)` };
  }
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, initialConfig(project), { flag: 'wx' });
    return { ok: true, file };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return { ok: false, file, message: `${file} already exists; edit it (nothing was changed)` };
    return { ok: false, file, message: `${file}: cannot write (${(e as Error).message})` };
  }
}
