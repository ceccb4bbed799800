// A callable tool as the endpoint (index.ts) and the dynamic mode (dynamic.ts) both see it. A leaf,
// so dynamic.ts does not import index.ts back.
import type { McpToolDef, OperationDef } from '../contract-types.ts';

/** One callable tool name (the canonical `svc.x.y` or its underscore alias). */
export interface ToolEntry {
  name: string;
  def: McpToolDef;
  op: OperationDef;
  alias: boolean;
}
