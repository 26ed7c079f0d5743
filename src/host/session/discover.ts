// Discovery and tool pinning, once per server when it starts: the whole tool list is read (at most
// MAX_TOOL_PAGES pages — MCP Gate's own count of the pages on the wire, so a repeated or never-ending cursor keeps
// the server out whatever the SDK's aggregation makes of it — and at most MAX_TOOLS tools), checked (names a rule can name, no name twice, no
// `x-mcp-header` that would set a header MCP Gate sends itself) and cleaned of hidden characters. For an approved
// repository server the list (and the instructions) is pinned at the first start; a later change re-gates it.
import { SdkError, SdkErrorCode, type Client, type JSONRPCMessage, type Tool } from '@modelcontextprotocol/client';
import { observeTools } from '../../trust/approval/approvals';
import { ApprovalStore, type PinnedTools } from '../../trust/approval/store';
import { canonicalJson, sha256 } from '../../trust/plan/digest';
import type { ServerReport } from '../../trust/report';
import { OWNED_HEADER_NAMES } from '../net/guarded-fetch';
import { stripHidden, stripHiddenDeep } from './untrusted';
import { DISCOVER_TIMEOUT_MS, DroppedError, MAX_TOOL_PAGES, MAX_TOOLS, type SessionContext, type SessionTool } from './context';

/** The `x-mcp-header` names a tool's input schema declares along chains of `properties` (2026-07-28). */
function mirroredHeaders(schema: unknown, depth = 0): string[] {
  const props = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  if (!props || typeof props !== 'object' || depth > 32) return [];
  const out: string[] = [];
  for (const p of Object.values(props)) {
    const h = (p as Record<string, unknown> | null)?.['x-mcp-header'];
    if (typeof h === 'string') out.push(h);
    out.push(...mirroredHeaders(p, depth + 1));
  }
  return out;
}

/**
 * Counts the `tools/list` pages on the wire while the SDK aggregates them: the cursor each page carried (absent on
 * the last page of a finished list). The SDK ends its walk early on a page that repeats the previous one (same
 * items, same cursor) and takes that as the whole list; MCP Gate judges the pages itself.
 */
function watchPages(client: Client): { cursors: Array<string | undefined>; stop(): void } {
  const cursors: Array<string | undefined> = [];
  const t = client.transport;
  if (!t) return { cursors, stop() {} };
  const ids = new Set<string | number>();
  const send = t.send;
  const onmessage = t.onmessage;
  t.send = (m: JSONRPCMessage, opts?: unknown) => {
    const r = m as { method?: unknown; id?: unknown };
    if (r.method === 'tools/list' && (typeof r.id === 'string' || typeof r.id === 'number')) ids.add(r.id);
    return (send as (m: JSONRPCMessage, o?: unknown) => Promise<void>).call(t, m, opts);
  };
  t.onmessage = ((m: JSONRPCMessage, extra?: unknown) => {
    const r = m as { id?: unknown; result?: { nextCursor?: unknown } };
    if ((typeof r.id === 'string' || typeof r.id === 'number') && ids.delete(r.id) && r.result && typeof r.result === 'object') {
      cursors.push(typeof r.result.nextCursor === 'string' ? r.result.nextCursor : undefined);
    }
    (onmessage as ((m: JSONRPCMessage, e?: unknown) => void) | undefined)?.call(t, m, extra);
  }) as typeof t.onmessage;
  return {
    cursors,
    stop() {
      t.send = send;
      t.onmessage = onmessage;
    },
  };
}

/** Why the pages read do not make a whole list within the bound (undefined: they do). */
function pagesProblem(cursors: ReadonlyArray<string | undefined>): string | undefined {
  const shown = (c: string) => JSON.stringify(stripHidden(c).slice(0, 40));
  if (cursors.length === 0) return 'its tool list was answered with no page MCP Gate could count';
  const seen = new Set<string>();
  for (const c of cursors) {
    if (c === undefined) continue;
    if (seen.has(c)) return `its tool list repeats the cursor ${shown(c)} (a list that never ends); a session takes no part of a list`;
    seen.add(c);
  }
  if (cursors.length > MAX_TOOL_PAGES || cursors.at(-1) !== undefined) {
    return `its tool list goes on past ${MAX_TOOL_PAGES} pages (a nextCursor after the last page read); a session reads at most ${MAX_TOOL_PAGES} pages and does not take part of a list`;
  }
  return undefined;
}

