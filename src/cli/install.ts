// `mcp-gate install <agent>` / `mcp-gate uninstall <agent>`: writes (and takes back) the agent's user-level
// configuration so the project servers it would start go through `mcp-gate serve` (each agent's adapter in
// src/trust/sources/tools/ says what changes, as pure edits of the files' text; this file does the I/O). Shows the
// exact change as a diff first; writes with --yes or after "yes" on a terminal, and refuses without one. Keeps a
// backup of every file it changes, with a manifest, in MCP Gate's store folder; running it again changes nothing;
// uninstall puts the original back byte for byte when the file is as install left it, and otherwise takes back only
// install's own keys. Never writes inside the project folder. `install <agent> --managed` is the administrator's
// variant (claude, gemini, codex): it changes the agent's own administrator file at the path the agent reads by
// default (Claude Code's managed settings, Gemini CLI's system settings, Codex CLI's requirements.toml), keeps that
// file's record and backup beside it (in an `mcp-gate` folder there, root's alone), and needs write access to that
// folder.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createTwoFilesPatch } from 'diff';
import writeFileAtomic from 'write-file-atomic';
import { agentName, agentTool, AGENTS, isAgent, isManagedAgent, MANAGED_AGENTS, managedEdits, type Agent } from '../trust/sources/tools';
import {
  AgentFileError,
  readJson,
  undoChanges,
  valueAt,
  type AgentFile,
  type FileChange,
  type GateCommand,
} from '../trust/sources/tools/edits';
import { installedGateOf } from '../trust/sources/tools/installed';
import { GATE_ENTRY_NAME, type Machine } from '../trust/sources/tools/tool';
import { err, out } from './output';

/** Agent files can be large (~/.claude.json keeps per-project history); anything larger is refused. */
export const MAX_AGENT_FILE_BYTES = 16 * 1024 * 1024;

interface ManifestFile {
  file: string;
  existed: boolean;
  backup?: string;
  /** sha256 of what install wrote. */
  written: string;
  sets?: { path: string[]; had: boolean; previous?: unknown }[];
  block?: string;
}

interface Manifest {
  agent: Agent;
  managed?: boolean;
  installedAt: string;
  files: ManifestFile[];
  /** Folders install created (deepest last): uninstall removes each that is empty again. */
  createdDirs?: string[];
}

export interface InstallCommand {
  verb: 'install' | 'uninstall';
  rest: string[];
  yes: boolean;
  /** The agent's administrator file instead of the user's files (an administrator's step). */
  managed: boolean;
  projectDir: string;
  /** Whether --project named the project (else it is the current folder). */
  projectGiven?: boolean;
  storeDir: string;
  home: string;
  env: Readonly<Record<string, string | undefined>>;
  gate?: GateCommand;
  ask(question: string): Promise<string | undefined>;
  isTTY: boolean;
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

export function readText(file: string): string | undefined {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new AgentFileError(`${file} cannot be read: ${(e as Error).message}`);
  }
  if (!st.isFile()) throw new AgentFileError(`${file} is not a regular file`);
  if (st.size > MAX_AGENT_FILE_BYTES) throw new AgentFileError(`${file} is ${st.size} bytes, over the ${MAX_AGENT_FILE_BYTES}-byte bound`);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(fs.readFileSync(file));
  } catch {
    throw new AgentFileError(`${file} is not valid UTF-8; nothing was changed`);
  }
}

/** The real path of a file that may not exist yet (its nearest existing folder resolved). */
function realTarget(file: string): string {
  let dir = path.dirname(path.resolve(file));
  const rest = [path.basename(file)];
  while (!fs.existsSync(dir) && path.dirname(dir) !== dir) {
    rest.unshift(path.basename(dir));
    dir = path.dirname(dir);
  }
  return path.join(fs.realpathSync(dir), ...rest);
}

