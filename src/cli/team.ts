// `mcp-gate approvals export|import` (issue 27 item 2): a project's approvals written to a team file, each entry
// signed with the signer's SSH key, and imported on another machine only when signed by a key of the user's
// allowed-signers file and only while the digest is what would run here (src/trust/approval/team.ts).
// `check --team FILE` uses the same checks on a copy of the store (./check.ts).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gateConfigPath } from '../trust/sources/catalogue';
import { exportApprovals, importApprovals, type ImportOutcome } from '../trust/approval/team';
import { ApprovalStore, STORE_FILE } from '../trust/approval/store';
import { GateRefusal } from '../trust/approval/approvals';
import type { GateInput } from '../trust/report';
import { UsageError, type Ctx } from './context';
import { out } from './output';
import { escapeText } from '../text/escape';

/** The allowed-signers file: --allowed-signers, else `allowed_signers` beside the user's MCP Gate configuration. */
export function allowedSignersOf(ctx: Ctx): string {
  const flag = ctx.o['allowed-signers'];
  return flag !== undefined ? path.resolve(flag) : path.join(path.dirname(gateConfigPath(ctx.machine)), 'allowed_signers');
}

export function importText(file: string, outcomes: readonly ImportOutcome[]): string {
  const L = [`team file ${escapeText(file)}: ${outcomes.length} ${outcomes.length === 1 ? 'entry' : 'entries'}`];
  for (const x of outcomes) L.push(`  ${x.outcome.padEnd(9)} ${escapeText(x.server)} (${escapeText(x.source)}): ${escapeText(x.detail)}`);
  return L.join('\n');
}

export async function approvalsCommand(ctx: Ctx): Promise<number> {
  const { o, rest, input, log } = ctx;
  const [verb, ...args] = rest;
  if (verb === 'export') {
    if (args.length > 1) throw new UsageError('mcp-gate approvals export takes at most one server name');
    if (!o.out || !o.key || !o.as)
      throw new UsageError(
        "mcp-gate approvals export needs --out FILE (the team file), --key FILE (your SSH key) and --as PRINCIPAL (your name in the team's allowed-signers file)",
      );
    const r = await exportApprovals(input, { file: path.resolve(o.out), key: path.resolve(o.key), principal: o.as, only: args[0] });
    for (const w of r.written) out(`exported ${escapeText(w)}, signed as ${escapeText(o.as)}`);
    for (const s of r.skipped) out(`not exported: ${escapeText(s)}`);
    out(`${r.written.length} written to ${escapeText(path.resolve(o.out))}`);
    return r.written.length ? 0 : 1;
  }
  if (verb === 'import') {
    if (args.length !== 1) throw new UsageError('mcp-gate approvals import takes the team file');
    const file = path.resolve(args[0]);
    ctx.exportLog();
    const outcomes = await importApprovals(input, file, { allowedSigners: allowedSignersOf(ctx), log });
    out(o.json ? JSON.stringify(outcomes, null, 2) : importText(file, outcomes));
    return outcomes.some((x) => x.outcome === 'refused') ? 1 : 0;
  }
  throw new UsageError('mcp-gate approvals takes export or import');
}

/**
 * The gate input `check --team FILE` evaluates: a private copy of the store with the team file's admitted entries
 * recorded in it (the user's store is never written). Returns it with the import's outcomes and a cleanup.
 */
export async function withTeamApprovals(
  ctx: Ctx,
  file: string,
): Promise<{ input: GateInput; outcomes: ImportOutcome[]; ownStore: string; done: () => void }> {
  const own = new ApprovalStore(ctx.input.storeDir, ctx.input.masker).read();
  // A store that cannot be read is the check's own failure (exit 1); a copy must not hide it.
  if (own.health.status === 'corrupt')
    throw new GateRefusal(`the approval store ${own.file} cannot be read (${own.health.problem}); check --team does not look past that`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-gate-check-'));
  const done = () => fs.rmSync(dir, { recursive: true, force: true });
  try {
    if (own.health.status === 'ok') fs.copyFileSync(own.file, path.join(dir, STORE_FILE));
    const input: GateInput = { ...ctx.input, storeDir: dir };
    const outcomes = await importApprovals(input, path.resolve(file), { allowedSigners: allowedSignersOf(ctx) });
    return { input, outcomes, ownStore: own.file, done };
  } catch (e) {
    done();
    throw e;
  }
}
