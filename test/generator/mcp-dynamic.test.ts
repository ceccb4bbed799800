// svc.yaml mcpDynamic compiled (generator/mcp-dynamic.ts): the meta-tools of the real contract with
// their derived output schemas and annotations, and one failing contract per rule, with its
// file:line:col: what the runtime cannot serve, a clash with a tool name, and the budget.
import { afterEach, describe, expect, it } from 'vitest';
import { loadContract } from '../../generator/load.ts';
import { buildModel } from '../../generator/model.ts';
import { DYNAMIC_BUDGET, dynamicListBytes } from '../../generator/mcp-dynamic.ts';
import { ContractError, formatDiagnostic, sortDiagnostics } from '../../generator/source.ts';
import { mcpTools } from '../../generated/mcp-tools.ts';
import { service } from '../../generated/registry.ts';
import { ContractCopy } from './helpers.ts';

const SVC = 'svc.yaml';
const SEARCH = '- name: svc.api.search';
const INVOKE = '- name: svc.api.invoke';

let copy: ContractCopy;
afterEach(() => copy?.cleanup());

function fresh(): ContractCopy {
  copy = new ContractCopy();
  return copy;
}

/** The diagnostics compiling the copy raises (buildModel runs the checker, then the model's own checks). */
function compileErrors(c: ContractCopy): string[] {
  try {
    buildModel(loadContract(c.dir));
    return [];
  } catch (err) {
    if (err instanceof ContractError) return sortDiagnostics(err.diagnostics).map(formatDiagnostic);
    throw err;
  }
}

describe('the real contract', () => {
  const tools = service.mcpDynamicTools;

  it('has one meta-tool per role, within the budget', () => {
    expect(tools.map((t) => [t.name, t.role])).toEqual([
      ['svc.api.search', 'search'],
      ['svc.api.describe', 'describe'],
      ['svc.api.read', 'read'],
      ['svc.api.invoke', 'invoke'],
    ]);
    expect(tools.length).toBeLessThanOrEqual(DYNAMIC_BUDGET.tools);
    expect(dynamicListBytes(tools)).toBeLessThanOrEqual(DYNAMIC_BUDGET.bytes);
  });

  it('derives annotations from the tools each role reaches, and closes every input', () => {
    const by = Object.fromEntries(tools.map((t) => [t.role, t]));
    expect(by.search!.annotations).toEqual({ readOnlyHint: true, openWorldHint: false });
    expect(by.describe!.annotations).toEqual({ readOnlyHint: true, openWorldHint: false });
    const reads = mcpTools.filter((t) => t.annotations.readOnlyHint);
    const commands = mcpTools.filter((t) => !t.annotations.readOnlyHint);
    expect(by.read!.annotations).toEqual({ readOnlyHint: true, openWorldHint: reads.some((t) => t.annotations.openWorldHint) });
    expect(by.invoke!.annotations).toEqual({
      readOnlyHint: false,
      destructiveHint: commands.some((t) => t.annotations.destructiveHint),
      idempotentHint: commands.every((t) => t.annotations.idempotentHint),
      openWorldHint: mcpTools.some((t) => t.annotations.openWorldHint),
    });
    expect(by.invoke!.annotations).toMatchObject({ destructiveHint: true, idempotentHint: false, openWorldHint: true });
    for (const t of tools) {
      expect(t.inputSchema.type, t.name).toBe('object');
      expect(t.inputSchema.additionalProperties, t.name).toBe(false);
      expect(JSON.stringify(t.inputSchema), t.name).not.toMatch(/"\$ref"|x-svc-|"decision"/);
    }
  });

  it('gives each an outcome-envelope output schema: search and describe their result, read and invoke the called tool’s', () => {
    const by = Object.fromEntries(tools.map((t) => [t.role, t.outputSchema as { properties: Record<string, any>; required: string[] }]));
    expect(by.search!.properties.result).toEqual({ type: 'object', required: ['tools'] });
    expect(by.describe!.properties.result).toEqual({ type: 'object', required: ['tool', 'tier', 'scope', 'idempotency'] });
    expect(by.read!.properties.outcome.enum).toEqual(['ran', 'error']);
    expect(by.invoke!.properties.outcome.enum).toEqual(['ran', 'planned', 'proposed', 'error']);
    // Every tool's result is an object, so what read and invoke return is one too.
    expect(by.invoke!.properties.result).toEqual({ type: 'object' });
    for (const o of Object.values(by)) expect(o.required).toEqual(['outcome']);
  });
});

