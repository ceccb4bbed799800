// The generated tool table as runtime/mcp publishes it: 54 tools mapped onto the registry, schemas
// equal to the OpenAPI x-svc-mcp, clean for strict clients, truthful annotations, and error results
// that every tool's outputSchema accepts under the SDK client's own validator.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { mcpTools, toolOperation } from '../../generated/mcp-tools.ts';
import { operationsById } from '../../generated/registry.ts';
import { buildToolTable, errorResult, outcomeEnvelope, toolAllowed, underscoreAlias } from '../../runtime/mcp/index.ts';
import { problemBody } from '../../runtime/problem-documents.ts';
import { ProblemError } from '../../runtime/problem-error.ts';
import type { Principal } from '../../runtime/handler-types.ts';

const openapi = JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8')) as {
  paths: Record<string, Record<string, { operationId?: string; 'x-svc-mcp'?: Record<string, unknown> }>>;
};
const published = new Map<string, Record<string, unknown>>();
for (const item of Object.values(openapi.paths)) {
  for (const op of Object.values(item)) {
    if (op && typeof op === 'object' && op['x-svc-mcp']) published.set(String(op['x-svc-mcp'].name), op['x-svc-mcp']);
  }
}

function walk(v: unknown, visit: (key: string, value: unknown) => void): void {
  if (Array.isArray(v)) v.forEach((x) => walk(x, visit));
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      visit(k, x);
      walk(x, visit);
    }
  }
}

describe('generated MCP tool table', () => {
  const { entries, byName } = buildToolTable(mcpTools, operationsById, false);

  it('has 54 tools, each svc.<id> of a registry operation, agreeing with toolOperation', () => {
    expect(entries).toHaveLength(54);
    for (const e of entries) {
      expect(e.name).toBe(`svc.${e.op.id}`);
      expect(toolOperation[e.name]).toBe(e.op.id);
      expect(e.op.mcp).toEqual(e.def);
    }
    const toolOps = Object.values(operationsById).filter((o) => o.mcp);
    expect(toolOps).toHaveLength(54);
  });

  it('publishes every tool exactly as x-svc-mcp in the OpenAPI document', () => {
    expect(published.size).toBe(54);
    for (const def of mcpTools) {
      const doc = published.get(def.name)!;
      expect(doc, def.name).toBeDefined();
      expect(def.inputSchema, def.name).toEqual(doc.inputSchema);
      expect(def.outputSchema, def.name).toEqual(doc.outputSchema);
      expect(def.annotations, def.name).toEqual(doc.annotations);
    }
  });

  it('input schemas carry no $ref/$defs and no top-level union; names fit strict clients as aliases', () => {
    for (const def of mcpTools) {
      expect(def.inputSchema.type, def.name).toBe('object');
      for (const k of ['anyOf', 'oneOf', 'allOf', 'not']) expect(def.inputSchema[k], `${def.name} ${k}`).toBeUndefined();
      walk(def.inputSchema, (k) => expect(['$ref', '$defs', 'definitions'], def.name).not.toContain(k));
      walk(def.outputSchema, (k) => expect(['$ref', '$defs', 'definitions'], def.name).not.toContain(k));
      expect(underscoreAlias(def.name)).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    }
    const aliased = buildToolTable(mcpTools, operationsById, true);
    expect(aliased.entries).toHaveLength(108);
  });

  it('annotations are truthful: reads read-only, commands as the contract says, controls declared', () => {
    for (const { def, op } of entries) {
      expect(def.annotations.readOnlyHint, def.name).toBe(op.kind === 'read');
      const props = (def.inputSchema.properties ?? {}) as Record<string, unknown>;
      if (op.kind === 'read') {
        expect(def.annotations.destructiveHint, def.name).toBeUndefined(); // meaningless on a read-only tool (MCP spec)
        expect(props.dryRun, def.name).toBeUndefined();
        expect(props.idempotencyKey, def.name).toBeUndefined();
      } else {
        expect(props.dryRun, def.name).toBeDefined();
        expect(props.idempotencyKey !== undefined, def.name).toBe(op.idempotency !== 'none');
        expect(props.ifMatch !== undefined, def.name).toBe(op.ifMatch === 'required');
      }
    }
    expect(byName.get('svc.tasks.create')!.def.annotations).toMatchObject({ readOnlyHint: false, idempotentHint: false, destructiveHint: false });
    expect(byName.get('svc.meta.get')!.def.annotations).toMatchObject({ readOnlyHint: true });
  });

  it('every outputSchema accepts the error envelope, under the SDK client validator', () => {
    const validator = new AjvJsonSchemaValidator();
    const err = new ProblemError('validation_failed', '/title: must be string', { errors: [{ pointer: '/title', message: 'must be string' }] });
    const scope = new ProblemError('insufficient_scope', 'needs tasks:write', { extra: { requiredScope: 'tasks:write' } });
    for (const def of mcpTools) {
      const op = operationsById[def.name.replace(/^svc\./, '')];
      const check = validator.getValidator(def.outputSchema as never);
      for (const e of [err, scope, new ProblemError('not_found', 'gone')]) {
        const res = errorResult(problemBody(e, '/mcp', 'req-1', 'http://x'));
        const v = check(res.structuredContent);
        expect(v.valid, `${def.name}: ${v.errorMessage}`).toBe(true);
      }
      // and a planned / proposed envelope for commands
      if (!def.annotations.readOnlyHint) {
        for (const body of [
          { outcome: 'planned', plan: { operationId: 'x', effects: [], events: [], approvalRequired: false, preview: null } },
          // only Tier 2/3 commands ever propose, and only their envelope admits it
          ...(op.tier === 1 ? [] : [{ outcome: 'proposed', approval: { id: 'apr_1' } }]),
        ]) {
          const v = check(outcomeEnvelope({ status: 200, body, outcome: body.outcome as 'planned', headers: {} }));
          expect(v.valid, `${def.name}: ${v.errorMessage}`).toBe(true);
        }
      }
    }
  });

  it('filters by audience and scope as the pipeline does', () => {
    const everyScope = new Set(Object.values(operationsById).map((o) => o.scope).filter((s): s is string => !!s));
    const p = (kind: Principal['kind'], scopes: Iterable<string>): Principal => ({
      kind,
      id: 'u',
      loginMethod: 'api_key',
      credentialId: 'k',
      role: 'owner',
      scopes: new Set(scopes),
      clientScope: { all: true, clientIds: [] },
      oauthClientId: null,
    });
    expect(entries.filter((e) => toolAllowed(e.op, p('operator', everyScope)))).toHaveLength(54);
    const none = entries.filter((e) => toolAllowed(e.op, p('operator', [])));
    expect(none.every((e) => e.op.scope === null)).toBe(true);
    expect(none.map((e) => e.name)).toContain('svc.meta.get');
    expect(entries.filter((e) => toolAllowed(e.op, p('client_admin', everyScope))).length).toBeLessThanOrEqual(54);
  });
});
