// Who sees and who decides a proposal, over REST and MCP (the SDK Client), on PGlite and on
// PostgreSQL when DATABASE_URL is set. The unbound operator key proposes one project for Acme and one
// for Globex. Visible to: the proposing credential, and people (OAuth) with reach over the client.
// A key bound to Acme owned by the same operator sees neither; an Acme-scoped operator gets 404 on
// the Globex one and cannot decide it; a client admin of Acme sees the Acme one only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startIdp, type TestIdp } from '../support/idp.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { operationsById } from '../../generated/registry.ts';
import { connectMcp, ok, toolError, type McpSession } from '../mcp/support.ts';

let s: TestServer;
let idp: TestIdp;
const sessions: McpSession[] = [];
let acme: string;
let globex: string;

function token(sub: string): Promise<string> {
  const scope = [...new Set(Object.values(operationsById).map((o) => o.scope).filter((x): x is string => !!x))].join(' ');
  return idp.issueToken({ sub, aud: `${s.config.baseUrl}/mcp`, scope, client_id: s.credentials.oauthClientId });
}

async function propose(clientId: string, name: string): Promise<string> {
  const res = await fetch(`${s.url}/v1/projects`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.credentials.operatorKey}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify({ clientId, name }),
  });
  expect(res.status).toBe(202);
  return (await res.json()).approval.id as string;
}

async function get(credential: string, id: string): Promise<number> {
  const res = await fetch(`${s.url}/v1/approvals/${id}`, { headers: { authorization: `Bearer ${credential}` } });
  await res.body?.cancel();
  return res.status;
}

async function listed(credential: string): Promise<string[]> {
  const res = await fetch(`${s.url}/v1/approvals?pageSize=100`, { headers: { authorization: `Bearer ${credential}` } });
  expect(res.status).toBe(200);
  return ((await res.json()).items as { id: string }[]).map((a) => a.id);
}

async function approve(credential: string, id: string): Promise<{ status: number; code?: string }> {
  const res = await fetch(`${s.url}/v1/approvals/${id}:approve`, { method: 'POST', headers: { authorization: `Bearer ${credential}` } });
  const body = await res.json();
  return { status: res.status, code: body.code };
}

beforeAll(async () => {
  idp = await startIdp();
  s = await startTestServer({ oauthIssuer: idp.issuer, oauthJwksUrl: idp.jwksUrl });
  acme = await propose(s.credentials.clientId, 'Acme proposal zv1');
  globex = await propose(s.credentials.otherClientId, 'Globex proposal zv2');
}, 60_000);
afterAll(async () => {
  await Promise.all(sessions.map((m) => m.close().catch(() => undefined)));
  await s?.close();
  await idp?.close();
});

describe('approval visibility over REST', () => {
  it('the proposing credential sees both of its proposals', async () => {
    expect(await get(s.credentials.operatorKey, acme)).toBe(200);
    expect(await get(s.credentials.operatorKey, globex)).toBe(200);
    expect(await listed(s.credentials.operatorKey)).toEqual(expect.arrayContaining([acme, globex]));
  });

  it("a key bound to Acme never sees its owner's proposals made with another credential", async () => {
    expect(await get(s.credentials.serviceKey, globex)).toBe(404);
    expect(await get(s.credentials.serviceKey, acme)).toBe(404);
    const ids = await listed(s.credentials.serviceKey);
    expect(ids).not.toContain(globex);
    expect(ids).not.toContain(acme);
  });

  it('an Acme-scoped operator gets 404 on the Globex proposal and cannot decide it', async () => {
    const scoped = await token(s.credentials.scopedOperatorSub as string);
    expect(await get(scoped, globex)).toBe(404);
    expect(await get(scoped, acme)).toBe(200);
    const ids = await listed(scoped);
    expect(ids).toContain(acme);
    expect(ids).not.toContain(globex);
    expect(await approve(scoped, globex)).toEqual({ status: 404, code: 'not_found' });
    const reject = await fetch(`${s.url}/v1/approvals/${globex}:reject`, { method: 'POST', headers: { authorization: `Bearer ${scoped}` } });
    expect(reject.status).toBe(404);
    expect(await get(s.credentials.operatorKey, globex)).toBe(200); // still pending, untouched
  });

  it("a client admin sees its own client's proposal only", async () => {
    const admin = await token(s.credentials.clientAdminSub as string);
    expect(await get(admin, acme)).toBe(200);
    expect(await get(admin, globex)).toBe(404);
    const ids = await listed(admin);
    expect(ids).toContain(acme);
    expect(ids).not.toContain(globex);
  });

  it('an operator over all clients sees both', async () => {
    const all = await token(s.credentials.adminSub as string);
    expect(await listed(all)).toEqual(expect.arrayContaining([acme, globex]));
  });
});

describe('the subject client comes from the database', () => {
  it("a proposal on an Acme project (input names no client) belongs to Acme: its client admin and the Acme-scoped operator see it", async () => {
    const res = await fetch(`${s.url}/v1/projects/${s.credentials.projectId}/stage:advance`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.credentials.operatorKey}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: '{}',
    });
    expect(res.status).toBe(202);
    const id = (await res.json()).approval.id as string;
    expect(await get(await token(s.credentials.clientAdminSub as string), id)).toBe(200);
    expect(await get(await token(s.credentials.scopedOperatorSub as string), id)).toBe(200);
    const [row] = await s.database.execute<{ client_id: string; subject_type: string; subject_id: string }>(
      `select client_id, subject_type, subject_id from approvals where id = '${id}'`,
    );
    expect(row).toEqual({ client_id: s.credentials.clientId, subject_type: 'project', subject_id: s.credentials.projectId });
  });

  it('a proposal naming a project that does not exist is 404 and files nothing', async () => {
    const before = await s.database.execute<{ n: string }>('select count(*)::text as n from approvals');
    const res = await fetch(`${s.url}/v1/projects/prj_missing_zv3/stage:advance`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.credentials.operatorKey}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: '{}',
    });
    expect(res.status).toBe(404);
    expect((await res.json()).code).toBe('not_found');
    expect(await s.database.execute<{ n: string }>('select count(*)::text as n from approvals')).toEqual(before);
  });
});

describe('approval visibility over MCP', () => {
  it('the bound key lists none; the scoped operator gets not_found on Globex; the client admin sees Acme', async () => {
    const bound = await connectMcp(s.url, s.credentials.serviceKey);
    const scoped = await connectMcp(s.url, await token(s.credentials.scopedOperatorSub as string));
    const admin = await connectMcp(s.url, await token(s.credentials.clientAdminSub as string));
    sessions.push(bound, scoped, admin);

    const boundIds = (ok(await bound.call('svc.approvals.list', { pageSize: 100 })).result.items as { id: string }[]).map((a) => a.id);
    expect(boundIds).not.toContain(acme);
    expect(boundIds).not.toContain(globex);
    expect(toolError(await bound.call('svc.approvals.get', { approval_id: globex })).code).toBe('not_found');

    expect(toolError(await scoped.call('svc.approvals.get', { approval_id: globex })).code).toBe('not_found');
    expect(ok(await scoped.call('svc.approvals.get', { approval_id: acme })).result.id).toBe(acme);

    const adminIds = (ok(await admin.call('svc.approvals.list', { pageSize: 100 })).result.items as { id: string }[]).map((a) => a.id);
    expect(adminIds).toContain(acme);
    expect(adminIds).not.toContain(globex);
  });
});
