// REST writes over real HTTP: idempotency, dry-run, If-Match, tiers and approvals with OAuth people
// from the loopback test IdP, scopes, the write switch, audit, and a final scan proving no secret,
// token or request body reached the audit table or the server's logs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIdp, type TestIdp } from '../support/idp.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { api, rowCount, tableCounts, WRITE_TABLES, type Api } from './helpers.ts';

let s: TestServer;
let idp: TestIdp;
let op: Api;
const uuid = () => crypto.randomUUID();
/** Every secret this suite handled: the audit and log scan at the end looks for each. */
const secrets: string[] = [];
const bodies: string[] = [];

beforeAll(async () => {
  idp = await startIdp();
  s = await startTestServer({ oauthIssuer: idp.issuer, oauthJwksUrl: idp.jwksUrl });
  op = api(s.url, s.credentials.operatorKey);
  secrets.push(s.credentials.operatorKey, s.credentials.serviceKey);
});
afterAll(async () => {
  await s?.close();
  await idp?.close();
});

async function token(sub: string, scope: string | string[] = 'projects:read projects:write approvals:read approvals:decide tasks:read tasks:write'): Promise<string> {
  const t = await idp.issueToken({ sub, aud: `${s.config.baseUrl}/mcp`, scope, client_id: s.credentials.oauthClientId });
  secrets.push(t);
  return t;
}

function post(path: string, body: unknown, init: { key?: string; headers?: Record<string, string>; method?: string } = {}) {
  const text = JSON.stringify(body);
  bodies.push(text);
  return fetch(`${s.url}${path}`, {
    method: init.method ?? 'POST',
    headers: { authorization: `Bearer ${init.key ?? s.credentials.operatorKey}`, 'content-type': 'application/json', ...init.headers },
    body: text,
  });
}

describe('idempotency', () => {
  it('requires an Idempotency-Key on creating POSTs', async () => {
    const res = await post('/v1/tasks', { title: 'no key', clientId: s.credentials.clientId });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'idempotency_key_required', retryable: false });
    const batch = await post('/v1/tasks:batch', { tasks: [{ title: 'a', clientId: s.credentials.clientId }] });
    expect((await batch.json()).code).toBe('idempotency_key_required');
  });
  it('replays with Idempotency-Replayed, refuses another body with 422, accepts a quoted key', async () => {
    const key = uuid();
    const body = { title: 'replayed task zq1', clientId: s.credentials.clientId };
    const first = await post('/v1/tasks', body, { headers: { 'idempotency-key': `"${key}"` } });
    expect(first.status).toBe(201);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"tsk_/);
    const again = await post('/v1/tasks', body, { headers: { 'idempotency-key': key } });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.headers.get('etag')).toBe(etag);
    expect((await again.json()).result.id).toBe((await first.json()).result.id);
    expect(await rowCount(s.database, `tasks where title = 'replayed task zq1'`)).toBe(1);
    const other = await post('/v1/tasks', { ...body, title: 'something else' }, { headers: { 'idempotency-key': key } });
    expect(other.status).toBe(422);
    expect((await other.json()).code).toBe('idempotency_key_reused');
  });
  it('409 idempotency_key_in_progress (retryable) while the first request is in flight', async () => {
    // A claim whose answer is not stored yet: take the fingerprint of a finished identical request.
    const body = { title: 'in flight', clientId: s.credentials.clientId };
    const done = uuid();
    expect((await post('/v1/tasks', body, { headers: { 'idempotency-key': done } })).status).toBe(201);
    const [{ fingerprint }] = await s.database.execute<{ fingerprint: string }>(`select fingerprint from idempotency_records where key = '${done}'`);
    const key = uuid();
    await s.database.execute(
      `insert into idempotency_records (credential_id, operation_id, key, fingerprint, state, expires_at)
       values ('${s.credentials.operatorKeyId}', 'tasks.create', '${key}', '${fingerprint}', 'in_progress', now() + interval '1 hour')`,
    );
    const res = await post('/v1/tasks', body, { headers: { 'idempotency-key': key } });
    expect(res.status).toBe(409);
    expect(await res.json()).toMatchObject({ code: 'idempotency_key_in_progress', retryable: true });
    expect(res.headers.get('retry-after')).toBeTruthy();
  });
  it('20 parallel requests with one key create exactly one task', async () => {
    const key = uuid();
    const body = { title: 'parallel zq2', clientId: s.credentials.clientId };
    const results = await Promise.all(Array.from({ length: 20 }, () => post('/v1/tasks', body, { headers: { 'idempotency-key': key } })));
    const statuses = results.map((r) => r.status);
    expect(statuses.every((st) => st === 201 || st === 409)).toBe(true);
    expect(statuses.filter((st) => st === 201).length).toBeGreaterThanOrEqual(1);
    expect(results.filter((r) => r.status === 201 && r.headers.get('idempotency-replayed') !== 'true')).toHaveLength(1);
    expect(await rowCount(s.database, `tasks where title = 'parallel zq2'`)).toBe(1);
  });
});

