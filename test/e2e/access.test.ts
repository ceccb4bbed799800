// Access management end to end (issue 9), over REST, on PGlite and on PostgreSQL when DATABASE_URL
// is set: API keys (the secret minted only on approval, shown once to the proposer, stored hashed,
// in no audit row, log line or other viewer's approval view), OAuth grants (a revoked grant's token
// is refused; a service account's list is empty), memberships (a client admin grants only labels it
// holds, never sees staff assignments, gets 404 on another client), and the visibility matrix of
// the nine operations. None of the nine is an MCP tool (the contract gives each a reason); that is
// checked against the MCP tool list.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startIdp, type TestIdp } from '../support/idp.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { operationsById } from '../../generated/registry.ts';
import { addKey } from '../auth/fixtures.ts';
import { toolOperation } from '../../generated/mcp-tools.ts';

let s: TestServer;
let idp: TestIdp;
const T: Record<string, string> = {};
/** Every secret minted in this file: none may appear in the database, the logs or the audit rows. */
const minted: string[] = [];
/** Another key of the owner (usr_demo_owner), for the rotation row of the matrix. */
let ownerSecondKeyId = '';

const ALL_SCOPES = [...new Set(Object.values(operationsById).map((o) => o.scope).filter((x): x is string => !!x))].join(' ');

function token(sub: string): Promise<string> {
  return idp.issueToken({ sub, aud: `${s.config.baseUrl}/mcp`, scope: ALL_SCOPES, client_id: s.credentials.oauthClientId });
}

interface Answer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

