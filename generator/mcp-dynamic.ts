// The meta-tools of the dynamic MCP mode (svc.yaml mcpDynamic, served at /mcp?mode=dynamic),
// compiled like the operation tools: the input closed (additionalProperties false unless it says
// otherwise), dereferenced and stripped of extensions; the output schema and the annotations derived
// from the role and from the operation tools the role reaches, never hand-typed. Checked here: each
// role once with exactly the arguments its runtime implementation reads (runtime/mcp/dynamic.ts),
// names no operation tool (or alias) uses, and the budget of discovery.
import type { JsonSchema, McpDynamicRole, McpDynamicToolDef, McpToolDef, OperationDef } from '../runtime/contract-types.ts';
import { outcomeEnvelope } from './mcp.ts';
import { asArray, asObj, isObj } from './raw.ts';
import { Dereferencer, stripExtensions, toComponentForm } from './schema.ts';
import { diagnostic, type Diagnostic, type JsonPath, type SourceFile } from './source.ts';

/** The budget of discovery (issue 25): a dynamic tools/list a small context takes whole. */
export const DYNAMIC_BUDGET = { tools: 6, bytes: 4096 } as const;

/** The arguments each role's implementation reads, and their JSON type. */
export const ROLE_ARGUMENTS: Readonly<Record<McpDynamicRole, { required: readonly string[]; optional: readonly string[] }>> = {
  search: { required: ['query'], optional: [] },
  describe: { required: ['tool'], optional: [] },
  read: { required: ['tool'], optional: ['arguments'] },
  invoke: { required: ['tool'], optional: ['arguments'] },
};
const ARGUMENT_TYPE: Readonly<Record<string, string>> = { query: 'string', tool: 'string', arguments: 'object' };

const ROLES = Object.keys(ROLE_ARGUMENTS) as McpDynamicRole[];
/** The MCP tool-name charset, at most 64 characters. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** What each role answers as `result` (search and describe); read and invoke answer the called tool's envelope. */
const ROLE_RESULT: Readonly<Record<'search' | 'describe', JsonSchema>> = {
  search: { type: 'object', required: ['tools'] },
  describe: { type: 'object', required: ['tool', 'tier', 'scope', 'idempotency'] },
};

/** A tools/list answer as a client receives it for these tools (JSON-RPC id 1), in bytes. */
export function listBytes(tools: readonly McpToolDef[]): number {
  return Buffer.byteLength(JSON.stringify({ result: { tools }, jsonrpc: '2.0', id: 1 }));
}

/** The dynamic tools/list (the meta-tools without their role), in bytes. */
export function dynamicListBytes(tools: readonly McpDynamicToolDef[]): number {
  return listBytes(tools.map(({ role: _role, ...tool }) => tool));
}

/**
 * The annotations a role's tool must carry to stay truthful: search and describe read the contract;
 * read runs reads only; invoke may run any tool, so it says the most any of them may do.
 */
function annotationsOf(role: McpDynamicRole, tools: readonly NonNullable<OperationDef['mcp']>[]): McpDynamicToolDef['annotations'] {
  const reads = tools.filter((t) => t.annotations.readOnlyHint);
  const commands = tools.filter((t) => !t.annotations.readOnlyHint);
  if (role === 'search' || role === 'describe') return { readOnlyHint: true, openWorldHint: false };
  if (role === 'read') return { readOnlyHint: true, openWorldHint: reads.some((t) => t.annotations.openWorldHint) };
  return {
    readOnlyHint: false,
    destructiveHint: commands.some((t) => t.annotations.destructiveHint === true),
    idempotentHint: commands.every((t) => t.annotations.idempotentHint === true),
    openWorldHint: tools.some((t) => t.annotations.openWorldHint),
  };
}