describe('dry-run', () => {
  it('plans a Tier 1 and a Tier 2 command and writes nothing', async () => {
    const before = await tableCounts(s.database, WRITE_TABLES);
    const t1 = await post('/v1/tasks', { title: 'dry', clientId: s.credentials.clientId }, { headers: { 'idempotency-key': uuid(), prefer: 'dry-run' } });
    expect(t1.status).toBe(200);
    const plan = await t1.json();
    expect(plan).toMatchObject({ outcome: 'planned', plan: { operationId: 'tasks.create', approvalRequired: false, events: ['task.created'] } });
    expect(plan.plan.preview.title).toBe('dry');
    const t2 = await post('/v1/projects', { clientId: s.credentials.clientId, name: 'dry project' }, { headers: { 'idempotency-key': uuid(), prefer: 'dry-run' } });
    expect(t2.status).toBe(200);
    expect((await t2.json()).plan.approvalRequired).toBe(true);
    const patch = await post(`/v1/tasks/${s.credentials.taskId}`, { title: 'dry title' }, { method: 'PATCH', headers: { prefer: 'dry-run', 'if-match': '"*"' } });
    expect(patch.status).toBeLessThan(500);
    expect(await tableCounts(s.database, WRITE_TABLES)).toEqual(before);
  });
});

describe('If-Match', () => {
  it('428 without If-Match; of 10 parallel PATCHes with one ETag exactly one wins, nine get 412', async () => {
    const created = await (await post('/v1/tasks', { title: 'contended', clientId: s.credentials.clientId }, { headers: { 'idempotency-key': uuid() } })).json();
    const id = created.result.id as string;
    const etag = created.result.etag as string;
    const missing = await post(`/v1/tasks/${id}`, { title: 'x' }, { method: 'PATCH' });
    expect(missing.status).toBe(428);
    expect((await missing.json()).code).toBe('precondition_required');
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => post(`/v1/tasks/${id}`, { title: `t${i}` }, { method: 'PATCH', headers: { 'if-match': etag } })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 412, 412, 412, 412, 412, 412, 412, 412, 412]);
    const loser = results.find((r) => r.status === 412)!;
    expect((await loser.json()).code).toBe('precondition_failed');
    expect(results.find((r) => r.status === 200)!.headers.get('etag')).not.toBe(etag);
  });
});

describe('OAuth tokens from the test IdP', () => {
  it('a valid token authenticates; a wrong audience, an expired token or a foreign signature is 401 invalid_token', async () => {
    const ok = await fetch(`${s.url}/v1/meta`, { headers: { authorization: `Bearer ${await token(s.credentials.adminSub as string)}` } });
    expect(ok.status).toBe(200);
    expect((await ok.json()).principal).toMatchObject({ loginMethod: 'oauth', id: s.credentials.adminUserId });
    const bad = [
      await idp.issueToken({ sub: s.credentials.adminSub as string, aud: 'https://elsewhere.example', scope: 'tasks:read', client_id: s.credentials.oauthClientId }),
      await idp.issueToken({ sub: s.credentials.adminSub as string, aud: `${s.config.baseUrl}/mcp`, scope: 'tasks:read', client_id: s.credentials.oauthClientId, exp: Math.floor(Date.now() / 1000) - 3600 }),
      await idp.issueToken({ sub: s.credentials.adminSub as string, aud: `${s.config.baseUrl}/mcp`, scope: 'tasks:read', client_id: s.credentials.oauthClientId, kid: 'not-published' }),
    ];
    secrets.push(...bad);
    for (const t of bad) {
      const res = await fetch(`${s.url}/v1/tasks`, { headers: { authorization: `Bearer ${t}` } });
      expect(res.status).toBe(401);
      expect((await res.json()).code).toBe('invalid_token');
      expect(res.headers.get('www-authenticate')).toBe(
        `Bearer resource_metadata="${s.config.baseUrl}/.well-known/oauth-protected-resource/mcp", error="invalid_token"`,
      );
    }
  });
});