describe('rules', () => {
  it('invalid-value: a role the runtime does not implement (the contract format names the roles; the missing role is not reported as a consequence)', () => {
    const c = fresh();
    const at = c.mutate(SVC, '- name: svc.api.describe', 'role: describe', 'role: explain', 'explain');
    expect(compileErrors(c)).toEqual([
      `${at} error [invalid-value] Meta-tool svc.api.describe's role is "explain", which is not one of search, describe, read, invoke. Use one of them.`,
    ]);
  });

  it('duplicate-role (and so a missing one)', () => {
    const c = fresh();
    c.mutate(SVC, '- name: svc.api.read', 'role: read', 'role: invoke');
    const at = c.locate(SVC, 'role: invoke\n      title: Call any tool', 'invoke');
    const tools = c.locate(SVC, '  tools:\n    - name: svc.api.search', 'tools:');
    expect(compileErrors(c)).toEqual([
      `${tools} error [missing-role] mcpDynamic has no tool with role read. The dynamic mode needs one tool for each of search, describe, read, invoke.`,
      `${at} error [duplicate-role] Role invoke is already the role of meta-tool svc.api.read. Each role has one tool.`,
    ]);
  });

  it('unknown-argument: an argument the runtime does not read', () => {
    const c = fresh();
    const at = c.mutate(SVC, SEARCH, '          query:', '          limit: { type: integer }\n          query:', '{ type: integer }');
    expect(compileErrors(c)).toEqual([
      `${at} error [unknown-argument] Meta-tool svc.api.search (role search) takes query; the runtime reads no argument limit. Remove it, or implement it in runtime/mcp/dynamic.ts first.`,
    ]);
  });

  it('missing-field: an argument the role needs is not required; invalid-value: of the wrong type', () => {
    const c = fresh();
    const req = c.mutate(SVC, INVOKE, 'required: [tool]', 'required: []', '[]');
    const type = c.mutate(SVC, INVOKE, 'arguments: { type: object', 'arguments: { type: array', 'array');
    expect(compileErrors(c)).toEqual([
      `${req} error [missing-field] Argument tool of svc.api.invoke is required (role invoke). Add it to input.required.`,
      `${type} error [invalid-value] Argument arguments of svc.api.invoke has type object.`,
    ]);
  });

  it('duplicate-tool-name: an operation tool’s name or its underscore alias', () => {
    const c = fresh();
    const at = c.mutate(SVC, SEARCH, 'svc.api.search', 'svc_tasks_create', 'svc_tasks_create');
    expect(compileErrors(c)).toContain(
      `${at} error [duplicate-tool-name] Meta-tool name svc_tasks_create is already an operation tool's name (or its underscore alias). Choose another name, e.g. svc.api.<verb>.`,
    );
  });

  it('unknown-ref in a meta-tool input', () => {
    const c = fresh();
    const at = c.mutate(SVC, '- name: svc.api.describe', 'tool: { type: string,', 'tool: { $ref: NoSuchSchema, type: string,', 'NoSuchSchema');
    expect(compileErrors(c)).toEqual([`${at} error [unknown-ref] $ref "NoSuchSchema" names no schema in schemas/. Use the name of a schema defined in contract/schemas/*.yaml, or define it there.`]);
  });

  it('invalid-tool-name', () => {
    const c = fresh();
    const at = c.mutate(SVC, SEARCH, 'svc.api.search', 'svc api search', 'svc api search');
    expect(compileErrors(c)).toContain(`${at} error [invalid-tool-name] Meta-tool name "svc api search" is not 1 to 64 of A-Z a-z 0-9 _ . - (the MCP tool-name charset).`);
  });

  it('dynamic-budget: tools/list over 4 KB', () => {
    const c = fresh();
    c.mutate(SVC, INVOKE, 'Runs any tool you may call', `${'Runs any tool you may call. '.repeat(40)}Runs any tool you may call`);
    const tools = c.locate(SVC, '  tools:\n    - name: svc.api.search', 'tools:');
    const [error] = compileErrors(c);
    expect(error).toMatch(new RegExp(`^${tools.replace(/[.]/g, '\\.')} error \\[dynamic-budget\\] The dynamic tools/list would be \\d+ bytes; it must stay within 4096\\. Shorten the meta-tools' descriptions\\.$`));
  });

  it('the closed key set of a meta-tool', () => {
    const c = fresh();
    const at = c.mutate(SVC, SEARCH, 'role: search', 'role: search\n      readOnly: true', 'readOnly');
    expect(c.check()).toEqual([
      `${at} error [unknown-key] Meta-tool svc.api.search has the unknown key "readOnly". Allowed keys: name, role, title, description, input, decision.`,
    ]);
  });
});