/** The `result` the called tools may answer: their common type when they share one, else anything. */
function calledResult(tools: readonly NonNullable<OperationDef['mcp']>[]): JsonSchema {
  const types = new Set(tools.map((t) => JSON.stringify(asObj(asObj(t.outputSchema.properties).result).type ?? null)));
  const [only] = types;
  return types.size === 1 && only !== 'null' ? { type: JSON.parse(only!) } : {};
}

function outputOf(role: McpDynamicRole, tools: readonly NonNullable<OperationDef['mcp']>[]): JsonSchema {
  if (role === 'search' || role === 'describe') return outcomeEnvelope({ kind: 'read', tier: null }, ROLE_RESULT[role], null);
  if (role === 'read') return outcomeEnvelope({ kind: 'read', tier: null }, calledResult(tools.filter((t) => t.annotations.readOnlyHint)), null);
  return outcomeEnvelope({ kind: 'command', tier: 2 }, calledResult(tools), null);
}

/** Every `$ref` value inside a schema, with the path of the node that holds it. */
function refsIn(node: unknown, at: JsonPath): [JsonPath, string][] {
  if (Array.isArray(node)) return node.flatMap((item, i) => refsIn(item, [...at, i]));
  if (!isObj(node)) return [];
  const own: [JsonPath, string][] = typeof node.$ref === 'string' ? [[at, node.$ref]] : [];
  return [...own, ...Object.entries(node).flatMap(([k, v]) => (k === '$ref' ? [] : refsIn(v, [...at, k])))];
}

export interface DynamicSection {
  tools: McpDynamicToolDef[];
  decision: string | null;
  diagnostics: Diagnostic[];
}

