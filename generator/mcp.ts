// MCP tool definitions, derived from the operation (never hand-typed per tool).
import type { JsonSchema, McpToolDef, OperationDef } from '../runtime/contract-types.ts';
import { asObj } from './raw.ts';
import { stripExtensions } from './schema.ts';

/** Request controls that REST carries as headers and MCP as optional arguments. */
function controls(def: Pick<OperationDef, 'kind' | 'idempotency' | 'ifMatch'>): Record<string, JsonSchema> {
  if (def.kind !== 'command') return {};
  const out: Record<string, JsonSchema> = {
    dryRun: { type: 'boolean', description: 'Plan only; write nothing (REST: Prefer: dry-run).' },
  };
  if (def.idempotency !== 'none')
    out.idempotencyKey = {
      type: 'string',
      format: 'uuid',
      description:
        def.idempotency === 'required'
          ? 'New UUID per write; reuse it on retry (REST: Idempotency-Key). Not needed with dryRun.'
          : 'UUID so a retry runs once (REST: Idempotency-Key).',
    };
  if (def.ifMatch === 'required') out.ifMatch = { type: 'string', description: "The resource's current etag (REST: If-Match)." };
  return out;
}

/**
 * The members a result always has, and its JSON type: the compact, truthful summary an agent reads in
 * tools/list. The full shape is the operation's response in the OpenAPI document.
 */
function resultSummary(result: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  if (result.type !== undefined) out.type = result.type;
  if (Array.isArray(result.required) && result.required.length) out.required = [...(result.required as string[])];
  return out;
}

/**
 * The outcome envelope a tool call returns, shared by every tool: outcome, then result (ran), plan
 * (planned), approval (proposed, Tier 2/3 only) or error. Objects stay open, so an error result
 * (outcome "error" with its problem in error) passes the SDK client's outputSchema check.
 */
export function outcomeEnvelope(def: Pick<OperationDef, 'kind' | 'tier'>, result: JsonSchema, plan: JsonSchema | null): JsonSchema {
  const outcomes = def.kind === 'read' ? ['ran', 'error'] : def.tier === 1 ? ['ran', 'planned', 'error'] : ['ran', 'planned', 'proposed', 'error'];
  const properties: Record<string, JsonSchema> = { outcome: { enum: outcomes }, result: resultSummary(result) };
  if (def.kind === 'command') properties.plan = plan ? resultSummary(plan) : { type: 'object' };
  if (outcomes.includes('proposed')) properties.approval = { type: 'object' };
  properties.error = { type: 'object' };
  return { type: 'object', required: ['outcome'], properties };
}

/**
 * The tool of an operation, named `<prefix>.<id>` (svc.yaml mcpToolPrefix, default svc). `output`
 * and `plan` are read at their top only (Dereferencer.top gives that much).
 */
export function buildMcpTool(
  prefix: string,
  def: OperationDef,
  description: string,
  dereferencedInput: JsonSchema,
  output: JsonSchema,
  plan: JsonSchema | null,
  flags: { destructive: boolean; idempotent: boolean; openWorld: boolean },
): McpToolDef {
  const input = stripExtensions(dereferencedInput);
  const inputSchema: JsonSchema = {
    ...input,
    type: 'object',
    properties: { ...asObj(input.properties), ...controls(def) },
  };
  // A creating command needs its key (a dry run, which writes nothing, needs none; the runtime knows).
  if (def.kind === 'command' && def.idempotency === 'required')
    inputSchema.required = [...new Set([...((input.required as string[] | undefined) ?? []), 'idempotencyKey'])];
  delete inputSchema.anyOf;
  delete inputSchema.oneOf;
  return {
    name: `${prefix}.${def.id}`,
    title: def.summary,
    description,
    inputSchema,
    outputSchema: outcomeEnvelope(def, output, plan),
    // destructiveHint and idempotentHint mean something only when readOnlyHint is false (MCP spec).
    annotations:
      def.kind === 'read'
        ? { readOnlyHint: true, openWorldHint: flags.openWorld }
        : { readOnlyHint: false, destructiveHint: flags.destructive, idempotentHint: flags.idempotent, openWorldHint: flags.openWorld },
  };
}
