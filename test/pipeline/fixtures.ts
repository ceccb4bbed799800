// Hand-made operations, validators and handlers for testing the pipeline stages through the real
// app (createApp) without the generated contract's handlers: a Tier 3 operation exists only here.
import Ajv2020 from 'ajv/dist/2020.js';
import { eq, sql } from 'drizzle-orm';
import type { OperationDef } from '../../runtime/contract-types.ts';
import type { Authenticator } from '../../runtime/auth/authenticate.ts';
import { settings } from '../../runtime/data/schema.ts';
import type { Principal } from '../../runtime/handler-types.ts';
import { ProblemError } from '../../runtime/problem-error.ts';
import type { AnyHandler } from '../../runtime/pipeline/executor.ts';
import type { ValidateFn } from '../../runtime/pipeline/validate.ts';
import { toRouterPath } from '../../runtime/http/route-path.ts';

function op(partial: Partial<OperationDef> & Pick<OperationDef, 'id' | 'method' | 'path' | 'kind'>): OperationDef {
  return {
    family: 'fx',
    tier: partial.kind === 'command' ? 1 : null,
    subject: null,
    scope: 'fx:write',
    audience: ['operator', 'client_admin', 'service_account'],
    summary: partial.id,
    params: {},
    paramTypes: {},
    successStatus: 200,
    paged: false,
    stream: null,
    idempotency: partial.kind === 'command' ? 'honoured' : 'none',
    ifMatch: 'none',
    emits: [],
    problems: [],
    mcp: null,
    mcpReason: 'fixture',
    deprecated: null,
    ...partial,
  };
}

const Id = { type: 'string', pattern: '^[A-Za-z0-9_-]+$', minLength: 1, maxLength: 64 };

export const fixtureOps: OperationDef[] = [
  op({ id: 'fx.propose2', kind: 'command', tier: 2, method: 'POST', path: '/v1/fx:propose2', params: { id: 'body', value: 'body' } }),
  op({ id: 'fx.propose3', kind: 'command', tier: 3, method: 'POST', path: '/v1/fx:propose3', params: { id: 'body', value: 'body' } }),
  op({ id: 'fx.boom', kind: 'read', scope: null, method: 'GET', path: '/v1/fx:boom' }),
  op({ id: 'fx.operators', kind: 'read', scope: null, audience: ['operator'], method: 'GET', path: '/v1/fx:operators' }),

  op({ id: 'fx.get', kind: 'read', scope: 'fx:read', method: 'GET', path: '/v1/fx/{item_id}', params: { item_id: 'path' }, paramTypes: { item_id: 'string' } }),
  op({
    id: 'fx.list',
    kind: 'read',
    scope: 'fx:read',
    method: 'GET',
    path: '/v1/fx',
    params: { limit: 'query', flag: 'query', tags: 'query' },
    paramTypes: { limit: 'integer', flag: 'boolean', tags: 'array' },
  }),
  op({
    id: 'fx.create',
    kind: 'command',
    method: 'POST',
    path: '/v1/fx',
    successStatus: 201,
    idempotency: 'required',
    params: { id: 'body', value: 'body', nested: 'body' },
    emits: ['task.created'],
  }),
  op({ id: 'fx.update', kind: 'command', method: 'PATCH', path: '/v1/fx/{item_id}', ifMatch: 'required', params: { item_id: 'path', value: 'body' } }),
  op({ id: 'fx.test', kind: 'command', method: 'POST', path: '/v1/fx/{item_id}:test', params: { item_id: 'path' } }),
  op({ id: 'fx.other', kind: 'command', method: 'POST', path: '/v1/fx/{item_id}:other', params: { item_id: 'path' } }),
];