describe('scopes and the write switch', () => {
  it('403 insufficient_scope names the scope', async () => {
    const t = await token(s.credentials.operatorSub as string, 'tasks:read');
    const res = await post('/v1/tasks', { title: 'x', clientId: s.credentials.clientId }, { key: t, headers: { 'idempotency-key': uuid() } });
    expect(res.status).toBe(403);
    const body = await res.json();
    expect(body).toMatchObject({ code: 'insufficient_scope', requiredScope: 'tasks:write' });
    expect(body.detail).toContain('tasks:write');
  });
  it('API_WRITES_ENABLED off: every command 404, reads unaffected', async () => {
    const off = await startTestServer({ writesEnabled: false });
    try {
      const key = off.credentials.operatorKey;
      secrets.push(key, off.credentials.serviceKey);
      const res = await fetch(`${off.url}/v1/tasks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': uuid() },
        body: JSON.stringify({ title: 'x', clientId: off.credentials.clientId }),
      });
      expect(res.status).toBe(404);
      expect((await res.json()).code).toBe('not_found');
      const complete = await fetch(`${off.url}/v1/tasks/${off.credentials.taskId}:complete`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
      expect(complete.status).toBe(404);
      const { response } = await api(off.url, key).GET('/v1/tasks');
      expect(response.status).toBe(200);
    } finally {
      await off.close();
    }
  });
});

describe('Tier 2 and approvals', () => {
  it('projects.create -> 202 proposal -> approved by another OAuth operator -> the project exists', async () => {
    const before = await rowCount(s.database, 'projects');
    const res = await post('/v1/projects', { clientId: s.credentials.clientId, name: 'Proposed project zq3' }, { headers: { 'idempotency-key': uuid() } });
    expect(res.status).toBe(202);
    const { outcome, approval } = await res.json();
    expect(outcome).toBe('proposed');
    expect(approval).toMatchObject({ status: 'pending', tier: 2, requiredApprovals: 1, operationId: 'projects.create', pollUrl: `/v1/approvals/${approval.id}`, result: null, error: null, decisions: [] });
    expect(approval.proposer).toMatchObject({ kind: 'operator', id: s.credentials.operatorUserId });
    expect(await rowCount(s.database, 'projects')).toBe(before);

    // The proposer itself (signed in with OAuth) may not approve; nor may an API key.
    const self = await post(`/v1/approvals/${approval.id}:approve`, {}, { key: await token(s.credentials.operatorSub as string) });
    expect(self.status).toBe(403);
    expect((await self.json()).code).toBe('forbidden');
    const byKey = await post(`/v1/approvals/${approval.id}:approve`, {}, { key: s.credentials.serviceKey });
    expect([403, 404]).toContain(byKey.status); // a service key is outside approvals.approve's audience
    const byOperatorKey = await fetch(`${s.url}/v1/approvals/${approval.id}:approve`, { method: 'POST', headers: { authorization: `Bearer ${s.credentials.operatorKey}` } });
    expect(byOperatorKey.status).toBe(403);

    const approver = await token(s.credentials.adminSub as string);
    const ok = await post(`/v1/approvals/${approval.id}:approve`, { comment: 'go' }, { key: approver });
    expect(ok.status).toBe(200);
    const decided = (await ok.json()).result;
    expect(decided.status).toBe('approved');
    expect(decided.result).toMatchObject({ name: 'Proposed project zq3', clientId: s.credentials.clientId });
    expect(decided.decisions[0]).toMatchObject({ decision: 'approve', comment: 'go', approver: { id: s.credentials.adminUserId } });
    expect(await rowCount(s.database, `projects where name = 'Proposed project zq3'`)).toBe(1);
    expect(await rowCount(s.database, `events where type = 'approval.approved' and subject_id = '${approval.id}'`)).toBe(1);
    // Event data is the Approval as approvals.get returns it.
    const [evt] = await s.database.execute<{ data: Record<string, unknown> }>(`select data from events where type = 'approval.approved' and subject_id = '${approval.id}'`);
    expect(evt!.data).toMatchObject({ id: approval.id, status: 'approved', operationId: decided.operationId, pollUrl: decided.pollUrl });

    const polled = await api(s.url, s.credentials.operatorKey).GET('/v1/approvals/{approval_id}', { params: { path: { approval_id: approval.id } } });
    expect(polled.data).toMatchObject({ status: 'approved' });
    const again = await post(`/v1/approvals/${approval.id}:reject`, {}, { key: await token(s.credentials.staffOperatorSub as string) });
    expect(again.status).toBe(409);
    expect((await again.json()).code).toBe('invalid_transition');
  });
  it('a rejected proposal never runs; approvals.list shows it', async () => {
    const { approval } = await (
      await post('/v1/projects', { clientId: s.credentials.clientId, name: 'Rejected project zq4' }, { headers: { 'idempotency-key': uuid() } })
    ).json();
    const res = await post(`/v1/approvals/${approval.id}:reject`, { comment: 'no' }, { key: await token(s.credentials.adminSub as string) });
    expect((await res.json()).result.status).toBe('rejected');
    expect(await rowCount(s.database, `projects where name = 'Rejected project zq4'`)).toBe(0);
    const { data } = await op.GET('/v1/approvals', { params: { query: { status: 'rejected' } } });
    expect(data!.items.some((a) => a.id === approval.id)).toBe(true);
  });
});

describe('audit', () => {
  it('records every call with the caller, and never a body, token or secret (audit table and logs)', async () => {
    await s.flushAudit();
    const rows = await s.database.execute<Record<string, unknown>>('select * from audit_log');
    expect(rows.length).toBeGreaterThan(40);
    expect(rows.some((r) => r.login_method === 'oauth' && r.operation_id === 'approvals.approve' && r.status === 200)).toBe(true);
    expect(rows.some((r) => r.login_method === 'api_key' && r.operation_id === 'projects.create' && r.outcome === 'proposed' && r.status === 202)).toBe(true);
    expect(rows.some((r) => r.operation_id === 'tasks.create' && r.outcome === 'planned')).toBe(true);
    expect(rows.some((r) => r.problem_code === 'insufficient_scope' && r.status === 403)).toBe(true);
    // The approved write is audited as the proposer's call, under the approving request's id.
    const approve = rows.find((r) => r.operation_id === 'approvals.approve' && r.status === 200)!;
    expect(rows.find((r) => r.request_id === approve.request_id && r.operation_id === 'projects.create')).toMatchObject({
      principal_id: s.credentials.operatorUserId,
      login_method: 'api_key',
      outcome: 'ran',
      status: 201,
    });
    for (const r of rows) {
      expect(r.request_id).toBeTruthy();
      expect(r.transport).toBe('rest');
      expect(typeof r.duration_ms).toBe('number');
    }
    const dump = JSON.stringify(rows) + '\n' + s.logs.join('\n');
    for (const secret of secrets) expect(dump.includes(secret)).toBe(false);
    for (const secret of secrets) expect(dump.includes(secret.slice(-24))).toBe(false);
    for (const body of bodies) if (body.length > 12) expect(dump.includes(body)).toBe(false);
    expect(dump).not.toMatch(/svc_sk_(live|test)_[A-Za-z0-9_-]{20,}/);
    expect(dump).not.toMatch(/eyJ[\w-]+\.[\w-]+\./);
    expect(dump).not.toContain('task zq1'); // a title sent in a body (not 'zq1' alone: a random id may hold it)
  });
});
