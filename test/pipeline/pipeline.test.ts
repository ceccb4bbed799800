// The pipeline stages through the real app (createApp) with fixture operations: routing of custom
// methods, input gathering and validation, tiers and approvals (Tier 3 exists only here),
// idempotency, dry-run, If-Match, write switch, audit, problems and headers.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp, type SvcApp } from '../../runtime/app.ts';
import { svcRegistry } from '../../bin/wiring.ts';
import { loadConfig } from '../../runtime/config.ts';
import type { Database } from '../../runtime/data/client.ts';
import { freshDatabase } from '../support/db.ts';
import {
  afterCommitRuns,
  calls,
  fakeAuthenticator,
  fixtureHandlers,
  fixtureOperationsById,
  fixtureResultValidators,
  fixtureRoutes,
  fixtureValidators,
  principal,
} from './fixtures.ts';

const gen = svcRegistry();
const approvalIds = ['approvals.list', 'approvals.get', 'approvals.approve', 'approvals.reject'];
const people = {
  alice: principal('usr_alice'),
  bob: principal('usr_bob'),
  carol: principal('usr_carol'),
  keyed: principal('usr_dave', { loginMethod: 'api_key', credentialId: 'key_dave' }),
  keyed2: principal('usr_dave', { loginMethod: 'api_key', credentialId: 'key_dave_2' }),
  reader: principal('usr_erin', { scopes: new Set(['fx:read']) }),
  admin: principal('usr_fay', { kind: 'client_admin', clientScope: { all: false, clientIds: ['cli_a'] } }),
};
const BASE = 'http://svc.test';

let database: Database;
let svc: SvcApp;
let logs: string[];

function makeApp(writesEnabled = true, rateLimit?: number): SvcApp {
  logs = [];
  return createApp({
    database,
    config: loadConfig({ SVC_VALIDATE_RESPONSES: process.env.SVC_VALIDATE_RESPONSES }, { baseUrl: BASE, writesEnabled }),
    authenticator: fakeAuthenticator(people),
    log: (m) => logs.push(m),
    rateLimit: rateLimit ? { limit: rateLimit } : undefined,
    rebuildProposer: async (_db, row) => Object.values(people).find((p) => p.id === row.proposerId)!,
    registry: {
      service: gen.service,
      migrationsFolder: gen.migrationsFolder,
      generatedDir: gen.generatedDir,
      operationsById: { ...fixtureOperationsById, ...Object.fromEntries(approvalIds.map((id) => [id, gen.operationsById[id]!])) },
      validators: fixtureValidators,
      resultValidators: { ...fixtureResultValidators, ...Object.fromEntries(approvalIds.map((id) => [id, gen.resultValidators[id]!])) },
      routes: [...fixtureRoutes, ...gen.routes.filter((r) => approvalIds.includes(r.id))],
      handlers: { ...fixtureHandlers, ...Object.fromEntries(approvalIds.map((id) => [id, gen.handlers[id]!])) },
      tools: [],
      secretPointers: gen.secretPointers,
      familyDescriptions: gen.familyDescriptions,
      redactedFieldNames: gen.redactedFieldNames,
    },
  });
}

function req(path: string, init: { method?: string; as?: keyof typeof people | null; body?: unknown; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...init.headers };
  if (init.as !== null) headers.authorization = `Bearer ${init.as ?? 'alice'}`;
  let body: string | undefined;
  if (init.body !== undefined) {
    body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
    headers['content-type'] ??= 'application/json';
  }
  return svc.app.request(`${BASE}${path}`, { method: init.method ?? 'GET', headers, body });
}

const uuid = () => crypto.randomUUID();

async function count(table: string): Promise<number> {
  const [row] = await database.execute<{ n: string }>(`select count(*)::text as n from ${table}`);
  return Number(row!.n);
}

beforeAll(async () => {
  database = await freshDatabase();
});
afterAll(async () => {
  await svc?.close();
  await database.close();
});
beforeEach(async () => {
  await svc?.close();
  svc = makeApp();
  calls.length = 0;
});