const schemas: Record<string, object> = {
  'fx.get': { type: 'object', required: ['item_id'], properties: { item_id: Id }, additionalProperties: false },
  'fx.list': {
    type: 'object',
    properties: { limit: { type: 'integer', minimum: 1, maximum: 10 }, flag: { type: 'boolean' }, tags: { type: 'array', items: { type: 'string' } } },
    additionalProperties: false,
  },
  'fx.create': {
    type: 'object',
    required: ['id', 'value'],
    properties: {
      id: Id,
      value: { type: 'string', minLength: 1 },
      nested: { type: 'object', properties: { n: { type: 'integer' } }, additionalProperties: false },
    },
    additionalProperties: false,
  },
  'fx.update': { type: 'object', required: ['item_id', 'value'], properties: { item_id: Id, value: { type: 'string' } }, additionalProperties: false },
  'fx.test': { type: 'object', required: ['item_id'], properties: { item_id: Id }, additionalProperties: false },
  'fx.other': { type: 'object', required: ['item_id'], properties: { item_id: Id }, additionalProperties: false },
  'fx.propose2': { type: 'object', required: ['id', 'value'], properties: { id: Id, value: { type: 'string' } }, additionalProperties: false },
  'fx.propose3': { type: 'object', required: ['id', 'value'], properties: { id: Id, value: { type: 'string' } }, additionalProperties: false },
  'fx.boom': { type: 'object', additionalProperties: false },
  'fx.operators': { type: 'object', additionalProperties: false },
  // The contract's approvals inputs, by hand (the fixture app mounts the real approvals handlers).
  'approvals.list': {
    type: 'object',
    properties: { status: { type: 'string' }, operationId: { type: 'string' }, cursor: { type: 'string' }, pageSize: { type: 'integer' } },
    additionalProperties: false,
  },
  'approvals.get': { type: 'object', required: ['approval_id'], properties: { approval_id: Id }, additionalProperties: false },
  'approvals.approve': {
    type: 'object',
    required: ['approval_id'],
    properties: { approval_id: Id, comment: { type: 'string', maxLength: 2000 } },
    additionalProperties: false,
  },
  'approvals.reject': {
    type: 'object',
    required: ['approval_id'],
    properties: { approval_id: Id, comment: { type: 'string', maxLength: 2000 } },
    additionalProperties: false,
  },
};

const ajv = new (Ajv2020 as unknown as typeof Ajv2020.default)({ allErrors: true, strict: false, useDefaults: true });
export const fixtureValidators: Record<string, ValidateFn> = Object.fromEntries(
  Object.entries(schemas).map(([id, schema]) => [id, ajv.compile(schema) as unknown as ValidateFn]),
);

/** Fixture operations publish no output schema: any result passes (the generated approvals ops are checked). */
export const fixtureResultValidators: Record<string, ValidateFn> = Object.fromEntries(
  fixtureOps.map((o) => [o.id, ajv.compile({}) as unknown as ValidateFn]),
);
export const fixtureRoutes = fixtureOps.map((o) => ({ id: o.id, method: o.method, path: o.path, routerPath: toRouterPath(o.path) }));
export const fixtureOperationsById = Object.fromEntries(fixtureOps.map((o) => [o.id, o]));

/** Items live in the settings table as fx:<id> -> JSON {value, version}. */
async function getItem(db: Parameters<AnyHandler>[1]['db'], id: string) {
  const [row] = await db.select().from(settings).where(eq(settings.key, `fx:${id}`)).limit(1);
  return row ? (JSON.parse(row.value) as { value: string; version: number }) : null;
}

export const calls: { op: string; principal: string; dryRun: boolean }[] = [];
/** What each after-commit step saw of its write through a handle outside the transaction (ctx.afterCommit). */
export const afterCommitRuns: { op: string; id: string; committed: boolean }[] = [];

/** For value 'after': a step that reads the item back outside the transaction and marks the result; 'afterfail': one that throws. */
function afterCommitStep(ctx: Parameters<AnyHandler>[1], opId: string, id: string, value: string): void {
  if (value === 'after') {
    ctx.afterCommit<Record<string, unknown>>(async (result, db) => {
      const committed = (await getItem(db, id)) !== null;
      afterCommitRuns.push({ op: opId, id, committed });
      return { ...result, seenCommitted: committed };
    });
  }
  if (value === 'afterfail') {
    ctx.afterCommit(async () => {
      throw new Error('the peer went away');
    });
  }
}

