// MCP tool definitions, derived from the operation (never hand-typed per tool).
import type { JsonSchema, McpToolDef, OperationDef } from '../runtime/contract-types.ts';
import { asObj } from './raw.ts';
import { stripExtensions } from './schema.ts';

export const MCP_ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    code: { type: 'string' },
    status: { type: 'integer' },
    title: { type: 'string' },
    detail: { type: 'string' },
    retryable: { type: 'boolean' },
    errors: {
      type: 'array',
      items: { type: 'object', properties: { pointer: { type: 'string' }, message: { type: 'string' } } },
    },
  },
};

/** Request controls that REST carries as headers and MCP as optional arguments. */
function controls(def: Pick<OperationDef, 'kind' | 'idempotency' | 'ifMatch'>): Record<string, JsonSchema> {
  if (def.kind !== 'command') return {};
  const out: Record<string, JsonSchema> = {
    dryRun: { type: 'boolean', description: 'Plan the write without running it (REST: Prefer: dry-run).' },
  };
  if (def.idempotency !== 'none')
    out.idempotencyKey = {
      type: 'string',
      format: 'uuid',
      description:
        def.idempotency === 'required'
          ? 'A new UUID per write, reused when retrying the same write (REST: Idempotency-Key, required there).'
          : 'A UUID that makes a retry of this write run once (REST: Idempotency-Key).',
    };
  if (def.ifMatch === 'required') out.ifMatch = { type: 'string', description: "The resource's current etag (REST: If-Match)." };
  return out;
}

/** The dereferenced outcome envelope a tool call returns. */
export function outcomeEnvelope(kind: 'read' | 'command', result: JsonSchema): JsonSchema {
  if (kind === 'read')
    return {
      type: 'object',
      required: ['outcome'],
      properties: { outcome: { enum: ['ran', 'error'] }, result, error: MCP_ERROR_SCHEMA },
    };
  return {
    type: 'object',
    required: ['outcome'],
    properties: {
      outcome: { enum: ['ran', 'planned', 'proposed', 'error'] },
      result,
      plan: { type: 'object' },
      approval: { type: 'object' },
      error: MCP_ERROR_SCHEMA,
    },
  };
}

export function buildMcpTool(
  def: OperationDef,
  description: string,
  dereferencedInput: JsonSchema,
  dereferencedOutput: JsonSchema,
  flags: { destructive: boolean; idempotent: boolean; openWorld: boolean },
): McpToolDef {
  const input = stripExtensions(dereferencedInput);
  const inputSchema: JsonSchema = {
    ...input,
    type: 'object',
    properties: { ...asObj(input.properties), ...controls(def) },
  };
  delete inputSchema.anyOf;
  delete inputSchema.oneOf;
  return {
    name: `svc.${def.id}`,
    title: def.summary,
    description,
    inputSchema,
    outputSchema: outcomeEnvelope(def.kind, stripExtensions(dereferencedOutput)),
    annotations: {
      title: def.summary,
      readOnlyHint: def.kind === 'read',
      destructiveHint: flags.destructive,
      idempotentHint: flags.idempotent,
      openWorldHint: flags.openWorld,
    },
  };
}