function insideProject(file: string, projectDir: string): boolean {
  let project: string;
  try {
    project = fs.realpathSync(projectDir);
  } catch {
    project = path.resolve(projectDir);
  }
  const rel = path.relative(project, realTarget(file));
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** The folder of the package this CLI file belongs to (the nearest with a package.json), or undefined. */
function packageRoot(file: string): string | undefined {
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/**
 * The files the CLI needs beside it at run time: src/cli/context.ts loads the package worker from its own folder, and
 * the parts (the closure's parser, undici) are required from it when first needed, and the load guard's files
 * (src/host/sandbox/load-guard.ts finds them in `guard/` beside it) and the network shim (src/host/net/net-shim.ts finds it in
 * `netshim/` beside it). The same list as
 * scripts/build-options.mjs's CLI_FILES (a unit test holds them equal).
 */
export const CLI_FILES = [
  'cli.js',
  'lock-worker.js',
  'parser.js',
  'undici.js',
  'guard/node-guard.cjs',
  'guard/mcp_gate_guard.py',
  'guard/mcp_gate_guard_parts/state.py',
  'guard/mcp_gate_guard_parts/rule.py',
  'guard/mcp_gate_guard_parts/loaders.py',
  'guard/mcp_gate_guard_parts/reads.py',
  'guard/mcp_gate_guard_parts/places.py',
  'guard/mcp_gate_guard_parts/gitfiles.py',
  'guard/mcp_gate_guard_parts/compiles.py',
  'guard/mcp_gate_guard_parts/engines.py',
  'guard/mcp_gate_guard_parts/programs.py',
  'guard/mcp_gate_guard_parts/native.py',
  'guard/mcp_gate_guard_parts/children.py',
  'guard/mcp_gate_guard_parts/pickles.py',
  'guard/mcp_gate_guard_parts/audit.py',
  'guard/mcp_gate_guard_parts/installing.py',
  'guard/mcp_gate_guard_parts/cmdline.py',
  'guard/mcp_gate_guard_parts/command_lines.json',
  'netshim/net-shim.cjs',
];

/**
 * The command an agent runs to reach MCP Gate: one that keeps working when the checkout it was installed from moves
 * or is deleted. A CLI installed as a package (`npm i -g mcp-gate-<version>.tgz`: no `.git` beside its package.json)
 * is used where it is. One run from a checkout is first copied, with the package worker, into MCP Gate's own storage
 * (`<store>/cli/<sha256 of cli.js, 12>/`, the same folder for the same build), and the agent runs that copy. `write:
 * false` only computes it (doctor compares the agents' entries with it). The Node binary is this one's real path.
 */
export function defaultGateCommand(storeDir?: string, o: { write?: boolean; cli?: string } = {}): GateCommand {
  const cli = fs.realpathSync(o.cli ?? process.argv[1]);
  const root = packageRoot(cli);
  const checkout = root !== undefined && fs.existsSync(path.join(root, '.git'));
  if (!checkout || storeDir === undefined) return { command: fs.realpathSync(process.execPath), args: [cli, 'serve'] };
  const hash = sha(fs.readFileSync(cli, 'utf8'));
  const dir = path.join(storeDir, 'cli', hash.slice(0, 12));
  const target = path.join(dir, 'cli.js');
  // A copy is used only while its bytes are this build's; one that differs (changed on disk) is replaced.
  const intact = () =>
    CLI_FILES.every((name) => {
      try {
        return sha(fs.readFileSync(path.join(dir, name), 'utf8')) === sha(fs.readFileSync(path.join(path.dirname(cli), name), 'utf8'));
      } catch {
        return name !== 'cli.js' && !fs.existsSync(path.join(path.dirname(cli), name));
      }
    });
  if (o.write !== false && !intact()) {
    fs.rmSync(dir, { recursive: true, force: true });
    const tmp = `${dir}.${process.pid}.tmp`;
    fs.mkdirSync(tmp, { recursive: true, mode: 0o755 });
    for (const name of CLI_FILES) {
      const from = path.join(path.dirname(cli), name);
      if (!fs.existsSync(from)) continue;
      fs.mkdirSync(path.dirname(path.join(tmp, name)), { recursive: true });
      fs.copyFileSync(from, path.join(tmp, name));
    }
    fs.chmodSync(path.join(tmp, 'cli.js'), 0o755);
    try {
      fs.renameSync(tmp, dir);
    } catch {
      fs.rmSync(tmp, { recursive: true, force: true }); // another install made it meanwhile
    }
  }
  return { command: fs.realpathSync(process.execPath), args: [target, 'serve'] };
}

/**
 * `gate` when it runs this very build of the CLI (its file's bytes equal this one's) with a Node binary, else
 * undefined: a managed layer admits the user's own entry only when it is MCP Gate as installed now, never whatever
 * command a user's file names.
 */
export function sameBuildGate(gate: GateCommand | undefined, cli = process.argv[1]): GateCommand | undefined {
  if (!gate) return undefined;
  try {
    const mine = sha(fs.readFileSync(fs.realpathSync(cli), 'utf8'));
    if (sha(fs.readFileSync(gate.args[0], 'utf8')) !== mine) return undefined;
    return path.basename(fs.realpathSync(gate.command)).startsWith('node') ? gate : undefined;
  } catch {
    return undefined;
  }
}

function diffText(c: FileChange): string {
  return createTwoFilesPatch(
    c.before === undefined ? '/dev/null' : c.file,
    c.file,
    c.before ?? '',
    c.after,
    c.before === undefined ? '(new file)' : '',
    '',
    { context: 3 },
  );
}

/** Managed settings are read by every user's Claude Code: a new file is world-readable, its folder too. */
interface Modes {
  file: number;
  dir: number;
}
const USER_MODES: Modes = { file: 0o600, dir: 0o777 };
const MANAGED_MODES: Modes = { file: 0o644, dir: 0o755 };

function write(file: string, text: string | Buffer, modes: Modes = USER_MODES): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: modes.dir });
  writeFileAtomic.sync(file, text, { mode: fs.existsSync(file) ? fs.statSync(file).mode & 0o777 : modes.file });
}

