// generated/mcp-tools.ts: the MCP tool table and tool -> operation map.
import type { McpToolDef } from '../../runtime/contract-types.ts';
import type { Model } from '../model.ts';
import { byString, literal, TS_HEADER } from './format.ts';

export function emitMcpTools(model: Model): string {
  const tools = model.operations
    .map((o) => o.def.mcp)
    .filter((t): t is McpToolDef => t !== null)
    .sort((a, b) => byString(a.name, b.name));
  const toolOperation = Object.fromEntries(model.operations.filter((o) => o.def.mcp).map((o) => [o.def.mcp!.name, o.def.id]));
  return `${TS_HEADER}import type { McpToolDef } from '../runtime/contract-types.ts';

/** Every MCP tool, sorted by name. */
export const mcpTools: readonly McpToolDef[] = ${literal(tools)};

/** Tool name -> operation id. */
export const toolOperation: Readonly<Record<string, string>> = ${literal(toolOperation)};
`;
}
