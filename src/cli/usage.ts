// The CLI's commands by id, each with its usage line, and the usage text made from them, with the exit codes (those
// of `check` too: its categories and their bits). A command's code is in ./commands.ts, one function per id (or a
// file of its own it calls, such as ./check.ts); adding a command means an id and a help entry here and its
// function there.

export const COMMAND_IDS = [
  'init',
  'list',
  'get',
  'approve',
  'update',
  'reject',
  'reset',
  'enable',
  'disable',
  'remove',
  'doctor',
  'check',
  'approvals',
  'explain',
  'tools',
  'call',
  'log',
  'install',
  'uninstall',
  'serve',
] as const;
export type CommandId = (typeof COMMAND_IDS)[number];

export function isCommandId(s: string): s is CommandId {
  return (COMMAND_IDS as readonly string[]).includes(s);
}

/** The commands section of the usage text, in order: the commands an entry covers, their synopsis, what they do. */
export const COMMAND_HELP: readonly { ids: readonly CommandId[]; usage: string; what: readonly string[] }[] = [
  { ids: ['init'], usage: 'init', what: ['write your user configuration (commented examples for --project), if none exists'] },
  { ids: ['list'], usage: 'list [--json]', what: ['every declared server with its scope, source and state'] },
  { ids: ['get'], usage: 'get <server>', what: ["one server's exact definition, state, pinned files, and diff if changed"] },
  { ids: ['approve'], usage: 'approve <server> [--yes]', what: ['show the exact definition, then record approval (asks unless --yes)'] },
  {
    ids: ['update'],
    usage: 'update <server> [--yes]',
    what: [
      "resolve an approved npm server's package again, show the version and file",
      'diff, then record approval of the new lock (asks unless --yes); for a container',
      'image: pull its tag again and show the digest it names now',
    ],
  },
  { ids: ['reject'], usage: 'reject <server>', what: ['record that this server must not run'] },
  { ids: ['reset'], usage: 'reset <server> | --all', what: ['return a server (or every server of the project) to pending'] },
  {
    ids: ['enable', 'disable', 'remove'],
    usage: 'enable|disable|remove <server>',
    what: ["edit a server in MCP Gate's own configuration (others: names the file to edit)"],
  },
  { ids: ['doctor'], usage: 'doctor [--json]', what: ['what is declared, imported, unreadable, blocked, and what needs review'] },
  {
    ids: ['check'],
    usage: 'check [--json] [--fail-on LIST] [--skip DIR]...',
    what: [
      'for CI: servers pending, changed since approval, rejected or blocked, sources',
      'that cannot be read, pre-approval attempts for other agents; the exit code adds',
      'the bit of each category of --fail-on that has an entry (default: all four)',
    ],
  },
  {
    ids: ['approvals'],
    usage: 'approvals export|import …',
    what: [
      'share approvals with a team: `approvals export --out FILE --key KEY --as NAME',
      "[<server>]` writes the project's approvals to a team file, each signed with your",
      'SSH key; `approvals import FILE [--allowed-signers F]` records each entry signed',
      'by a key of your allowed-signers file whose digest is what would run here',
    ],
  },
  {
    ids: ['explain'],
    usage: 'explain <action> [--scope user|repository] [--args JSON]',
    what: [
      'the decision for an action, the rule that made it, the rule that',
      'would permit it; for your user-scope servers (default) or for the repository',
      'servers of --project (rules whose "project" is that folder or "*"); --args:',
      'a tool call\'s arguments, checked against the deciding rule\'s "args"',
    ],
  },
  { ids: ['tools'], usage: 'tools <server>', what: ['start the server through the gate and list its tools with what the policy says'] },
  { ids: ['call'], usage: 'call <server> <tool> [--args JSON]', what: ['call one tool through the gate (ask = refusal here)'] },
  {
    ids: ['log'],
    usage: 'log [--server S] [--outcome O] [--json] [--verify]',
    what: [
      'the exchange log, oldest first; with --verify: check its hash chain, naming each',
      'line changed, removed, moved or added since MCP Gate wrote it (exit 1 if one is)',
    ],
  },
  {
    ids: ['install'],
    usage: 'install <agent> [--yes]',
    what: [
      "route an agent's project servers through `mcp-gate serve` (claude, codex, gemini,",
      'cursor): shows the change to its user-level files, keeps a backup;',
      "`install claude|gemini|codex --managed` (as root): the agent's administrator",
      'file instead (managed settings, system settings, requirements.toml)',
    ],
  },
  {
    ids: ['uninstall'],
    usage: 'uninstall <agent> [--yes]',
    what: ['take that change back (the original file, byte for byte, if untouched since)', '(`--managed`: the administrator file)'],
  },
  {
    ids: ['serve'],
    usage: 'serve [<server>]',
    what: [
      'a stdio MCP server for an agent: one server, or every server of the project that',
      'may run (tools as <server>__<tool>), through the gate and the policy',
    ],
  },
];

/** What `mcp-gate check` sorts its findings into (./check.ts), in the order it reports them; --fail-on names them. */
export const CHECK_CATEGORIES = ['pending', 'changed', 'blocked', 'preapproval'] as const;
export type CheckCategory = (typeof CHECK_CATEGORIES)[number];

/** The exit code bit of each category; `check` exits with the sum of those in --fail-on that have an entry. */
export const CHECK_BITS: Record<CheckCategory, number> = { pending: 8, changed: 16, blocked: 32, preapproval: 64 };

const COLUMN = 30;

function helpLines(e: (typeof COMMAND_HELP)[number]): string {
  const first = e.usage.length <= COLUMN ? `  ${e.usage.padEnd(COLUMN)} ${e.what[0]}` : `  ${e.usage}   ${e.what[0]}`;
  return [first, ...e.what.slice(1).map((l) => `${' '.repeat(COLUMN + 3)}${l}`)].join('\n');
}

export const USAGE = `usage: mcp-gate <command> [options]

commands:
${COMMAND_HELP.map(helpLines).join('\n')}

options:
  --project DIR    the workspace folder (default: the current folder)
  --store DIR      the approval store folder (default: MCP_GATE_STORE, else the extension's globalStorage)
  --source FILE    which file, when a server name is declared in several
  --fail-on LIST   check: the categories that fail it (pending,changed,blocked,preapproval)
  --team FILE      check: a team file whose signed approvals count (see approvals)
  --skip DIR       check: a folder of the checkout not walked for projects of its own
                   (a test suite's fixtures); said in the output; may be repeated
  --allowed-signers FILE   approvals import, check --team: whose signatures you accept
                   (default: allowed_signers beside your MCP Gate configuration)
  -h, --help       this text

exit codes: 0 ok, 1 full block or refusal, 2 usage;
  check: 0 when no category of --fail-on has an entry, else the sum of the bits of
  those that have: ${CHECK_CATEGORIES.map((c) => `${CHECK_BITS[c]} ${c}`).join(', ')}; 1 when the approval store cannot be read`;