/**
 * Reads the whole tool list (through the SDK's aggregating read, which also keeps the list the 2026-07-28 header
 * mirroring reads), checks it, pins it, and returns it cleaned. Throws DroppedError when the server is left out.
 */
export async function discover(
  ctx: SessionContext,
  server: ServerReport,
  client: Client,
  ownedHeaders: Record<string, string> = {},
): Promise<SessionTool[]> {
  const timeout = ctx.o.discoverTimeoutMs ?? DISCOVER_TIMEOUT_MS;
  // a server that does not declare the tools capability offers none: nothing is asked, and the (empty) list is pinned
  const offersTools = client.getServerCapabilities()?.tools !== undefined;
  if (!offersTools) {
    await pinTools(ctx, server, client, []);
    return [];
  }
  let raw: Tool[];
  const pages = watchPages(client);
  try {
    raw = (await client.listTools(undefined, { timeout })).tools;
  } catch (e) {
    if (e instanceof SdkError && e.code === SdkErrorCode.ListPaginationExceeded)
      throw new DroppedError(pagesProblem([...pages.cursors, 'past the bound'])!);
    throw e;
  } finally {
    pages.stop();
  }
  const paging = pagesProblem(pages.cursors);
  if (paging) throw new DroppedError(paging);
  if (raw.length > MAX_TOOLS)
    throw new DroppedError(
      `it offers more than ${MAX_TOOLS} tools; a session takes at most ${MAX_TOOLS} from one server (nothing is truncated)`,
    );
  const owned = new Set(Object.keys(ownedHeaders).map((h) => h.toLowerCase()));
  for (const t of raw) {
    for (const name of mirroredHeaders(t.inputSchema)) {
      const header = `mcp-param-${name.toLowerCase()}`;
      if (owned.has(header) || OWNED_HEADER_NAMES.has(header)) {
        throw new DroppedError(
          `its tool ${JSON.stringify(stripHidden(t.name))} would mirror an argument into the header Mcp-Param-${stripHidden(name)}, which MCP Gate sends itself`,
        );
      }
    }
  }
  const names = new Set<string>();
  for (const t of raw) {
    if (stripHidden(t.name) !== t.name || !/^[A-Za-z0-9_.-]{1,128}$/.test(t.name)) {
      throw new DroppedError(`its tool name ${JSON.stringify(t.name)} holds characters a rule cannot name`);
    }
    if (names.has(t.name)) throw new DroppedError(`it offers the tool "${t.name}" twice`);
    names.add(t.name);
  }
  await pinTools(ctx, server, client, raw);
  return raw.map((t) => ({
    server: server.name,
    name: t.name,
    title: t.title === undefined ? undefined : stripHidden(t.title),
    description: stripHidden(t.description ?? ''),
    inputSchema: stripHiddenDeep(t.inputSchema),
    outputSchema: t.outputSchema === undefined ? undefined : stripHiddenDeep(t.outputSchema),
    annotations: t.annotations === undefined ? undefined : stripHiddenDeep(t.annotations),
  }));
}

/** Approved repository servers: the tool list is pinned at the first start and a change re-gates the server. */
async function pinTools(ctx: SessionContext, server: ServerReport, client: Client, raw: Tool[]): Promise<void> {
  if (!server.gated || server.viaEscapeHatch || !server.pinned) return;
  const instructions = client.getInstructions();
  const snapshot: PinnedTools['snapshot'] = {
    ...(instructions !== undefined ? { instructions } : {}),
    tools: raw.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema,
      outputSchema: t.outputSchema,
      annotations: t.annotations,
    })) as Record<string, unknown>[],
  };
  const observed: PinnedTools = {
    digest: `sha256:${sha256(canonicalJson(snapshot))}`,
    snapshot: JSON.parse(JSON.stringify(snapshot)) as typeof snapshot,
    observedAt: new Date().toISOString(),
  };
  const r = await observeTools(
    new ApprovalStore(ctx.o.storeDir, ctx.masker),
    ctx.project,
    server.source,
    server.name,
    server.pinned.digest,
    observed,
  );
  if (r === 'changed') {
    throw new DroppedError(
      `the tools it offers changed since it was approved; it is changed since approval until you review the change and approve it again (${ctx.words.review(server.name)})`,
    );
  }
  if (r === 'not-approved') throw new DroppedError('its approval changed while it was starting');
}
