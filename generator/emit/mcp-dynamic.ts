// The dynamic MCP mode in the published documents: the OpenAPI document's `x-svc-mcp-dynamic`
// (each meta-tool's exact definition, as `x-svc-mcp` publishes each operation tool's) and the view
// the agent guide, llms.txt and the MCP guide render. The definitions live once, in
// service.mcpDynamicTools (generated/registry.ts), compiled from svc.yaml mcpDynamic.
import type { Model } from '../model.ts';
import { dynamicListBytes, listBytes } from '../mcp-dynamic.ts';

/** The meta-tools as published: name, title, description, inputSchema, outputSchema, annotations, role. */
export function dynamicToolsDocument(model: Model): Record<string, unknown> {
  return {
    description:
      'POST /mcp?mode=dynamic lists these meta-tools instead of the operation tools (POST /mcp, the default). ' +
      'Their names and input schemas are published surface, as every x-svc-mcp is.',
    ...(model.mcpDynamicDecision ? { 'x-svc-decision': model.mcpDynamicDecision } : {}),
    tools: model.service.mcpDynamicTools,
  };
}

/** Adds `x-svc-mcp-dynamic` to the OpenAPI document (when the contract has a dynamic mode). */
export function publishDynamicTools(openapi: Record<string, unknown>, model: Model): void {
  if (model.service.mcpDynamicTools.length) openapi['x-svc-mcp-dynamic'] = dynamicToolsDocument(model);
}

/** What the documentation templates show of the dynamic mode. */
export function dynamicToolsView(model: Model) {
  const tools = model.service.mcpDynamicTools;
  const byRole = Object.fromEntries(tools.map((t) => [t.role, t.name]));
  return {
    dynamicTools: tools.map((t) => ({
      name: t.name,
      title: t.title,
      /** `{tool, arguments}` */
      arguments: `{${Object.keys((t.inputSchema.properties ?? {}) as Record<string, unknown>).join(', ')}}`,
      readOnly: t.annotations.readOnlyHint,
    })),
    dynamicToolNames: byRole,
    dynamicListBytes: tools.length ? dynamicListBytes(tools) : 0,
    /** The static tools/list of a caller who may call every tool, in KB (one decimal). */
    staticListKb: (listBytes(model.operations.flatMap((o) => (o.def.mcp ? [o.def.mcp] : []))) / 1024).toFixed(1),
  };
}
