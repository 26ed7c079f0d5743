// Editing a server's declaration (remove, enable, disable) — only in MCP Gate's own user configuration file,
// with comments and formatting kept (jsonc-parser edits). A server that lives anywhere else (a repository file,
// another tool's configuration, a file brought in by an import) is never rewritten: the refusal names the file
// to edit instead, since rewriting another tool's file would corrupt its ownership and format.
import * as fs from 'node:fs';
import { applyEdits, modify } from 'jsonc-parser';
import writeFileAtomic from 'write-file-atomic';
import { findServer, type GateReport, type ServerReport } from '../report';
import { decodeUtf8, parseJsonc } from './parse';

export type EditOperation = 'remove' | 'enable' | 'disable';

export class EditRefusal extends Error {}

function editableFile(report: GateReport, s: ServerReport, gateConfigFile: string): void {
  if (s.importedBy.length > 0) {
    throw new EditRefusal(
      `"${s.name}" is imported (by ${s.importedBy.join(', ')}) from ${s.file}; MCP Gate does not rewrite another tool's configuration — edit ${s.file} instead`,
    );
  }
  if (s.file !== gateConfigFile) {
    const where = s.scope === 'repository' ? 'the repository' : "another tool's configuration";
    throw new EditRefusal(
      `"${s.name}" is declared in ${where} (${s.file}); MCP Gate edits only its own configuration (${gateConfigFile}) — edit ${s.file} instead`,
    );
  }
  void report;
}

/** Applies the operation to MCP Gate's user configuration file, keeping comments; returns what it did. */
export async function editServer(
  report: GateReport,
  gateConfigFile: string,
  name: string,
  op: EditOperation,
  source?: string,
): Promise<string> {
  const found = findServer(report, name, source);
  if (!found.ok) throw new EditRefusal(found.message);
  const s = found.server;
  editableFile(report, s, gateConfigFile);
  const text = decodeUtf8(gateConfigFile, fs.readFileSync(gateConfigFile));
  parseJsonc(gateConfigFile, text); // refuses a file that no longer parses: never write over what we cannot read
  const path = ['servers', name];
  const fmt = { formattingOptions: { insertSpaces: true, tabSize: 2 } };
  const edits =
    op === 'remove'
      ? modify(text, path, undefined, fmt)
      : op === 'disable'
        ? modify(text, [...path, 'disabled'], true, fmt)
        : modify(text, [...path, 'disabled'], undefined, fmt);
  const next = applyEdits(text, edits);
  parseJsonc(gateConfigFile, next);
  await writeFileAtomic(gateConfigFile, next);
  return op === 'remove' ? `removed "${name}" from ${gateConfigFile}` : `${op}d "${name}" in ${gateConfigFile}`;
}