describe('routing of custom methods', () => {
  it('sends each verb to its own handler and never the plain resource path to a verb', async () => {
    expect(await (await req('/v1/fx/abc:test', { method: 'POST' })).json()).toMatchObject({ result: { verb: 'test', id: 'abc' } });
    expect(await (await req('/v1/fx/abc:other', { method: 'POST' })).json()).toMatchObject({ result: { verb: 'other', id: 'abc' } });
    const plain = await req('/v1/fx/abc', { method: 'POST' });
    expect(plain.status).toBe(405);
    expect(plain.headers.get('allow')).toContain('PATCH');
    expect((await req('/v1/fx/abc/~test', { method: 'POST' })).status).toBe(404);
    expect((await req('/v1/fx/abc:nope', { method: 'POST' })).status).toBe(404);
  });
  it('treats an encoded colon as data, not as a verb separator', async () => {
    const res = await req('/v1/fx/abc%3Atest', { method: 'POST' });
    expect(res.status).toBe(405); // the resource path, which has no POST
    const get = await req('/v1/fx/abc%3Atest');
    expect(get.status).toBe(422);
    expect((await get.json()).errors[0].pointer).toBe('/item_id');
  });
  it('answers unknown routes 404 and wrong methods 405, as problems with every header', async () => {
    for (const [path, method, status] of [['/nowhere', 'GET', 404], ['/v1/fx', 'DELETE', 405]] as const) {
      const res = await req(path, { method, as: null });
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      for (const h of ['x-svc-api-version', 'x-request-id', 'traceparent', 'ratelimit', 'ratelimit-policy', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
        expect(res.headers.get(h), h).toBeTruthy();
      }
      const body = await res.json();
      expect(body).toMatchObject({ type: `${BASE}/problems/${status === 404 ? 'not_found' : 'method_not_allowed'}`, status, instance: path, retryable: false });
      expect(body.requestId).toBe(res.headers.get('x-request-id'));
    }
  });
});

describe('authentication, scope, audience, write switch', () => {
  it('401 with WWW-Authenticate pointing at the /mcp metadata', async () => {
    const res = await req('/v1/fx/a', { as: null });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${BASE}/.well-known/oauth-protected-resource/mcp"`);
    const bad = await req('/v1/fx/a', { headers: { authorization: 'Bearer nobody' }, as: null });
    expect((await bad.json()).code).toBe('invalid_token');
    expect(bad.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });
  it('403 insufficient_scope names the scope; audience miss is 404', async () => {
    const res = await req('/v1/fx', { method: 'POST', as: 'reader', body: { id: 'x', value: 'v' } });
    expect(res.status).toBe(403);
    const body = await res.json();
    expect(body).toMatchObject({ code: 'insufficient_scope', requiredScope: 'fx:write' });
    expect(body.detail).toContain('fx:write');
    expect((await req('/v1/fx:operators', { as: 'admin' })).status).toBe(404);
    expect((await req('/v1/fx:operators')).status).toBe(200);
  });
  it('write switch off: commands 404, reads unaffected', async () => {
    svc = makeApp(false);
    const res = await req('/v1/fx', { method: 'POST', body: { id: 'ws', value: 'v' }, headers: { 'idempotency-key': uuid() } });
    expect(res.status).toBe(404);
    expect((await res.json()).code).toBe('not_found');
    expect((await req('/v1/fx?limit=2')).status).toBe(200);
  });
  it('429 rate_limited with Retry-After once the credential window is used up', async () => {
    svc = makeApp(true, 2);
    await req('/v1/fx');
    await req('/v1/fx');
    const res = await req('/v1/fx');
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(res.headers.get('ratelimit')).toMatch(/^"default";r=0;t=\d+$/);
    expect((await req('/v1/fx', { as: 'bob' })).status).toBe(200);
  });
});

describe('input', () => {
  it('coerces query strings by parameter type', async () => {
    const res = await req('/v1/fx?limit=3&flag=true&tags=a,b&tags=c');
    expect((await res.json()).echo).toEqual({ limit: 3, flag: true, tags: ['a', 'b', 'c'] });
  });
  it('reports every failing field with a JSON pointer, unknown fields included', async () => {
    const res = await req('/v1/fx', { method: 'POST', body: { id: 'bad id!', nested: { n: 'x', zz: 1 }, extra: 1 }, headers: { 'idempotency-key': uuid() } });
    expect(res.status).toBe(422);
    const body = await res.json();
    const pointers = body.errors.map((e: { pointer: string }) => e.pointer).sort();
    expect(pointers).toEqual(['/extra', '/id', '/nested/n', '/nested/zz', '/value']);
    expect((await req('/v1/fx?limit=abc')).status).toBe(422);
    const misplaced = await req('/v1/fx?value=x', { method: 'POST', body: { id: 'a', value: 'v' }, headers: { 'idempotency-key': uuid() } });
    expect((await misplaced.json()).errors[0].pointer).toBe('/value');
  });
  it('413 over the body limit, 415 for non-JSON, 400 for malformed JSON, never a 500', async () => {
    const big = await req('/v1/fx', { method: 'POST', body: JSON.stringify({ id: 'a', value: 'x'.repeat(1_100_000) }) });
    expect(big.status).toBe(413);
    expect((await big.json()).code).toBe('payload_too_large');
    const text = await req('/v1/fx', { method: 'POST', body: 'id=a', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
    const broken = await req('/v1/fx', { method: 'POST', body: '{"id": ' });
    expect(broken.status).toBe(400);
    expect((await broken.json()).code).toBe('malformed_json');
    const array = await req('/v1/fx', { method: 'POST', body: '[1]', headers: { 'idempotency-key': uuid() } });
    expect(array.status).toBe(422);
  });
  it('an unexpected exception is a 500 internal_error without internals', async () => {
    const res = await req('/v1/fx:boom');
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain('hunter2');
    expect(JSON.parse(text)).toMatchObject({ code: 'internal_error', retryable: true });
    expect(logs.join('\n')).toContain(res.headers.get('x-request-id')!);
  });
});

describe('idempotency', () => {
  it('requires a UUID key where the contract says so (quoted or bare)', async () => {
    const res = await req('/v1/fx', { method: 'POST', body: { id: 'k0', value: 'v' } });
    expect(res.status).toBe(400);
    expect((await res.json()).code).toBe('idempotency_key_required');
    const bad = await req('/v1/fx', { method: 'POST', body: { id: 'k0', value: 'v' }, headers: { 'idempotency-key': 'nope' } });
    expect((await bad.json()).errors[0].pointer).toBe('/idempotencyKey');
    const quoted = await req('/v1/fx', { method: 'POST', body: { id: 'k0', value: 'v' }, headers: { 'idempotency-key': `"${uuid()}"` } });
    expect(quoted.status).toBe(201);
  });
  it('replays the first answer, refuses another input (422), and 409 while in flight', async () => {
    const key = uuid();
    const first = await req('/v1/fx', { method: 'POST', body: { id: 'k1', value: 'v' }, headers: { 'idempotency-key': key } });
    expect(first.status).toBe(201);
    expect(first.headers.get('etag')).toBe('"k1.v1"');
    const again = await req('/v1/fx', { method: 'POST', body: { value: 'v', id: 'k1' }, headers: { 'idempotency-key': key } });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(await again.json()).toEqual(await first.json());
    expect(calls.filter((c) => c.op === 'fx.create' && !c.dryRun)).toHaveLength(1);
    const other = await req('/v1/fx', { method: 'POST', body: { id: 'k1', value: 'w' }, headers: { 'idempotency-key': key } });
    expect(other.status).toBe(422);
    expect((await other.json()).code).toBe('idempotency_key_reused');

    // In flight: the first request's claim is there, its answer not yet.
    const slowKey = uuid();
    const slow = req('/v1/fx', { method: 'POST', body: { id: 'k2', value: 'slow' }, headers: { 'idempotency-key': slowKey } });
    await new Promise((r) => setTimeout(r, 50));
    const during = await req('/v1/fx', { method: 'POST', body: { id: 'k2', value: 'slow' }, headers: { 'idempotency-key': slowKey } });
    // The duplicate's claim waits on the key's unique index until the first transaction commits
    // (docs/writes.md), then replays its answer.
    expect(during.status).toBe(201);
    expect(during.headers.get('idempotency-replayed')).toBe('true');
    expect((await slow).status).toBe(201);
    const stuckKey = uuid();
    const { fingerprint } = await import('../../runtime/pipeline/idempotency.ts');
    await database.execute(
      `insert into idempotency_records (credential_id, operation_id, key, fingerprint, state, expires_at)
       values ('cred_usr_alice', 'fx.create', '${stuckKey}', '${fingerprint('fx.create', { id: 'k9', value: 'v' })}', 'in_progress', now() + interval '1 hour')`,
    );
    const inFlight = await req('/v1/fx', { method: 'POST', body: { id: 'k9', value: 'v' }, headers: { 'idempotency-key': stuckKey } });
    expect(inFlight.status).toBe(409);
    expect(await inFlight.json()).toMatchObject({ code: 'idempotency_key_in_progress', retryable: true });
    expect(inFlight.headers.get('retry-after')).toBeTruthy();
  });
  it('takes over a claim whose lease lapsed (its holder died) and runs the write once', async () => {
    const { fingerprint } = await import('../../runtime/pipeline/idempotency.ts');
    const key = uuid();
    await database.execute(
      `insert into idempotency_records (credential_id, operation_id, key, fingerprint, state, holder, lease_until, expires_at)
       values ('cred_usr_alice', 'fx.create', '${key}', '${fingerprint('fx.create', { id: 'k10', value: 'v' })}', 'in_progress',
               'dead-holder', now() - interval '1 second', now() + interval '1 hour')`,
    );
    const res = await req('/v1/fx', { method: 'POST', body: { id: 'k10', value: 'v' }, headers: { 'idempotency-key': key } });
    expect(res.status).toBe(201);
    expect(res.headers.get('idempotency-replayed')).toBeNull();
    const again = await req('/v1/fx', { method: 'POST', body: { id: 'k10', value: 'v' }, headers: { 'idempotency-key': key } });
    expect(again.headers.get('idempotency-replayed')).toBe('true');
  });
  it('a request that lost its claim to a takeover commits nothing', async () => {
    const { beginIdempotent, completeIdempotent, fingerprint } = await import('../../runtime/pipeline/idempotency.ts');
    const scope = { credentialId: 'cred_lease', operationId: 'fx.create', key: uuid(), fingerprint: fingerprint('fx.create', { id: 'k11' }) };
    const first = await beginIdempotent(database.db, scope, 24);
    expect(first.kind).toBe('new');
    if (first.kind !== 'new') return;
    first.claim.release();
    // The lease lapses (the holder stalled) and a retry takes the key over.
    await database.execute(`update idempotency_records set lease_until = now() - interval '1 second' where key = '${scope.key}'`);
    const second = await beginIdempotent(database.db, scope, 24);
    expect(second.kind).toBe('new');
    if (second.kind !== 'new') return;
    second.claim.release();
    await expect(completeIdempotent(database.db, scope, first.claim.holder, { status: 201, body: {}, headers: {} })).rejects.toMatchObject({
      code: 'idempotency_key_in_progress',
    });
    await completeIdempotent(database.db, scope, second.claim.holder, { status: 201, body: { won: true }, headers: {} });
    const replay = await beginIdempotent(database.db, scope, 24);
    expect(replay).toMatchObject({ kind: 'replay', response: { body: { won: true } } });
  });
  it('stores 4xx answers but not 5xx ones', async () => {
    const key = uuid();
    expect((await req('/v1/fx', { method: 'POST', body: { id: 'k3', value: 'fail500' }, headers: { 'idempotency-key': key } })).status).toBe(500);
    expect((await req('/v1/fx', { method: 'POST', body: { id: 'k3', value: 'fail500' }, headers: { 'idempotency-key': key } })).headers.get('idempotency-replayed')).toBeNull();
    const key4 = uuid();
    expect((await req('/v1/fx', { method: 'POST', body: { id: 'k4', value: 'fail422' }, headers: { 'idempotency-key': key4 } })).status).toBe(422);
    const replay = await req('/v1/fx', { method: 'POST', body: { id: 'k4', value: 'fail422' }, headers: { 'idempotency-key': key4 } });
    expect(replay.status).toBe(422);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
  });
  it('keys are per principal', async () => {
    const key = uuid();
    expect((await req('/v1/fx', { method: 'POST', body: { id: 'k5', value: 'v' }, headers: { 'idempotency-key': key } })).status).toBe(201);
    const bob = await req('/v1/fx', { method: 'POST', as: 'bob', body: { id: 'k6', value: 'v' }, headers: { 'idempotency-key': key } });
    expect(bob.status).toBe(201);
    expect(bob.headers.get('idempotency-replayed')).toBeNull();
  });
  it('keys are per credential: two keys of one owner never share a replay', async () => {
    const key = uuid();
    const body = { id: 'k7', value: 'v' };
    const first = await req('/v1/fx', { method: 'POST', as: 'keyed', body, headers: { 'idempotency-key': key } });
    expect(first.status).toBe(201);
    const again = await req('/v1/fx', { method: 'POST', as: 'keyed', body, headers: { 'idempotency-key': key } });
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    // The fixture write inserts by id: clear it so that a second real run (not a replay) can succeed.
    await database.execute(`delete from settings where key = 'fx:k7'`);
    const other = await req('/v1/fx', { method: 'POST', as: 'keyed2', body, headers: { 'idempotency-key': key } });
    expect(other.status).toBe(201);
    expect(other.headers.get('idempotency-replayed')).toBeNull();
    const rows = await database.execute<{ credential_id: string }>(`select credential_id from idempotency_records where key = '${key}' order by credential_id`);
    expect(rows.map((r) => r.credential_id)).toEqual(['key_dave', 'key_dave_2']);
  });
});

describe('dry-run and If-Match', () => {
  it('plans without writing anything', async () => {
    const before = { settings: await count('settings'), events: await count('events'), idem: await count('idempotency_records'), approvals: await count('approvals') };
    const res = await req('/v1/fx', { method: 'POST', body: { id: 'd1', value: 'v' }, headers: { 'idempotency-key': uuid(), prefer: 'dry-run' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('preference-applied')).toBe('dry-run');
    const body = await res.json();
    expect(body).toMatchObject({ outcome: 'planned', plan: { operationId: 'fx.create', approvalRequired: false, events: ['task.created'], preview: { id: 'd1' } } });
    const t2 = await req('/v1/fx:propose2', { method: 'POST', body: { id: 'd2', value: 'v' }, headers: { prefer: 'dry-run' } });
    expect((await t2.json()).plan.approvalRequired).toBe(true);
    expect({ settings: await count('settings'), events: await count('events'), idem: await count('idempotency_records'), approvals: await count('approvals') }).toEqual(before);
    expect(calls.every((c) => c.dryRun)).toBe(true);
  });
  it('428 without If-Match, 412 on a stale ETag, and exactly one winner of ten parallel PATCHes', async () => {
    await req('/v1/fx', { method: 'POST', body: { id: 'm1', value: 'v' }, headers: { 'idempotency-key': uuid() } });
    const missing = await req('/v1/fx/m1', { method: 'PATCH', body: { value: 'w' } });
    expect(missing.status).toBe(428);
    expect((await missing.json()).code).toBe('precondition_required');
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => req('/v1/fx/m1', { method: 'PATCH', body: { value: `w${i}` }, headers: { 'if-match': '"m1.v1"' } })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 412, 412, 412, 412, 412, 412, 412, 412, 412]);
    const winner = results.find((r) => r.status === 200)!;
    expect(winner.headers.get('etag')).toBe('"m1.v2"');
  });
});

describe('tiers and approvals', () => {
  it('Tier 2: 202 proposal, approved by another person, the write runs as the proposer', async () => {
    const res = await req('/v1/fx:propose2', { method: 'POST', body: { id: 'p1', value: 'v' } });
    expect(res.status).toBe(202);
    const { outcome, approval } = await res.json();
    expect(outcome).toBe('proposed');
    expect(approval).toMatchObject({ status: 'pending', tier: 2, requiredApprovals: 1, operationId: 'fx.propose2', pollUrl: `/v1/approvals/${approval.id}`, input: { id: 'p1', value: 'v' } });
    expect(approval.proposer).toMatchObject({ kind: 'operator', id: 'usr_alice' });
    expect(await count("settings where key = 'fx:p1'")).toBe(0);

    expect((await req(`/v1/approvals/${approval.id}:approve`, { method: 'POST' })).status).toBe(403); // own proposal
    const keyed = await req(`/v1/approvals/${approval.id}:approve`, { method: 'POST', as: 'keyed' });
    // Another credential's API key neither sees nor decides the proposal.
    expect(keyed.status).toBe(404);
    expect((await keyed.json()).code).toBe('not_found');

    const ok = await req(`/v1/approvals/${approval.id}:approve`, { method: 'POST', as: 'bob', body: { comment: 'fine' } });
    expect(ok.status).toBe(200);
    const decided = (await ok.json()).result;
    expect(decided).toMatchObject({ status: 'approved', result: { id: 'p1', by: 'usr_alice' } });
    expect(decided.decisions[0]).toMatchObject({ approver: { id: 'usr_bob' }, decision: 'approve', comment: 'fine' });
    expect(await count("settings where key = 'fx:p1'")).toBe(1);
    expect(await count("events where type = 'approval.approved'")).toBeGreaterThan(0);

    const again = await req(`/v1/approvals/${approval.id}:reject`, { method: 'POST', as: 'carol' });
    expect(again.status).toBe(409);
    expect((await again.json()).code).toBe('invalid_transition');
    const polled = await req(approval.pollUrl, { as: 'alice' });
    expect((await polled.json()).status).toBe('approved');
  });
  it('Tier 3: two distinct approvers; the same person twice is refused', async () => {
    const { approval } = await (await req('/v1/fx:propose3', { method: 'POST', body: { id: 'p3', value: 'v' } })).json();
    expect(approval.requiredApprovals).toBe(2);
    const first = await (await req(`/v1/approvals/${approval.id}:approve`, { method: 'POST', as: 'bob' })).json();
    expect(first.result.status).toBe('pending');
    expect(await count("settings where key = 'fx:p3'")).toBe(0);
    const twice = await req(`/v1/approvals/${approval.id}:approve`, { method: 'POST', as: 'bob' });
    expect(twice.status).toBe(409);
    const second = await (await req(`/v1/approvals/${approval.id}:approve`, { method: 'POST', as: 'carol' })).json();
    expect(second.result.status).toBe('approved');
    expect(second.result.decisions).toHaveLength(2);
    expect(await count("settings where key = 'fx:p3'")).toBe(1);
  });
  it('a write that fails on approval is stored as failed with its problem; reject ends a proposal', async () => {
    const { approval } = await (await req('/v1/fx:propose3', { method: 'POST', body: { id: 'p4', value: 'conflict' } })).json();
    await req(`/v1/approvals/${approval.id}:approve`, { method: 'POST', as: 'bob' });
    const done = await (await req(`/v1/approvals/${approval.id}:approve`, { method: 'POST', as: 'carol' })).json();
    expect(done.result).toMatchObject({ status: 'failed', error: { code: 'conflict', status: 409 }, result: null });

    const { approval: other } = await (await req('/v1/fx:propose2', { method: 'POST', body: { id: 'p5', value: 'v' } })).json();
    const rejected = await (await req(`/v1/approvals/${other.id}:reject`, { method: 'POST', as: 'bob', body: { comment: 'no' } })).json();
    expect(rejected.result.status).toBe('rejected');
    expect(await count("events where type = 'approval.rejected'")).toBeGreaterThan(0);
    expect(await count("settings where key = 'fx:p5'")).toBe(0);
  });
  it('scopes are checked again when the approved write runs', async () => {
    const { approval } = await (await req('/v1/fx:propose2', { method: 'POST', body: { id: 'p6', value: 'v' } })).json();
    const saved = people.alice.scopes;
    people.alice.scopes = new Set(['fx:read']);
    try {
      const res = await (await req(`/v1/approvals/${approval.id}:approve`, { method: 'POST', as: 'bob' })).json();
      expect(res.result).toMatchObject({ status: 'failed', error: { code: 'insufficient_scope' } });
    } finally {
      people.alice.scopes = saved;
    }
  });
  it('a retried proposal with the same key replays the 202', async () => {
    const key = uuid();
    const a = await (await req('/v1/fx:propose2', { method: 'POST', body: { id: 'p7', value: 'v' }, headers: { 'idempotency-key': key } })).json();
    const b = await req('/v1/fx:propose2', { method: 'POST', body: { id: 'p7', value: 'v' }, headers: { 'idempotency-key': key } });
    expect(b.status).toBe(202);
    expect(b.headers.get('idempotency-replayed')).toBe('true');
    expect((await b.json()).approval.id).toBe(a.approval.id);
  });
});

describe('more rules', () => {
  it('an expired idempotency record no longer binds its key', async () => {
    const key = uuid();
    expect((await req('/v1/fx', { method: 'POST', body: { id: 'e1', value: 'v' }, headers: { 'idempotency-key': key } })).status).toBe(201);
    await database.execute(`update idempotency_records set expires_at = now() - interval '1 second' where key = '${key}'`);
    const res = await req('/v1/fx', { method: 'POST', body: { id: 'e2', value: 'w' }, headers: { 'idempotency-key': key } });
    expect(res.status).toBe(201);
    expect(res.headers.get('idempotency-replayed')).toBeNull();
  });
  it('an expired proposal cannot be decided (409 invalid_transition) and reads as expired', async () => {
    const { approval } = await (await req('/v1/fx:propose2', { method: 'POST', body: { id: 'x1', value: 'v' } })).json();
    await database.execute(`update approvals set expires_at = now() - interval '1 second' where id = '${approval.id}'`);
    expect((await (await req(`/v1/approvals/${approval.id}`)).json()).status).toBe('expired');
    const res = await req(`/v1/approvals/${approval.id}:approve`, { method: 'POST', as: 'bob' });
    expect(res.status).toBe(409);
    expect((await res.json()).code).toBe('invalid_transition');
    expect(await count("settings where key = 'fx:x1'")).toBe(0);
  });
  it('approvals are visible to their proposer and to callers whose reach covers their client', async () => {
    const { approval } = await (await req('/v1/fx:propose2', { method: 'POST', body: { id: 'v1', value: 'v' } })).json();
    expect((await req(`/v1/approvals/${approval.id}`, { as: 'bob' })).status).toBe(200); // operator, all clients
    expect((await req(`/v1/approvals/${approval.id}`, { as: 'admin' })).status).toBe(404); // client admin, internal proposal
    const list = await (await req('/v1/approvals', { as: 'admin' })).json();
    expect(list.items.some((a: { id: string }) => a.id === approval.id)).toBe(false);
    const mine = await (await req('/v1/approvals?operationId=fx.propose2&status=pending')).json();
    expect(mine.items.some((a: { id: string }) => a.id === approval.id)).toBe(true);
  });
  it('ctx.emit writes the outbox and NOTIFYs on commit only', async () => {
    const got: string[] = [];
    const unlisten = await database.listen('svc_events', (payload) => got.push(payload));
    try {
      await req('/v1/fx', { method: 'POST', body: { id: 'n1', value: 'v' }, headers: { 'idempotency-key': uuid(), prefer: 'dry-run' } });
      await req('/v1/fx', { method: 'POST', body: { id: 'n2', value: 'v' }, headers: { 'idempotency-key': uuid() } });
      for (let i = 0; i < 50 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 100));
      const payloads = got.map((g) => JSON.parse(g));
      expect(payloads.map((p) => p.type)).toEqual(['task.created']);
      const [row] = await database.execute<{ subject_id: string; actor_id: string }>(`select subject_id, actor_id from events where id = '${payloads[0].id}'`);
      expect(row).toMatchObject({ subject_id: 'n2', actor_id: 'usr_alice' });
      expect(await count("events where subject_id = 'n1'")).toBe(0);
    } finally {
      await unlisten();
    }
  });
});

describe('after commit (ctx.afterCommit)', () => {
  it('runs once the write committed, outside its transaction; its result is the answer and the stored replay', async () => {
    afterCommitRuns.length = 0;
    const key = uuid();
    const res = await req('/v1/fx', { method: 'POST', body: { id: 'ac1', value: 'after' }, headers: { 'idempotency-key': key } });
    expect(res.status).toBe(201);
    expect((await res.json()).result).toEqual({ id: 'ac1', value: 'after', etag: '"ac1.v1"', seenCommitted: true });
    expect(afterCommitRuns).toEqual([{ op: 'fx.create', id: 'ac1', committed: true }]);
    const replay = await req('/v1/fx', { method: 'POST', body: { id: 'ac1', value: 'after' }, headers: { 'idempotency-key': key } });
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect((await replay.json()).result).toMatchObject({ seenCommitted: true });
    expect(afterCommitRuns).toHaveLength(1);
  });

  it('a dry run never runs a step', async () => {
    afterCommitRuns.length = 0;
    const res = await req('/v1/fx', { method: 'POST', body: { id: 'ac2', value: 'after' }, headers: { 'idempotency-key': uuid(), prefer: 'dry-run' } });
    expect(res.status).toBe(200);
    expect((await res.json()).plan.preview).not.toHaveProperty('seenCommitted');
    expect(afterCommitRuns).toEqual([]);
  });

  it('a step that throws is logged; the committed write and its answer stand', async () => {
    const res = await req('/v1/fx', { method: 'POST', body: { id: 'ac3', value: 'afterfail' }, headers: { 'idempotency-key': uuid() } });
    expect(res.status).toBe(201);
    expect((await res.json()).result).toEqual({ id: 'ac3', value: 'afterfail', etag: '"ac3.v1"' });
    expect(await count("settings where key = 'fx:ac3'")).toBe(1);
    const line = logs.map((l) => JSON.parse(l)).find((l) => l.event === 'after_commit_failed');
    expect(line).toMatchObject({ operationId: 'fx.create' });
  });

  it("an approved write's step runs after the approve commits", async () => {
    afterCommitRuns.length = 0;
    const { approval } = await (await req('/v1/fx:propose2', { method: 'POST', body: { id: 'ac4', value: 'after' } })).json();
    expect(afterCommitRuns).toEqual([]); // the pre-flight plan is a dry run
    const ok = await req(`/v1/approvals/${approval.id}:approve`, { method: 'POST', as: 'bob' });
    expect(ok.status).toBe(200);
    expect((await ok.json()).result).toMatchObject({ status: 'approved', result: { id: 'ac4', by: 'usr_alice' } });
    expect(afterCommitRuns).toEqual([{ op: 'fx.propose2', id: 'ac4', committed: true }]);
  });
});

describe('audit', () => {
  it('records every call, refused ones included, without bodies or credentials', async () => {
    await req('/v1/fx', { method: 'POST', body: { id: 'au1', value: 'secret-body-value' }, headers: { 'idempotency-key': uuid() } });
    await req('/v1/fx', { as: null });
    await req('/v1/fx', { method: 'POST', as: 'reader', body: { id: 'x', value: 'v' } });
    await svc.flushAudit();
    const rows = await database.execute<Record<string, unknown>>('select * from audit_log order by id');
    const text = JSON.stringify(rows);
    expect(text).not.toContain('secret-body-value');
    expect(text).not.toContain('Bearer');
    const created = rows.find((r) => r.operation_id === 'fx.create' && r.status === 201)!;
    expect(created).toMatchObject({ transport: 'rest', principal_kind: 'operator', principal_id: 'usr_alice', credential_id: 'cred_usr_alice', login_method: 'oauth', outcome: 'ran', method: 'POST', path: '/v1/fx' });
    expect(rows.some((r) => r.status === 401 && r.problem_code === 'unauthorized' && r.principal_id === null)).toBe(true);
    expect(rows.some((r) => r.status === 403 && r.problem_code === 'insufficient_scope' && r.principal_id === 'usr_erin')).toBe(true);
  });
});