async function call(credential: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${s.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${credential}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(method === 'POST' && !('idempotency-key' in headers) ? { 'idempotency-key': randomUUID() } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

const dry = { prefer: 'dry-run' };

/** Proposes (202), approves as the admin operator, and returns the approval id. */
async function proposeAndApprove(credential: string, path: string, body: unknown): Promise<string> {
  const proposed = await call(credential, 'POST', path, body);
  expect(proposed.status, JSON.stringify(proposed.body)).toBe(202);
  const id = proposed.body.approval.id as string;
  const approved = await call(T.admin!, 'POST', `/v1/approvals/${id}:approve`);
  expect(approved.status, JSON.stringify(approved.body)).toBe(200);
  return id;
}

beforeAll(async () => {
  idp = await startIdp();
  s = await startTestServer({ oauthIssuer: idp.issuer, oauthJwksUrl: idp.jwksUrl });
  T.owner = await token(s.credentials.operatorSub as string);
  T.admin = await token(s.credentials.adminSub as string);
  T.scoped = await token(s.credentials.scopedOperatorSub as string);
  T.clientAdmin = await token(s.credentials.clientAdminSub as string);
  T.viewer = await token(s.credentials.viewerSub as string);
  T.unbound = s.credentials.operatorKey;
  T.bound = s.credentials.serviceKey;
  ownerSecondKeyId = (await addKey(s.database, { ownerUserId: s.credentials.operatorUserId as string, mode: 'test' })).id;
  // A Globex invitation, for the other-client column of the matrix.
  await s.database.execute(
    `insert into memberships (id, client_id, kind, email, role, status, invited_by_kind, invited_by_id, expires_at)
     values ('mem_test_globex_invited', '${s.credentials.otherClientId}', 'client_admin', 'gina@globex.example', 'tasks:read', 'invited', 'operator', 'usr_demo_owner', now() + interval '14 days')`,
  );
}, 60_000);

afterAll(async () => {
  await s?.close();
  await idp?.close();
});

describe('API keys', () => {
  let keyId = '';
  let secret = '';

  it('a dry run plans keys.create without minting a key', async () => {
    const before = await s.database.execute<{ n: number }>('select count(*)::int as n from api_keys');
    const planned = await call(T.unbound!, 'POST', '/v1/api-keys', { name: 'plan only', scopes: ['clients:read'] }, dry);
    expect(planned.status).toBe(200);
    expect(planned.body.plan.approvalRequired).toBe(true);
    expect(planned.body.plan.preview).not.toHaveProperty('secret');
    const after = await s.database.execute<{ n: number }>('select count(*)::int as n from api_keys');
    expect(after[0]!.n).toBe(before[0]!.n);
  });

  it('keys.create is a proposal; nothing is minted until a person approves it', async () => {
    const before = await s.database.execute<{ n: number }>('select count(*)::int as n from api_keys');
    const proposed = await call(T.unbound!, 'POST', '/v1/api-keys', { name: 'CI reporter', scopes: ['keys:manage', 'clients:read'], ipAllowlist: ['127.0.0.1/32', '::1'] });
    expect(proposed.status).toBe(202);
    expect(JSON.stringify(proposed.body)).not.toMatch(/svc_sk_/);
    const between = await s.database.execute<{ n: number }>('select count(*)::int as n from api_keys');
    expect(between[0]!.n).toBe(before[0]!.n);
    const id = proposed.body.approval.id as string;
    // The proposer cannot approve its own write; another person can.
    expect((await call(T.owner!, 'POST', `/v1/approvals/${id}:approve`)).status).toBe(403);
    const approved = await call(T.admin!, 'POST', `/v1/approvals/${id}:approve`);
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(JSON.stringify(approved.body)).not.toMatch(/svc_sk_(live|test)_[A-Za-z0-9_-]{20,}/);

    // The proposing credential reads the secret on the approval.
    const mine = await call(T.unbound!, 'GET', `/v1/approvals/${id}`);
    expect(mine.status).toBe(200);
    secret = mine.body.result.secret as string;
    keyId = mine.body.result.id as string;
    expect(secret).toMatch(/^svc_sk_live_[A-Za-z0-9_-]{43}$/);
    minted.push(secret);
    expect(mine.body.result.prefix).toBe(secret.slice(0, 'svc_sk_live_'.length + 4));
    expect(Date.parse(mine.body.result.expiresAt) - Date.parse(mine.body.result.createdAt)).toBe(90 * 86_400_000);

    // Once: the proposer's second read has no secret, and nobody else ever sees it.
    const second = await call(T.unbound!, 'GET', `/v1/approvals/${id}`);
    expect(second.status).toBe(200);
    expect(second.body.result).not.toHaveProperty('secret');
    expect(second.body.result.id).toBe(keyId);
    for (const other of [T.admin!, T.owner!, T.unbound!]) {
      const seen = await call(other, 'GET', `/v1/approvals/${id}`);
      expect(JSON.stringify(seen.body)).not.toContain(secret);
    }
    // The new key works, from an allowed address, with only the scopes it was given.
    expect((await call(secret, 'GET', '/v1/api-keys')).status).toBe(200);
    expect((await call(secret, 'GET', '/v1/projects')).status).toBe(403);
  });

  it('keys.list shows the caller its own keys: prefix, never the secret', async () => {
    const listed = await call(T.unbound!, 'GET', '/v1/api-keys?pageSize=100');
    expect(listed.status).toBe(200);
    const row = listed.body.items.find((k: { id: string }) => k.id === keyId);
    expect(row).toMatchObject({ name: 'CI reporter', scopes: ['clients:read', 'keys:manage'], clientIds: [], revokedAt: null });
    expect(row).not.toHaveProperty('secret');
    expect(JSON.stringify(listed.body)).not.toContain(secret);
    // The same owner through OAuth sees the same keys; another operator sees none of them.
    const viaOauth = await call(T.owner!, 'GET', '/v1/api-keys?pageSize=100');
    expect(viaOauth.body.items.map((k: { id: string }) => k.id)).toContain(keyId);
    const other = await call(T.admin!, 'GET', '/v1/api-keys?pageSize=100');
    expect(other.body.items.map((k: { id: string }) => k.id)).not.toContain(keyId);
  });

  it('a key is no wider than its owner: scopes, clients and the allowlist are checked', async () => {
    const unknownScope = await call(T.unbound!, 'POST', '/v1/api-keys', { name: 'x', scopes: ['nope:nope'] });
    expect(unknownScope.status).toBe(422);
    expect(unknownScope.body.errors[0].pointer).toBe('/scopes/0');
    const otherClient = await call(T.scoped!, 'POST', '/v1/api-keys', { name: 'x', scopes: ['tasks:read'], clientIds: [s.credentials.otherClientId] });
    expect(otherClient.status).toBe(422);
    expect(otherClient.body.code).toBe('validation_failed');
    expect(otherClient.body.errors[0].pointer).toBe('/clientIds/0');
    const badCidr = await call(T.unbound!, 'POST', '/v1/api-keys', { name: 'x', scopes: ['tasks:read'], ipAllowlist: ['10.0.0.0/33'] });
    expect(badCidr.status).toBe(422);
    expect(badCidr.body.errors[0].pointer).toBe('/ipAllowlist/0');
    const missingClient = await call(T.unbound!, 'POST', '/v1/api-keys', { name: 'x', scopes: ['tasks:read'], clientIds: ['cli_nope'] });
    expect(missingClient.status).toBe(422);
    // The viewer's role allows no scope at all: keys.* is out of reach.
    expect((await call(T.viewer!, 'POST', '/v1/api-keys', { name: 'x', scopes: ['tasks:read'] })).status).toBe(403);
  });

  it('rotation ends the old secret at once and shows the new one once', async () => {
    const planned = await call(T.unbound!, 'POST', `/v1/api-keys/${keyId}:rotate`, undefined, dry);
    expect(planned.status).toBe(200);
    expect((await call(secret, 'GET', '/v1/api-keys')).status).toBe(200); // a dry run changed nothing
    const id = await proposeAndApprove(T.unbound!, `/v1/api-keys/${keyId}:rotate`, undefined);
    const mine = await call(T.unbound!, 'GET', `/v1/approvals/${id}`);
    const fresh = mine.body.result.secret as string;
    minted.push(fresh);
    expect(fresh).not.toBe(secret);
    expect(mine.body.result.id).toBe(keyId);
    const old = await call(secret, 'GET', '/v1/api-keys');
    expect(old.status).toBe(401);
    expect(old.body.code).toBe('invalid_token');
    expect((await call(fresh, 'GET', '/v1/api-keys')).status).toBe(200);
    secret = fresh;
  });

  it('a key cannot rotate itself (422 on /key_id, nothing filed); the owner rotates it from another credential', async () => {
    const approvalsBefore = await s.database.execute<{ n: number }>(`select count(*)::int as n from approvals where operation_id = 'keys.rotate'`);
    for (const headers of [dry, {}]) {
      const self = await call(secret, 'POST', `/v1/api-keys/${keyId}:rotate`, undefined, headers);
      expect(self.status, JSON.stringify(self.body)).toBe(422);
      expect(self.body.code).toBe('validation_failed');
      expect(self.body.errors[0].pointer).toBe('/key_id');
    }
    const approvalsAfter = await s.database.execute<{ n: number }>(`select count(*)::int as n from approvals where operation_id = 'keys.rotate'`);
    expect(approvalsAfter[0]!.n).toBe(approvalsBefore[0]!.n);
    expect((await call(secret, 'GET', '/v1/api-keys')).status).toBe(200); // still the same secret
    // The owner's OAuth sign-in proposes it, and reads the new secret once.
    const id = await proposeAndApprove(T.owner!, `/v1/api-keys/${keyId}:rotate`, undefined);
    const mine = await call(T.owner!, 'GET', `/v1/approvals/${id}`);
    const fresh = mine.body.result.secret as string;
    expect(fresh).toMatch(/^svc_sk_live_/);
    minted.push(fresh);
    expect((await call(secret, 'GET', '/v1/api-keys')).status).toBe(401);
    expect((await call(fresh, 'GET', '/v1/api-keys')).status).toBe(200);
    secret = fresh;
  });

  it('a key may revoke itself; revoking again returns it unchanged; others get 404', async () => {
    expect((await call(T.admin!, 'POST', `/v1/api-keys/${keyId}:revoke`)).status).toBe(404);
    const revoked = await call(secret, 'POST', `/v1/api-keys/${keyId}:revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.result.revokedAt).not.toBeNull();
    const refused = await call(secret, 'GET', '/v1/api-keys');
    expect(refused.status).toBe(401);
    const again = await call(T.unbound!, 'POST', `/v1/api-keys/${keyId}:revoke`);
    expect(again.status).toBe(200);
    expect(again.body.result.revokedAt).toBe(revoked.body.result.revokedAt);
    const rotate = await call(T.unbound!, 'POST', `/v1/api-keys/${keyId}:rotate`);
    expect(rotate.status).toBe(409);
    expect(rotate.body.code).toBe('invalid_transition');
    const listed = await call(T.unbound!, 'GET', '/v1/api-keys?pageSize=100');
    expect(listed.body.items.map((k: { id: string }) => k.id)).not.toContain(keyId);
    const all = await call(T.unbound!, 'GET', '/v1/api-keys?pageSize=100&includeRevoked=true');
    expect(all.body.items.map((k: { id: string }) => k.id)).toContain(keyId);
  });

  it('an Idempotency-Key replays only for its own credential', async () => {
    const key = randomUUID();
    const body = { name: 'idem', scopes: ['clients:read'] };
    const first = await call(T.unbound!, 'POST', '/v1/api-keys', body, { 'idempotency-key': key });
    const replay = await call(T.unbound!, 'POST', '/v1/api-keys', body, { 'idempotency-key': key });
    const other = await call(T.owner!, 'POST', '/v1/api-keys', body, { 'idempotency-key': key });
    expect(first.status).toBe(202);
    expect(replay.body.approval.id).toBe(first.body.approval.id);
    expect(other.status).toBe(202);
    expect(other.body.approval.id).not.toBe(first.body.approval.id);
  });
});

describe('OAuth grants', () => {
  it("lists the caller's grants with the OAuth client's name", async () => {
    const listed = await call(T.clientAdmin!, 'GET', '/v1/oauth-grants');
    expect(listed.status).toBe(200);
    expect(listed.body.items).toHaveLength(1);
    expect(listed.body.items[0]).toMatchObject({ id: 'grt_demo_client_admin', oauthClientName: 'Demo agent (MCP)', revokedAt: null });
    // The token just used counts as a use of its grant (written off the request path).
    await new Promise((r) => setTimeout(r, 200));
    const again = await call(T.clientAdmin!, 'GET', '/v1/oauth-grants');
    expect(again.body.items[0].lastUsedAt).not.toBeNull();
  });

  it('a service account sees an empty page and can revoke nothing', async () => {
    const listed = await call(T.bound!, 'GET', '/v1/oauth-grants?includeRevoked=true');
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ items: [], nextCursor: null });
    expect((await call(T.bound!, 'POST', '/v1/oauth-grants/grt_demo_owner:revoke')).status).toBe(404);
  });

  it("revoking a grant refuses every token issued under it; someone else's grant is 404", async () => {
    expect((await call(T.clientAdmin!, 'POST', '/v1/oauth-grants/grt_demo_viewer:revoke')).status).toBe(404);
    const viewer = await token(s.credentials.viewerSub as string);
    expect((await call(viewer, 'GET', '/v1/meta')).status).toBe(200);
    const revoked = await call(viewer, 'POST', '/v1/oauth-grants/grt_demo_viewer:revoke');
    expect(revoked.status).toBe(200);
    expect(revoked.body.result.revokedAt).not.toBeNull();
    const refused = await call(viewer, 'GET', '/v1/meta');
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('invalid_token');
  });
});

describe('memberships', () => {
  const email = `Casey.${randomUUID().slice(0, 8)}@Acme.example`;
  let invitedId = '';

  it("a client admin invites a colleague with a label it holds; the invitation is written only on approval", async () => {
    const planned = await call(T.clientAdmin!, 'POST', `/v1/clients/${s.credentials.clientId}/memberships`, { email, role: 'tasks:read' }, dry);
    expect(planned.status).toBe(200);
    expect(planned.body.plan.events).toEqual(['membership.invited']);
    const count = async () => (await s.database.execute<{ n: number }>(`select count(*)::int as n from memberships where email = '${email.toLowerCase()}'`))[0]!.n;
    expect(await count()).toBe(0);
    const outbox = () => s.database.execute<{ status: string }>(`select status from outbound_messages where recipient = '${email.toLowerCase()}'`);
    expect(await outbox()).toEqual([]);
    const id = await proposeAndApprove(T.clientAdmin!, `/v1/clients/${s.credentials.clientId}/memberships`, { email, name: 'Casey', role: 'tasks:read' });
    const approval = await call(T.clientAdmin!, 'GET', `/v1/approvals/${id}`);
    expect(approval.body.result).toMatchObject({ email: email.toLowerCase(), role: 'tasks:read', status: 'invited', userId: null, invitedBy: { kind: 'client_admin', id: s.credentials.clientAdminUserId } });
    invitedId = approval.body.result.id;
    expect(await count()).toBe(1);
    // The invitation e-mail is queued by the approved write; this server has no SVC_SMTP_URL, so it
    // stays queued for the operator to see (test/e2e/invitation-mail.test.ts sends it over SMTP).
    await new Promise((r) => setTimeout(r, 200));
    expect(await outbox()).toEqual([{ status: 'queued' }]);
    const events = await s.database.execute<{ client_id: string }>(`select client_id from events where type = 'membership.invited' and subject_id = '${invitedId}'`);
    expect(events).toEqual([{ client_id: s.credentials.clientId }]);
  });

  it('the same (email, client, role) while invited is a conflict; another label is another membership', async () => {
    const dup = await call(T.clientAdmin!, 'POST', `/v1/clients/${s.credentials.clientId}/memberships`, { email: email.toUpperCase(), role: 'tasks:read' });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('conflict');
    const other = await call(T.clientAdmin!, 'POST', `/v1/clients/${s.credentials.clientId}/memberships`, { email, role: 'tasks:write' });
    expect(other.status).toBe(202);
  });

  it('a client admin never grants a label it does not hold', async () => {
    const res = await call(T.clientAdmin!, 'POST', `/v1/clients/${s.credentials.clientId}/memberships`, { email: 'x@acme.example', role: 'crm:write' });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors[0].pointer).toBe('/role');
    // An operator with reach may grant it.
    expect((await call(T.scoped!, 'POST', `/v1/clients/${s.credentials.clientId}/memberships`, { email: 'x@acme.example', role: 'crm:write' })).status).toBe(202);
  });

  it('a client admin does not see or revoke staff assignments, and gets 404 on another client', async () => {
    const mine = await call(T.clientAdmin!, 'GET', `/v1/clients/${s.credentials.clientId}/memberships?pageSize=100`);
    expect(mine.status).toBe(200);
    const ids = mine.body.items.map((m: { id: string }) => m.id);
    expect(ids).toContain(invitedId);
    expect(ids).toContain('mem_demo_revoked_acme');
    expect(ids).not.toContain('mem_demo_scoped_acme');
    const staffView = await call(T.admin!, 'GET', `/v1/clients/${s.credentials.clientId}/memberships?pageSize=100`);
    expect(staffView.body.items.map((m: { id: string }) => m.id)).toContain('mem_demo_scoped_acme');
    expect((await call(T.clientAdmin!, 'POST', `/v1/clients/${s.credentials.clientId}/memberships/mem_demo_scoped_acme:revoke`)).status).toBe(404);
    expect((await call(T.clientAdmin!, 'GET', `/v1/clients/${s.credentials.otherClientId}/memberships`)).status).toBe(404);
    const filtered = await call(T.admin!, 'GET', `/v1/clients/${s.credentials.clientId}/memberships?status=revoked`);
    expect(filtered.body.items.every((m: { status: string }) => m.status === 'revoked')).toBe(true);
  });

  it("revocation takes effect on the person's next call and emits membership.revoked with the client id", async () => {
    const before = await call(T.clientAdmin!, 'GET', '/v1/meta');
    expect(before.body.effectiveScopes ?? JSON.stringify(before.body)).toContain('events:read');
    await proposeAndApprove(T.unbound!, `/v1/clients/${s.credentials.clientId}/memberships/mem_demo_ca_events_read:revoke`, undefined);
    const after = await call(T.clientAdmin!, 'GET', '/v1/meta');
    expect(JSON.stringify(after.body)).not.toContain('events:read');
    const events = await s.database.execute<{ client_id: string }>(`select client_id from events where type = 'membership.revoked' and subject_id = 'mem_demo_ca_events_read'`);
    expect(events).toEqual([{ client_id: s.credentials.clientId }]);
    const again = await call(T.unbound!, 'POST', `/v1/clients/${s.credentials.clientId}/memberships/mem_demo_ca_events_read:revoke`);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('invalid_transition');
  });

  it('an invitation older than 14 days is swept to expired', async () => {
    await s.database.execute(`update memberships set expires_at = now() - interval '1 minute' where id = '${invitedId}'`);
    const listed = await call(T.admin!, 'GET', `/v1/clients/${s.credentials.clientId}/memberships?status=expired`);
    expect(listed.body.items.map((m: { id: string }) => m.id)).toContain(invitedId);
  });
});

// ------------------------------------------------------------------------------------------------
// The visibility matrix: each of the nine operations, each principal kind, own client (Acme) and
// the other client (Globex). Writes are planned (Prefer: dry-run) so the matrix changes nothing.

type Who = 'operatorAll' | 'operatorScoped' | 'clientAdmin' | 'boundKey' | 'unboundKey';
const WHO: Record<Who, () => string> = {
  operatorAll: () => T.admin!,
  operatorScoped: () => T.scoped!,
  clientAdmin: () => T.clientAdmin!,
  boundKey: () => T.bound!,
  unboundKey: () => T.unbound!,
};

interface Row {
  op: string;
  request: (client: 'own' | 'other') => { method: string; path: string; body?: unknown; dryRun?: boolean };
  expect: Record<Who, [number, number]>;
}

const clientOf = (c: 'own' | 'other') => (c === 'own' ? s.credentials.clientId : s.credentials.otherClientId);
const MATRIX: Row[] = [
  {
    op: 'keys.list',
    request: () => ({ method: 'GET', path: '/v1/api-keys' }),
    expect: { operatorAll: [200, 200], operatorScoped: [200, 200], clientAdmin: [404, 404], boundKey: [404, 404], unboundKey: [200, 200] },
  },
  {
    op: 'keys.create',
    request: (c) => ({ method: 'POST', path: '/v1/api-keys', body: { name: 'matrix', scopes: ['tasks:read'], clientIds: [clientOf(c)] }, dryRun: true }),
    expect: { operatorAll: [200, 200], operatorScoped: [200, 422], clientAdmin: [404, 404], boundKey: [404, 404], unboundKey: [200, 200] },
  },
  {
    op: 'keys.rotate',
    // Another key of the owner: unboundKey (the owner's) may rotate it; a key never rotates itself.
    request: () => ({ method: 'POST', path: `/v1/api-keys/${ownerSecondKeyId}:rotate`, dryRun: true }),
    expect: { operatorAll: [404, 404], operatorScoped: [404, 404], clientAdmin: [404, 404], boundKey: [404, 404], unboundKey: [200, 200] },
  },
  {
    op: 'keys.revoke',
    request: () => ({ method: 'POST', path: `/v1/api-keys/${s.credentials.operatorKeyId}:revoke`, dryRun: true }),
    expect: { operatorAll: [404, 404], operatorScoped: [404, 404], clientAdmin: [404, 404], boundKey: [404, 404], unboundKey: [200, 200] },
  },
  {
    op: 'oauth_grants.list',
    request: () => ({ method: 'GET', path: '/v1/oauth-grants' }),
    expect: { operatorAll: [200, 200], operatorScoped: [200, 200], clientAdmin: [200, 200], boundKey: [200, 200], unboundKey: [200, 200] },
  },
  {
    op: 'oauth_grants.revoke',
    request: () => ({ method: 'POST', path: '/v1/oauth-grants/grt_demo_owner:revoke', dryRun: true }),
    expect: { operatorAll: [404, 404], operatorScoped: [404, 404], clientAdmin: [404, 404], boundKey: [404, 404], unboundKey: [200, 200] },
  },
  {
    op: 'memberships.invite',
    request: (c) => ({ method: 'POST', path: `/v1/clients/${clientOf(c)}/memberships`, body: { email: 'matrix@example.com', role: 'tasks:read' }, dryRun: true }),
    expect: { operatorAll: [200, 200], operatorScoped: [200, 404], clientAdmin: [200, 404], boundKey: [404, 404], unboundKey: [200, 200] },
  },
  {
    op: 'memberships.revoke',
    request: (c) => ({
      method: 'POST',
      path: `/v1/clients/${clientOf(c)}/memberships/${c === 'own' ? 'mem_demo_invited_acme' : 'mem_test_globex_invited'}:revoke`,
      dryRun: true,
    }),
    expect: { operatorAll: [200, 200], operatorScoped: [200, 404], clientAdmin: [200, 404], boundKey: [404, 404], unboundKey: [200, 200] },
  },
  {
    op: 'clients.memberships.list',
    request: (c) => ({ method: 'GET', path: `/v1/clients/${clientOf(c)}/memberships` }),
    expect: { operatorAll: [200, 200], operatorScoped: [200, 404], clientAdmin: [200, 404], boundKey: [404, 404], unboundKey: [200, 200] },
  },
];

describe('visibility matrix of the nine operations', () => {
  it('covers exactly the nine operations, none of them an MCP tool', () => {
    expect(MATRIX.map((r) => r.op).sort()).toEqual(
      ['clients.memberships.list', 'keys.create', 'keys.list', 'keys.revoke', 'keys.rotate', 'memberships.invite', 'memberships.revoke', 'oauth_grants.list', 'oauth_grants.revoke'].sort(),
    );
    const tools = new Set(Object.values(toolOperation));
    for (const r of MATRIX) expect(tools.has(r.op), r.op).toBe(false);
  });

  const cases = MATRIX.flatMap((row) =>
    (Object.keys(row.expect) as Who[]).flatMap((who) =>
      (['own', 'other'] as const).map((client) => ({ row, who, client, status: row.expect[who][client === 'own' ? 0 : 1] })),
    ),
  );
  it.each(cases.map((c) => [c.row.op, c.who, c.client, c.status, c] as const))('%s as %s on the %s client -> %i', async (_op, _who, _c, status, c) => {
    const req = c.row.request(c.client);
    const res = await call(WHO[c.who](), req.method, req.path, req.body, req.dryRun ? dry : {});
    expect(res.status, JSON.stringify(res.body)).toBe(status);
  });
});

describe('no secret at rest or in the logs', () => {
  it('no minted secret appears in any table, audit row or log line', async () => {
    expect(minted.length).toBeGreaterThanOrEqual(2);
    await s.flushAudit();
    const tables = await s.database.execute<{ table_name: string }>(
      "select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'",
    );
    for (const { table_name } of tables) {
      const rows = await s.database.execute(`select * from "${table_name}"`);
      const dump = JSON.stringify(rows);
      for (const secret of minted) {
        expect(dump.includes(secret), `${table_name} holds a secret`).toBe(false);
        expect(dump.includes(secret.slice('svc_sk_live_'.length)), `${table_name} holds a secret's random part`).toBe(false);
      }
    }
    for (const secret of minted) expect(s.logs.join('\n')).not.toContain(secret.slice('svc_sk_live_'.length));
  });
});