export const fixtureHandlers: Record<string, AnyHandler> = {
  'fx.get': async (input, ctx) => {
    const item = await getItem(ctx.db, input.item_id);
    if (!item) throw new ProblemError('not_found', 'Item not found.');
    return { id: input.item_id, ...item, etag: `"${input.item_id}.v${item.version}"` };
  },
  'fx.list': async (input) => ({ items: [], nextCursor: null, echo: input }),
  'fx.create': async (input, ctx) => {
    calls.push({ op: 'fx.create', principal: ctx.principal.id, dryRun: ctx.dryRun });
    if (input.value === 'fail500') throw new Error('database exploded with secret details');
    if (input.value === 'fail422') throw new ProblemError('validation_failed', 'bad value', { errors: [{ pointer: '/value', message: 'bad' }] });
    if (input.value === 'slow') await new Promise((r) => setTimeout(r, 300));
    await ctx.db.insert(settings).values({ key: `fx:${input.id}`, value: JSON.stringify({ value: input.value, version: 1 }) });
    await ctx.emit('task.created', { clientId: null, subjectId: input.id }, { id: input.id });
    afterCommitStep(ctx, 'fx.create', input.id, input.value);
    return { id: input.id, value: input.value, etag: `"${input.id}.v1"` };
  },
  'fx.update': async (input, ctx) => {
    const updated = await ctx.db.execute(
      sql`update settings set value = jsonb_build_object('value', ${input.value}::text, 'version', (value::jsonb->>'version')::int + 1)::text
          where key = ${`fx:${input.item_id}`} and ${ctx.ifMatch} = '"' || ${input.item_id} || '.v' || (value::jsonb->>'version') || '"' returning value`,
    );
    const rows = (Array.isArray(updated) ? updated : (updated as { rows: unknown[] }).rows) as { value: string }[];
    if (rows.length === 0) {
      if (!(await getItem(ctx.db, input.item_id))) throw new ProblemError('not_found', 'Item not found.');
      throw new ProblemError('precondition_failed', 'The ETag does not match.');
    }
    const item = JSON.parse(rows[0]!.value) as { value: string; version: number };
    return { id: input.item_id, ...item, etag: `"${input.item_id}.v${item.version}"` };
  },
  'fx.test': async (input) => ({ verb: 'test', id: input.item_id }),
  'fx.other': async (input) => ({ verb: 'other', id: input.item_id }),
  'fx.propose2': async (input, ctx) => {
    calls.push({ op: 'fx.propose2', principal: ctx.principal.id, dryRun: ctx.dryRun });
    await ctx.db.insert(settings).values({ key: `fx:${input.id}`, value: JSON.stringify({ value: input.value, version: 1 }) });
    afterCommitStep(ctx, 'fx.propose2', input.id, input.value);
    return { id: input.id, value: input.value, by: ctx.principal.id };
  },
  'fx.propose3': async (input, ctx) => {
    calls.push({ op: 'fx.propose3', principal: ctx.principal.id, dryRun: ctx.dryRun });
    if (input.value === 'conflict' && !ctx.dryRun) throw new ProblemError('conflict', 'It clashes.');
    await ctx.db.insert(settings).values({ key: `fx:${input.id}`, value: JSON.stringify({ value: input.value, version: 1 }) });
    return { id: input.id, value: input.value, by: ctx.principal.id };
  },
  'fx.boom': async () => {
    throw new Error('internal detail: password=hunter2');
  },
  'fx.operators': async () => ({ ok: true }),
};

export function principal(id: string, over: Partial<Principal> = {}): Principal {
  return {
    kind: 'operator',
    id,
    loginMethod: 'oauth',
    credentialId: `cred_${id}`,
    role: 'admin',
    scopes: new Set(['fx:read', 'fx:write', 'approvals:read', 'approvals:decide']),
    clientScope: { all: true, clientIds: [] },
    oauthClientId: 'oac_1',
    ...over,
  };
}

/** Bearer <name> -> the principal registered under name; anything else 401. */
export function fakeAuthenticator(principals: Record<string, Principal>): Authenticator {
  return {
    async authenticate(authorization) {
      const m = /^Bearer (\S+)$/.exec(authorization ?? '');
      if (!m) throw new ProblemError('unauthorized', 'A credential is required.');
      const p = principals[m[1]!];
      if (!p) throw new ProblemError('invalid_token', 'Unknown credential.');
      return p;
    },
    async authenticateCached() {
      return null; // nothing is cached here: a throttled address gets 429
    },
    forget() {},
    async ready() {},
    async flush() {},
    async close() {},
  };
}
