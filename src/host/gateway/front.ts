// The MCP face MCP Gate shows a client, whatever carries it (the chat gateway's HTTP, `mcp-gate serve`'s stdio):
// it lists only the tools the policy does not deny and sends every call to the gate, which checks the policy at
// call time and logs the exchange. A refusal comes back as a tool error the client shows. The SDK server that
// carries it over stdio is in ./serve.ts, so the extension (the gateway answers its methods itself) bundles none.
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { SessionTool } from '../session';

export interface FrontTarget {
  tools(): SessionTool[] | Promise<SessionTool[]>;
  /** False when the policy denies the tool outright (it is then not listed at all). */
  listed(tool: string): boolean;
  call(tool: string, args: Record<string, unknown>): Promise<{ ok: boolean; result?: CallToolResult; error?: string }>;
  instructions?: string;
  /**
   * The name the client is told in `initialize`'s serverInfo. VS Code (1.139 on) names a server's tools after it
   * (`mcp_<name>_<tool>`), so a gated endpoint answers with its server's label, never one name for all.
   */
  serverName?: string;
}

/** `serverInfo.name` for a target: its server's label kept to letters, digits, `.`, `_` and `-`, at most 64; else `mcp-gate`. */
export function serverInfoName(label: string | undefined): string {
  const name = (label ?? '')
    .normalize('NFKC')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 64)
    .replace(/[-.]+$/, '');
  return name || 'mcp-gate';
}

/** What a client is shown of a server's tools: the ones the policy does not deny outright, as the server gave them. */
export function listedTools(tools: SessionTool[], target: Pick<FrontTarget, 'listed'>) {
  return tools
    .filter((t) => target.listed(t.name))
    .map((t) => ({
      name: t.name,
      ...(t.title !== undefined ? { title: t.title } : {}),
      description: t.description,
      inputSchema: t.inputSchema,
      ...(t.outputSchema !== undefined ? { outputSchema: t.outputSchema } : {}),
      ...(t.annotations !== undefined ? { annotations: t.annotations } : {}),
    }));
}

/** A call's answer to the client: the server's result, or MCP Gate's refusal as a tool error the client shows. */
export function callAnswer(out: { result?: CallToolResult; error?: string }): CallToolResult {
  if (out.result) return out.result;
  return { isError: true, content: [{ type: 'text', text: `MCP Gate: ${out.error ?? 'the call failed'}` }] };
}
