// Who a credential acts as, end to end over REST and MCP on the real server (issue 7 items 2-4):
// idempotency is keyed by the credential, API keys are never widened by visibility rules 1-3, and
// OAuth scopes come from the live grant (tokens carry only sign-in scopes), a revoked grant's token
// being refused. Runs on PGlite, and on PostgreSQL when DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { oauthGrants } from '../../runtime/data/schema.ts';
import type { SeedCredentials as DemoCredentials } from '../../demo/seed.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { startIdp, type TestIdp } from '../support/idp.ts';
import { addKey } from '../auth/fixtures.ts';
import { connectMcp, ok, toolError, type McpSession } from '../mcp/support.ts';

const SIGN_IN = 'openid email profile';

describe('principals: idempotency per credential, keys never widened, OAuth scopes from the grant', () => {
  let s: TestServer;
  let idp: TestIdp;
  /** The demo seed's credentials and ids, typed. */
  let c: DemoCredentials;
  const sessions: McpSession[] = [];

  async function token(sub: string, o: { scope?: string; iat?: number } = {}): Promise<string> {
    return idp.issueToken({ sub, aud: `${s.config.baseUrl}/mcp`, scope: o.scope ?? SIGN_IN, client_id: c.oauthClientId, iat: o.iat });
  }
  async function mcp(credential: string): Promise<McpSession> {
    const m = await connectMcp(s.url, credential);
    sessions.push(m);
    return m;
  }
  async function rest(credential: string, path: string, init: { method?: string; body?: unknown; key?: string } = {}): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${credential}` };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    if (init.key) headers['idempotency-key'] = init.key;
    return fetch(`${s.url}${path}`, { method: init.method ?? 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  }
  async function listIds(credential: string, query = ''): Promise<string[]> {
    const res = await rest(credential, `/v1/tasks?pageSize=200${query}`);
    expect(res.status).toBe(200);
    return ((await res.json()) as { items: { id: string }[] }).items.map((t) => t.id);
  }

  beforeAll(async () => {
    idp = await startIdp();
    s = await startTestServer({ oauthIssuer: idp.issuer, oauthJwksUrl: idp.jwksUrl, app: { rateLimit: { limit: 100_000 } } });
    c = s.credentials as unknown as DemoCredentials;
  }, 60_000);
  afterAll(async () => {
    await Promise.all(sessions.map((m) => m.close().catch(() => undefined)));
    await s?.close();
    await idp?.close();
  });

  describe('idempotency is keyed by (credential, operation, key)', () => {
    it('REST: a service key sending the operator key\'s Idempotency-Key and body gets its own fresh answer', async () => {
      const key = randomUUID();
      const body = { title: 'idem per credential', clientId: c.clientId };
      const first = await rest(c.operatorKey, '/v1/tasks', { method: 'POST', body, key });
      expect(first.status).toBe(201);
      const firstId = ((await first.json()) as { result: { id: string } }).result.id;
      const replay = await rest(c.operatorKey, '/v1/tasks', { method: 'POST', body, key });
      expect(replay.headers.get('idempotency-replayed')).toBe('true');
      expect(((await replay.json()) as { result: { id: string } }).result.id).toBe(firstId);

      const other = await rest(c.serviceKey, '/v1/tasks', { method: 'POST', body, key });
      expect(other.status).toBe(201);
      expect(other.headers.get('idempotency-replayed')).toBeNull();
      expect(((await other.json()) as { result: { id: string } }).result.id).not.toBe(firstId);
    });

    it('REST: two keys of one owner never share a replay', async () => {
      const second = await addKey(s.database, { ownerUserId: c.operatorUserId, mode: 'test' });
      const key = randomUUID();
      const body = { title: 'two keys one owner', clientId: c.clientId };
      const a = await rest(c.operatorKey, '/v1/tasks', { method: 'POST', body, key });
      expect(a.status).toBe(201);
      const b = await rest(second.secret, '/v1/tasks', { method: 'POST', body, key });
      expect(b.status).toBe(201);
      expect(b.headers.get('idempotency-replayed')).toBeNull();
      expect(((await b.json()) as { result: { id: string } }).result.id).not.toBe(((await a.json()) as { result: { id: string } }).result.id);
      const rows = await s.database.execute<{ credential_id: string }>(`select credential_id from idempotency_records where key = '${key}' order by credential_id`);
      expect(rows.map((r) => r.credential_id).sort()).toEqual([c.operatorKeyId, second.id].sort());
    });

    it('MCP: the service key sending the operator key\'s idempotencyKey and input gets its own fresh answer', async () => {
      const operator = await mcp(c.operatorKey);
      const service = await mcp(c.serviceKey);
      const args = { title: 'idem per credential (mcp)', clientId: c.clientId, idempotencyKey: randomUUID() };
      const first = ok(await operator.call('svc.tasks.create', args));
      expect(ok(await operator.call('svc.tasks.create', args)).result.id).toBe(first.result.id);
      const other = ok(await service.call('svc.tasks.create', args));
      expect(other.outcome).toBe('ran');
      expect(other.result.id).not.toBe(first.result.id);
    });
  });

  describe('API keys are never widened (visibility rules 1-3)', () => {
    it('REST: the unbound operator key gets 404 on an internal task, and lists none; an OAuth operator reads them', async () => {
      const internal = c.internalTaskId;
      expect((await rest(c.operatorKey, `/v1/tasks/${internal}`)).status).toBe(404);
      expect((await rest(c.operatorKey, `/v1/tasks/${internal}/comments`)).status).toBe(404);
      const keyIds = await listIds(c.operatorKey);
      expect(keyIds).not.toContain(internal);
      expect(keyIds).toContain(c.taskId);
      expect(keyIds).toContain('tsk_demo_globex_contract'); // its owner reaches every client

      const person = await token(c.operatorSub);
      expect((await rest(person, `/v1/tasks/${internal}`)).status).toBe(200);
      expect(await listIds(person)).toContain(internal);
    });

    it('REST: the operator key cannot file an internal task; the OAuth operator can', async () => {
      const res = await rest(c.operatorKey, '/v1/tasks', { method: 'POST', body: { title: 'internal by key' }, key: randomUUID() });
      expect(res.status).toBe(422);
      expect(((await res.json()) as { errors: { pointer: string }[] }).errors.map((e) => e.pointer)).toContain('/clientId');
      const person = await token(c.operatorSub);
      const ok201 = await rest(person, '/v1/tasks', { method: 'POST', body: { title: 'internal by person' }, key: randomUUID() });
      expect(ok201.status).toBe(201);
    });

    it('REST: an unbound key of a scoped operator keeps its owner\'s reach and sees no internal task (widened read 404)', async () => {
      const key = await addKey(s.database, { ownerUserId: c.scopedOperatorUserId, mode: 'test' });
      const ids = await listIds(key.secret);
      expect(ids.length).toBeGreaterThan(0);
      expect(ids.every((id) => id.startsWith('tsk_demo_acme_') || !id.startsWith('tsk_demo_'))).toBe(true);
      expect((await rest(key.secret, '/v1/tasks/tsk_demo_internal_runbook')).status).toBe(404);
      expect((await rest(key.secret, '/v1/tasks/tsk_demo_globex_data')).status).toBe(404);
      expect((await rest(key.secret, `/v1/tasks?clientId=${c.otherClientId}`)).status).toBe(404);
      const meta = (await (await rest(key.secret, '/v1/meta')).json()) as { principal: { kind: string }; clientScope: unknown };
      expect(meta.principal.kind).toBe('operator'); // may call operator operations for its owner
      expect(meta.clientScope).toEqual({ all: false, clientIds: [c.clientId] });

      // The same person signed in is widened by rule 1 (internal tasks), still not to Globex's tasks.
      const person = await token(c.scopedOperatorSub);
      expect((await rest(person, '/v1/tasks/tsk_demo_internal_runbook')).status).toBe(200);
      expect((await rest(person, '/v1/tasks/tsk_demo_globex_data')).status).toBe(404);
    });

    it('MCP: the operator key gets not_found on an internal task; an OAuth operator reads it', async () => {
      const keySession = await mcp(c.operatorKey);
      expect(toolError(await keySession.call('svc.tasks.get', { task_id: c.internalTaskId })).code).toBe('not_found');
      const listed = ok(await keySession.call('svc.tasks.list', { pageSize: 200 })).result.items.map((t: { id: string }) => t.id);
      expect(listed).not.toContain(c.internalTaskId);
      expect(toolError(await keySession.call('svc.tasks.create', { title: 'internal by key', idempotencyKey: randomUUID() })).code).toBe('validation_failed');

      const person = await mcp(await token(c.operatorSub));
      expect(ok(await person.call('svc.tasks.get', { task_id: c.internalTaskId })).result.id).toBe(c.internalTaskId);
    });
  });

  describe('OAuth scopes come from the live grant', () => {
    const expectedAdminScopes = async (): Promise<string[]> => {
      // The seed grants every scope; the client admin's memberships allow their roles; the demo client's ceiling drops audit:read.
      const rows = await s.database.execute<{ role: string }>(
        `select distinct role from memberships where user_id = '${c.clientAdminUserId}' and status = 'active' and revoked_at is null`,
      );
      return rows.map((r) => r.role);
    };

    it('REST: a client admin whose token carries only openid email profile gets its role\'s scopes and reads its own client', async () => {
      const admin = await token(c.clientAdminSub);
      const metaRes = await rest(admin, '/v1/meta');
      expect(metaRes.status).toBe(200);
      const meta = (await metaRes.json()) as { principal: { kind: string; loginMethod: string }; effectiveScopes: string[]; clientScope: unknown };
      expect(meta.principal).toMatchObject({ kind: 'client_admin', loginMethod: 'oauth' });
      expect([...meta.effectiveScopes].sort()).toEqual((await expectedAdminScopes()).sort());
      expect(meta.effectiveScopes).toEqual(expect.arrayContaining(['clients:read', 'tasks:read', 'tasks:write']));
      expect(meta.clientScope).toEqual({ all: false, clientIds: [c.clientId] });

      const ids = await listIds(admin, `&clientId=${c.clientId}`);
      expect(ids).toContain(c.taskId);
      expect((await rest(admin, `/v1/tasks/${c.taskId}`)).status).toBe(200);
      expect((await rest(admin, `/v1/tasks/${c.internalTaskId}`)).status).toBe(404);
      expect((await rest(admin, '/v1/tasks/tsk_demo_globex_data')).status).toBe(404);
    });

    it('REST: a token naming service scopes is narrowed to them', async () => {
      const narrowed = await token(c.clientAdminSub, { scope: `${SIGN_IN} tasks:read` });
      const meta = (await (await rest(narrowed, '/v1/meta')).json()) as { effectiveScopes: string[] };
      expect(meta.effectiveScopes).toEqual(['tasks:read']);
      const res = await rest(narrowed, '/v1/tasks', { method: 'POST', body: { title: 'narrowed', clientId: c.clientId }, key: randomUUID() });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { code: string }).code).toBe('insufficient_scope');
    });

    it('MCP: the same client admin token lists and calls tasks tools on its own client', async () => {
      const admin = await mcp(await token(c.clientAdminSub));
      const names = (await admin.client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['svc.meta.get', 'svc.tasks.list', 'svc.tasks.get', 'svc.tasks.create']));
      const meta = ok(await admin.call('svc.meta.get')).result;
      expect([...meta.effectiveScopes].sort()).toEqual((await expectedAdminScopes()).sort());
      const listed = ok(await admin.call('svc.tasks.list', { clientId: c.clientId })).result.items.map((t: { id: string }) => t.id);
      expect(listed).toContain(c.taskId);
      expect(ok(await admin.call('svc.tasks.get', { task_id: c.taskId })).result.id).toBe(c.taskId);
      expect(toolError(await admin.call('svc.tasks.get', { task_id: 'tsk_demo_globex_data' })).code).toBe('not_found');
    });

    it('a token issued before its grant was revoked gets 401 invalid_token over REST and MCP', async () => {
      const nowS = Math.floor(Date.now() / 1000);
      const old = await token(c.staffOperatorSub, { iat: nowS - 120 });
      expect((await rest(old, '/v1/meta')).status).toBe(200);
      const session = await mcp(old);
      expect(ok(await session.call('svc.meta.get')).outcome).toBe('ran');

      await s.database.db
        .update(oauthGrants)
        .set({ revokedAt: new Date((nowS - 60) * 1000) })
        .where(and(eq(oauthGrants.userId, c.staffOperatorUserId), eq(oauthGrants.oauthClientId, c.oauthClientId)));

      const res = await rest(old, '/v1/meta');
      expect(res.status).toBe(401);
      expect(((await res.json()) as { code: string }).code).toBe('invalid_token');
      const mcpRes = await fetch(`${s.url}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${old}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(mcpRes.status).toBe(401);
      await expect(session.call('svc.meta.get')).rejects.toThrow();

      // A token issued after the revocation authenticates, with nothing granted.
      const fresh = await token(c.staffOperatorSub, { iat: nowS });
      const meta = (await (await rest(fresh, '/v1/meta')).json()) as { effectiveScopes: string[] };
      expect(meta.effectiveScopes).toEqual([]);
    });
  });
});
