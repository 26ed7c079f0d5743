// A tool call as text a person reads and types (`mcp-gate call`, "MCP Gate: Try a Tool…"): arguments to start from
// (from the tool's input schema), and the result as lines: each text part as given,
// every other part as its type and media type, then the structured content as JSON. The session has already
// cleaned the result of hidden characters and masked it (src/host/session/call.ts); any escape or control
// character left is still made visible, since this text goes to a terminal or an editor.
import { escapeText } from '../text/escape';
import { HIDDEN_CHARS } from '../text/hidden-chars';

/** A result text as given (backslashes and line breaks kept: it may be JSON a script reads), any other hidden or control character escaped. */
function shown(t: string): string {
  return t.replace(HIDDEN_CHARS, (ch) => (ch === '\n' || ch === '\t' ? ch : escapeText(ch)));
}

interface ResultLike {
  content?: ReadonlyArray<{ type: string; text?: unknown; mimeType?: unknown; uri?: unknown; resource?: { uri?: unknown } }>;
  structuredContent?: unknown;
}

export function resultLines(result: ResultLike): string[] {
  const out: string[] = [];
  for (const c of result.content ?? []) {
    if (c.type === 'text' && typeof c.text === 'string') out.push(shown(c.text));
    else {
      const uri = typeof c.uri === 'string' ? c.uri : typeof c.resource?.uri === 'string' ? c.resource.uri : undefined;
      out.push(`[${c.type}${typeof c.mimeType === 'string' && c.mimeType ? ` ${shown(c.mimeType)}` : ''}${uri ? ` ${shown(uri)}` : ''}]`);
    }
  }
  if (result.structuredContent !== undefined) out.push(shown(JSON.stringify(result.structuredContent, null, 2)));
  return out;
}

/** Arguments to start from: each required property of the tool's input schema, with its default or an empty value of its type. */
export function argumentSkeleton(schema: unknown): Record<string, unknown> {
  const s = schema as { properties?: Record<string, { type?: unknown; default?: unknown }>; required?: unknown } | undefined;
  const out: Record<string, unknown> = {};
  const required = Array.isArray(s?.required) ? (s!.required as unknown[]).filter((r): r is string => typeof r === 'string') : [];
  for (const name of required.slice(0, 32)) {
    const p = s?.properties?.[name];
    const type = p?.type;
    if (p?.default !== undefined) out[name] = p.default;
    else
      out[name] =
        type === 'number' || type === 'integer' ? 0 : type === 'boolean' ? false : type === 'array' ? [] : type === 'object' ? {} : '';
  }
  return out;
}