/** svc.yaml mcpDynamic -> the meta-tools, or diagnostics. An absent section means no dynamic mode. */
export function buildDynamicTools(svc: SourceFile, deref: Dereferencer, operations: readonly OperationDef[], isSchema: (name: string) => boolean): DynamicSection {
  const section = asObj(asObj(svc.data).mcpDynamic);
  const decision = typeof section.decision === 'string' ? section.decision.trim() : null;
  const diagnostics: Diagnostic[] = [];
  const report = (at: JsonPath, rule: string, message: string, where: 'key' | 'value' = 'value') => diagnostic(svc, ['mcpDynamic', ...at], rule, message, where);
  if (!('mcpDynamic' in asObj(svc.data))) return { tools: [], decision, diagnostics };

  const operationTools = operations.flatMap((o) => (o.mcp ? [o.mcp] : []));
  const taken = new Set(operationTools.flatMap((t) => [t.name, t.name.replace(/\./g, '_')]));
  const names = new Set<string>();
  const roles = new Map<McpDynamicRole, number>();
  const tools: McpDynamicToolDef[] = [];
  asArray(section.tools).forEach((raw, i) => {
    const t = asObj(raw);
    const at = (...p: JsonPath) => ['tools', i, ...p];
    const name = typeof t.name === 'string' ? t.name : '';
    const role = t.role as McpDynamicRole;
    if (!TOOL_NAME.test(name)) diagnostics.push(report(at('name'), 'invalid-tool-name', `Meta-tool name ${JSON.stringify(t.name ?? null)} is not 1 to 64 of A-Z a-z 0-9 _ . - (the MCP tool-name charset).`));
    else if (taken.has(name)) diagnostics.push(report(at('name'), 'duplicate-tool-name', `Meta-tool name ${name} is already an operation tool's name (or its underscore alias). Choose another name, e.g. svc.api.<verb>.`));
    else if (names.has(name) || names.has(name.replace(/\./g, '_'))) diagnostics.push(report(at('name'), 'duplicate-tool-name', `Meta-tool name ${name} is listed twice (underscore aliases included).`));
    names.add(name);
    names.add(name.replace(/\./g, '_'));
    if (!ROLES.includes(role)) {
      diagnostics.push(report(at('role'), 'invalid-value', `Meta-tool ${name} has role ${JSON.stringify(t.role ?? null)}. Use one of ${ROLES.join(', ')}: what the runtime implements.`));
      return;
    }
    if (roles.has(role)) diagnostics.push(report(at('role'), 'duplicate-role', `Role ${role} is already the role of meta-tool ${tools[roles.get(role)!]?.name ?? '?'}. Each role has one tool.`));
    for (const key of ['title', 'description'] as const)
      if (typeof t[key] !== 'string' || !(t[key] as string).trim()) diagnostics.push(report(at(key), 'missing-field', `Meta-tool ${name} has no ${key}. Add ${key}: <text an agent reads in tools/list>.`));

    const input = asObj(t.input);
    for (const [at_, ref] of refsIn(input, at('input')))
      if (!isSchema(ref)) diagnostics.push(report([...at_, '$ref'], 'unknown-ref', `$ref ${JSON.stringify(ref)} names no schema in schemas/. Use the name of a schema defined in contract/schemas/*.yaml, or define it there.`));
    const schema: Record<string, unknown> = { type: 'object', ...input };
    if (!('additionalProperties' in schema)) schema.additionalProperties = false;
    const inputSchema = stripExtensions(deref.deref(toComponentForm(schema)));
    const props = asObj(inputSchema.properties);
    const required = asArray(inputSchema.required).map(String);
    const wanted = ROLE_ARGUMENTS[role];
    const allowed = [...wanted.required, ...wanted.optional];
    if (inputSchema.type !== 'object') diagnostics.push(report(at('input', 'type'), 'invalid-value', `The input of ${name} is an object (its arguments); remove type or write type: object.`));
    for (const arg of Object.keys(props))
      if (!allowed.includes(arg)) diagnostics.push(report(at('input', 'properties', arg), 'unknown-argument', `Meta-tool ${name} (role ${role}) takes ${allowed.join(', ')}; the runtime reads no argument ${arg}. Remove it, or implement it in runtime/mcp/dynamic.ts first.`));
    for (const arg of allowed) {
      const prop = props[arg];
      if (!isObj(prop)) diagnostics.push(report(at('input', 'properties'), 'missing-argument', `Meta-tool ${name} (role ${role}) takes the argument ${arg}. Add it to input.properties.`));
      else if (prop.type !== ARGUMENT_TYPE[arg]) diagnostics.push(report(at('input', 'properties', arg, 'type'), 'invalid-value', `Argument ${arg} of ${name} has type ${ARGUMENT_TYPE[arg]}.`));
    }
    for (const arg of wanted.required)
      if (!required.includes(arg)) diagnostics.push(report(at('input', 'required'), 'missing-field', `Argument ${arg} of ${name} is required (role ${role}). Add it to input.required.`));

    tools.push({
      name,
      title: String(t.title ?? '').trim(),
      description: String(t.description ?? '').trim(),
      inputSchema,
      outputSchema: outputOf(role, operationTools),
      annotations: annotationsOf(role, operationTools),
      role,
    });
    roles.set(role, tools.length - 1);
  });
  for (const role of ROLES)
    if (!roles.has(role)) diagnostics.push(report(['tools'], 'missing-role', `mcpDynamic has no tool with role ${role}. The dynamic mode needs one tool for each of ${ROLES.join(', ')}.`, 'key'));
  if (tools.length > DYNAMIC_BUDGET.tools)
    diagnostics.push(report(['tools'], 'dynamic-budget', `mcpDynamic lists ${tools.length} tools; the dynamic mode lists at most ${DYNAMIC_BUDGET.tools}.`, 'key'));
  const bytes = dynamicListBytes(tools);
  if (bytes > DYNAMIC_BUDGET.bytes)
    diagnostics.push(
      report(['tools'], 'dynamic-budget', `The dynamic tools/list would be ${bytes} bytes; it must stay within ${DYNAMIC_BUDGET.bytes}. Shorten the meta-tools' descriptions.`, 'key'),
    );
  return { tools, decision, diagnostics };
}