/** The folders mkdir -p would create for a file, outermost first. */
function missingDirs(file: string): string[] {
  const dirs: string[] = [];
  for (let d = path.dirname(path.resolve(file)); !fs.existsSync(d) && path.dirname(d) !== d; d = path.dirname(d)) dirs.unshift(d);
  return dirs;
}

/** Whether this process may create or replace the file (write access to its nearest existing folder). */
function mayWrite(file: string): boolean {
  let d = path.dirname(path.resolve(file));
  while (!fs.existsSync(d) && path.dirname(d) !== d) d = path.dirname(d);
  try {
    fs.accessSync(d, fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** The machine the agents' paths are computed for (their own variables in `c.env`). */
function machineOf(c: Pick<InstallCommand, 'home' | 'env'>): Machine {
  return { home: c.home, env: c.env, platform: process.platform };
}

export async function installCommand(c: InstallCommand): Promise<number> {
  if (c.rest.length !== 1 || !isAgent(c.rest[0])) {
    // `claude-code`, `gemini-cli`, `Codex`: the agent whose name it holds.
    const near = c.rest.length === 1 ? AGENTS.find((a) => c.rest[0].toLowerCase().includes(a)) : undefined;
    err(`mcp-gate ${c.verb} takes one agent: ${AGENTS.join(', ')}${near ? ` — did you mean \`mcp-gate ${c.verb} ${near}\`?` : ''}`);
    return 2;
  }
  const agent = c.rest[0];
  if (c.managed && !isManagedAgent(agent)) {
    err(
      `mcp-gate ${c.verb} --managed is for ${MANAGED_AGENTS.join(', ')} (their administrator files); ${agentName(agent)} has no setting that keeps a project's MCP servers out`,
    );
    return 2;
  }
  const managed = c.managed && isManagedAgent(agent) ? managedEdits(agent) : undefined;
  const managedFile = managed?.file(process.platform);
  if (managed && managedFile === undefined) {
    err(
      `mcp-gate ${c.verb} ${agent} --managed: where ${agentName(agent)} reads its administrator file on ${process.platform} is not known to MCP Gate; nothing was changed`,
    );
    return 1;
  }
  const userFiles = agentTool(agent).agent.files(machineOf(c));
  const files: AgentFile[] =
    managed && managedFile !== undefined ? [userFiles[0], { file: managedFile, format: managed.format }] : userFiles;
  // Run from the home folder (or above it) with no --project, there is no repository to keep out of — unless
  // that folder is a git work tree (HOME set to a clone, or a home kept in git): then refused as before.
  const noProject = !c.projectGiven && insideProject(c.home, c.projectDir) && !fs.existsSync(path.join(c.projectDir, '.git'));
  for (const f of files) {
    if (!noProject && insideProject(f.file, c.projectDir)) {
      err(
        `mcp-gate: refused: ${f.file} is inside the project folder ${c.projectDir}; MCP Gate never writes into a repository. ${c.projectGiven ? 'Leave out --project (install needs none)' : 'Run it from another folder'}, or check that HOME (${c.home}) is your home, not a repository`,
      );
      return 1;
    }
  }
  const dir = managedFile !== undefined ? path.join(path.dirname(managedFile), 'mcp-gate') : path.join(c.storeDir, 'agents');
  const manifestFile = path.join(dir, c.managed ? 'install.json' : `${agent}.json`);
  if (c.managed && c.verb === 'uninstall' && !mayWrite(manifestFile)) {
    // Checked first: MCP Gate's record there is root's alone, so another user could not even see it.
    err(
      `mcp-gate: not changed: ${path.dirname(manifestFile)} is not writable by this user; \`mcp-gate uninstall ${agent} --managed\` is an administrator's step: run it as root`,
    );
    return 1;
  }
  let manifest: Manifest | undefined;
  if (fs.existsSync(manifestFile)) {
    try {
      manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as Manifest;
    } catch (e) {
      err(`mcp-gate: the install record ${manifestFile} cannot be read (${(e as Error).message}); nothing was changed`);
      return 1;
    }
  }
  try {
    if (c.verb === 'install') return await install(c, agent, files, manifest, dir, manifestFile);
    return await uninstall(c, agent, manifest, manifestFile);
  } catch (e) {
    if (e instanceof AgentFileError) {
      err(`mcp-gate: ${e.message}`);
      return 1;
    }
    throw e;
  }
}

async function confirm(c: InstallCommand, question: string): Promise<boolean> {
  if (c.yes) return true;
  if (!c.isTTY) {
    err('mcp-gate: not written: there is no terminal to ask; run again with --yes to write exactly the change shown');
    return false;
  }
  const a = await c.ask(`${question} Type "yes" to write: `);
  if (a === undefined || !/^(y|yes)$/i.test(a.trim())) {
    out('not written; nothing was changed');
    return false;
  }
  return true;
}

async function install(
  c: InstallCommand,
  agent: Agent,
  files: AgentFile[],
  manifest: Manifest | undefined,
  dir: string,
  manifestFile: string,
): Promise<number> {
  // A managed layer admits the command the user's own entry runs, if it has a working one (so that entry keeps
  // working under it), else the CLI where it is; a user-level install writes the stable command.
  const gate =
    c.gate ??
    (c.managed
      ? (sameBuildGate(installedGateOf(agent, readText, machineOf(c), fs.existsSync)) ?? defaultGateCommand())
      : defaultGateCommand(c.storeDir));
  const texts = new Map<string, string | undefined>();
  const read = (f: string) => {
    if (!texts.has(f)) texts.set(f, readText(f));
    return texts.get(f);
  };
  const how = c.managed ? `${agent} --managed` : agent;
  const managed = c.managed && isManagedAgent(agent) ? managedEdits(agent) : undefined;
  const all = managed ? managed.changes(read, files[0].file, files[1].file, gate) : agentTool(agent).agent.install(read, files, gate);
  const changes = all.filter((ch) => ch.after !== (ch.before ?? ''));
  if (!changes.length) {
    const shown = all.map((ch) => ch.file);
    out(
      `${agentName(agent)} already goes through MCP Gate: ${shown.join(', ')} ${shown.length === 1 ? 'is' : 'are'} as \`mcp-gate install ${how}\` leaves ${shown.length === 1 ? 'it' : 'them'}; nothing to change`,
    );
    return 0;
  }
  out(`mcp-gate install ${how} would change:\n`);
  for (const ch of changes) out(diffText(ch));
  const modes = c.managed ? MANAGED_MODES : USER_MODES;
  if (c.managed && !mayWrite(files[1].file)) {
    err(
      `mcp-gate: not written: ${path.dirname(files[1].file)} is not writable by this user; \`mcp-gate install ${agent} --managed\` is an administrator's step: run it as root (e.g. sudo, keeping HOME so that your own servers in ${files[0].file} are listed)`,
    );
    return 1;
  }
  if (!(await confirm(c, `\nWrite these changes to ${changes.map((ch) => ch.file).join(' and ')}?`))) return 1;

  const createdDirs = c.managed ? missingDirs(manifestFile) : [];
  if (c.managed) fs.mkdirSync(path.dirname(dir), { recursive: true, mode: modes.dir });
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const record: Manifest = manifest ?? { agent, ...(c.managed ? { managed: true } : {}), installedAt: new Date().toISOString(), files: [] };
  if (createdDirs.length) record.createdDirs = [...(record.createdDirs ?? []), ...createdDirs];
  for (const [i, ch] of changes.entries()) {
    let entry = record.files.find((f) => f.file === ch.file);
    if (!entry) {
      entry = { file: ch.file, existed: ch.before !== undefined, written: '' };
      if (ch.before !== undefined) {
        entry.backup = path.join(dir, `${agent}-${record.files.length + i + 1}-${path.basename(ch.file).replace(/^\./, '')}.orig`);
        fs.copyFileSync(ch.file, entry.backup); // the bytes as they are, for a byte-for-byte restore
        fs.chmodSync(entry.backup, 0o600);
      }
      record.files.push(entry);
    }
    if (ch.block !== undefined) entry.block = ch.block;
    if (ch.sets) {
      const before = readJson(ch.file, ch.before);
      entry.sets ??= [];
      for (const s of ch.sets) {
        if (entry.sets.some((x) => JSON.stringify(x.path) === JSON.stringify(s.path))) continue; // the first value is the original
        const previous = valueAt(before, s.path);
        // Absent before: undo removes the outermost key install created (an "mcpServers" it added goes too).
        let created = s.path;
        while (previous === undefined && created.length > 1 && valueAt(before, created.slice(0, -1)) === undefined)
          created = created.slice(0, -1);
        entry.sets.push({
          path: previous === undefined ? created : s.path,
          had: previous !== undefined,
          ...(previous !== undefined ? { previous } : {}),
        });
      }
    }
    entry.written = sha(ch.after);
    writeFileAtomic.sync(manifestFile, JSON.stringify(record, null, 2) + '\n', { mode: 0o600 }); // the record first: a failed write is still undoable
    write(ch.file, ch.after, modes);
    out(`wrote ${ch.file}${entry.backup ? ` (the original is kept as ${entry.backup})` : ' (new file)'}`);
  }
  if (managed) {
    out(
      `${agentName(agent)} now ${managed.effect}. Run it again after you add a server of your own; \`mcp-gate uninstall ${agent} --managed\` takes it back`,
    );
    if (managed.userEntryMissing?.(read, files[0].file))
      out(`${files[0].file} has no \`${GATE_ENTRY_NAME}\` server yet: run \`mcp-gate install ${agent}\` as that user to add it`);
  } else out(`${agentName(agent)} now starts \`mcp-gate serve\` for the folder it works in; \`mcp-gate uninstall ${agent}\` takes it back`);
  return 0;
}

async function uninstall(c: InstallCommand, agent: Agent, manifest: Manifest | undefined, manifestFile: string): Promise<number> {
  if (!manifest) {
    out(
      `nothing to uninstall: MCP Gate has no record of installing into ${agentName(agent)}${c.managed ? "'s managed settings" : ''} (${manifestFile})`,
    );
    return 0;
  }
  const plan: { f: ManifestFile; after?: string | Buffer; how: string; current?: string }[] = [];
  for (const f of manifest.files) {
    const current = readText(f.file);
    if (current !== undefined && sha(current) === f.written) {
      plan.push({
        f,
        current,
        after: f.backup ? fs.readFileSync(f.backup) : undefined,
        how: f.backup ? 'restored byte for byte from the backup' : 'removed (install created it)',
      });
    } else if (current === undefined) {
      plan.push({ f, how: 'already gone' });
    } else {
      plan.push({ f, current, after: undoChanges(current, f), how: 'changed since install: only what install set was taken back' });
    }
  }
  out(`mcp-gate uninstall ${agent}${c.managed ? ' --managed' : ''} would change:\n`);
  for (const p of plan) {
    if (p.current === undefined) continue;
    out(diffText({ file: p.f.file, before: p.current, after: p.after === undefined ? '' : p.after.toString() }));
  }
  if (!(await confirm(c, '\nWrite these changes?'))) return 1;
  for (const p of plan) {
    if (p.current === undefined) continue;
    if (p.after === undefined) fs.rmSync(p.f.file);
    else write(p.f.file, p.after, c.managed ? MANAGED_MODES : USER_MODES);
    out(`${p.f.file}: ${p.how}`);
  }
  for (const f of manifest.files) if (f.backup) fs.rmSync(f.backup, { force: true });
  fs.rmSync(manifestFile);
  if (c.managed) {
    // The record's own folder, and any folder install created, go when nothing else is left in them.
    for (const d of [path.dirname(manifestFile), ...[...(manifest.createdDirs ?? [])].reverse()]) {
      try {
        fs.rmdirSync(d);
      } catch {
        // not empty (or already gone): left as it is
      }
    }
  }
  return 0;
}
