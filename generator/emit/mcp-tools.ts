// generated/mcp-tools.ts: the MCP tool table and tool -> operation map. The tool definitions live
// once, on their operations in generated/registry.ts (op.mcp); this module only selects and orders.
import type { Model } from '../model.ts';
import { TS_HEADER } from './format.ts';

export function emitMcpTools(_model: Model): string {
  return `${TS_HEADER}import type { McpToolDef } from 'svc/runtime/contract-types.ts';
import { operations } from './registry.ts';

const tooled = operations.filter((op) => op.mcp !== null).sort((a, b) => (a.mcp!.name < b.mcp!.name ? -1 : a.mcp!.name > b.mcp!.name ? 1 : 0));

/** Every MCP tool, sorted by name. */
export const mcpTools: readonly McpToolDef[] = tooled.map((op) => op.mcp!);

/** Tool name -> operation id. */
export const toolOperation: Readonly<Record<string, string>> = Object.fromEntries(tooled.map((op) => [op.mcp!.name, op.id]));
`;
}
