// API keys against a real migrated database (freshDatabase: PGlite, or PostgreSQL with DATABASE_URL).
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { eq } from 'drizzle-orm';
import type { Database } from '../../runtime/data/client.ts';
import { apiKeys } from '../../runtime/data/schema.ts';
import { loadConfig } from '../../runtime/config.ts';
import {
  bearerCredential,
  createAuthenticator,
  credentialInUrl,
  ipAllowlist,
  notifyKeyRevoked,
  type Authenticator,
} from '../../runtime/auth/authenticate.ts';
import { generateApiKeySecret } from '../../runtime/auth/secrets.ts';
import { freshDatabase } from '../support/db.ts';
import { addClient, addKey, addMembership, addUser, DAY, rejection, ROLE_SCOPES, SCOPES } from './fixtures.ts';

let database: Database;
let clock: Date;
const open: Authenticator[] = [];

function makeAuth(): Authenticator {
  const auth = createAuthenticator({
    db: database.db,
    database,
    config: loadConfig({}, { baseUrl: 'https://api.example.test' }),
    scopes: SCOPES,
    roleScopes: ROLE_SCOPES,
    now: () => clock,
  });
  open.push(auth);
  return auth;
}

let owner: { id: string };
let admin: { id: string };
let operator: { id: string };
let viewer: { id: string };
let disabled: { id: string };
let clientAdmin: { id: string };

beforeAll(async () => {
  database = await freshDatabase();
  for (const c of ['c1', 'c2', 'c3']) await addClient(database, c);
  owner = await addUser(database, { kind: 'operator', role: 'owner', allClients: true });
  admin = await addUser(database, { kind: 'operator', role: 'admin' });
  operator = await addUser(database, { kind: 'operator', role: 'operator', allClients: true });
  viewer = await addUser(database, { kind: 'operator', role: 'viewer', allClients: true });
  disabled = await addUser(database, { kind: 'operator', role: 'owner', allClients: true, disabled: true });
  clientAdmin = await addUser(database, { kind: 'client_admin', role: 'tasks:read' });
  await addMembership(database, { userId: admin.id, clientId: 'c1', role: 'operator' });
  await addMembership(database, { userId: admin.id, clientId: 'c2', role: 'operator', status: 'revoked' });
  await addMembership(database, { userId: admin.id, clientId: 'c3', role: 'operator', revoked: true });
  await addMembership(database, { userId: clientAdmin.id, clientId: 'c1', role: 'tasks:read' });
}, 60_000);

afterEach(async () => {
  clock = new Date();
  for (const a of open.splice(0)) await a.close();
});

afterAll(async () => {
  await database?.close();
});

clock = new Date();

describe('Authorization header', () => {
  it('missing or garbled -> unauthorized', async () => {
    const auth = makeAuth();
    for (const header of [undefined, '', '   ', 'Basic dXNlcjpwYXNz', 'Bearer', 'Bearer ', 'Bearer a b', 'Token abc', 'Bearer ä€']) {
      expect((await rejection(auth.authenticate(header, null))).code, String(header)).toBe('unauthorized');
    }
  });

  it('a well-formed bearer that is neither a key nor a JWT -> invalid_token', async () => {
    const auth = makeAuth();
    expect((await rejection(auth.authenticate('Bearer abcdef', null))).code).toBe('invalid_token');
  });

  it('the scheme is case-insensitive', async () => {
    const { secret } = await addKey(database, { ownerUserId: owner.id });
    expect(bearerCredential(`bearer ${secret}`)).toBe(secret);
    expect((await makeAuth().authenticate(`BEARER ${secret}`, null)).kind).toBe('operator');
  });

  it('credentialInUrl spots credentials in a query string', () => {
    expect(credentialInUrl('/v1/tasks?access_token=abc')).toBe(true);
    expect(credentialInUrl('/v1/tasks?api_key=abc')).toBe(true);
    expect(credentialInUrl('/v1/tasks?q=svc_sk_live_abcdef')).toBe(true);
    expect(credentialInUrl('/v1/tasks?x=eyJhbGciOi.eyJzdWIi.sig')).toBe(true);
    expect(credentialInUrl('/v1/tasks?cursor=abc&pageSize=5')).toBe(false);
  });
});

describe('API keys', () => {
  it('happy path: an unbound key acts for its operator', async () => {
    const { id, secret } = await addKey(database, { ownerUserId: owner.id });
    const auth = makeAuth();
    const p = await auth.authenticate(`Bearer ${secret}`, '203.0.113.9');
    expect(p).toMatchObject({
      kind: 'operator',
      id: owner.id,
      loginMethod: 'api_key',
      credentialId: id,
      role: 'owner',
      clientScope: { all: true, clientIds: [] },
      oauthClientId: null,
    });
    expect([...p.scopes]).toEqual(SCOPES);
    expect(p.scopes.has('pii:read')).toBe(true);
    expect(JSON.stringify(p)).not.toContain(secret);
    // test-mode keys work the same way
    const test = await addKey(database, { ownerUserId: owner.id, mode: 'test' });
    expect((await auth.authenticate(`Bearer ${test.secret}`, null)).credentialId).toBe(test.id);
  });

  it('an unbound key of a scoped operator has the clients of its active memberships', async () => {
    const { secret } = await addKey(database, { ownerUserId: admin.id });
    const p = await makeAuth().authenticate(`Bearer ${secret}`, null);
    expect(p.kind).toBe('operator');
    expect(p.clientScope).toEqual({ all: false, clientIds: ['c1'] });
  });

  it('unknown key -> invalid_token', async () => {
    const auth = makeAuth();
    const err = await rejection(auth.authenticate('Bearer svc_sk_live_' + 'A'.repeat(43), null));
    expect(err.code).toBe('invalid_token');
  });

  it('an unknown key is remembered as a miss (no database round trip) until any key NOTIFY forgets the misses', async () => {
    const auth = makeAuth();
    await auth.ready();
    const secret = generateApiKeySecret('live');
    expect((await rejection(auth.authenticate(`Bearer ${secret}`, null))).code).toBe('invalid_token');
    // The key appears in the database: the remembered miss still answers, without a lookup...
    const { id } = await addKey(database, { ownerUserId: owner.id, secret });
    expect((await rejection(auth.authenticate(`Bearer ${secret}`, null))).code).toBe('invalid_token');
    // ...until a key event on any instance (created, rotated, revoked) forgets every miss.
    await notifyKeyRevoked(database, id);
    await vi.waitFor(async () => {
      expect((await auth.authenticate(`Bearer ${secret}`, null)).credentialId).toBe(id);
    });
  });

  it('expired key (expiresAt, or older than 90 days) -> invalid_token', async () => {
    const auth = makeAuth();
    const past = await addKey(database, { ownerUserId: owner.id, createdAt: new Date(Date.now() - 91 * DAY) });
    expect((await rejection(auth.authenticate(`Bearer ${past.secret}`, null))).code).toBe('invalid_token');
    const stretched = await addKey(database, {
      ownerUserId: owner.id,
      createdAt: new Date(Date.now() - 91 * DAY),
      expiresAt: new Date(Date.now() + 365 * DAY),
    });
    expect((await rejection(auth.authenticate(`Bearer ${stretched.secret}`, null))).code).toBe('invalid_token');
    // a key valid now expires as the clock passes expiresAt (the cached entry is checked again)
    const fresh = await addKey(database, { ownerUserId: owner.id });
    await auth.authenticate(`Bearer ${fresh.secret}`, null);
    clock = new Date(Date.now() + 90 * DAY + 1000);
    expect((await rejection(auth.authenticate(`Bearer ${fresh.secret}`, null))).detail).toMatch(/expired/);
  });

  it('revoked key -> invalid_token', async () => {
    const { secret } = await addKey(database, { ownerUserId: owner.id, revokedAt: new Date() });
    expect((await rejection(makeAuth().authenticate(`Bearer ${secret}`, null))).code).toBe('invalid_token');
  });

  it('revocation: the brief cache is cleared on every instance by NOTIFY svc_key_revoked', async () => {
    const { id, secret } = await addKey(database, { ownerUserId: owner.id });
    const a = makeAuth();
    const b = makeAuth();
    await Promise.all([a.ready(), b.ready()]);
    await a.authenticate(`Bearer ${secret}`, null);
    await b.authenticate(`Bearer ${secret}`, null);
    await database.db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, id));
    // Without the notification the cached lookup still answers (this is what the notify is for).
    await a.authenticate(`Bearer ${secret}`, null);
    await notifyKeyRevoked(database, id);
    for (const auth of [a, b]) {
      await vi.waitFor(async () => {
        expect((await rejection(auth.authenticate(`Bearer ${secret}`, null))).code).toBe('invalid_token');
      });
    }
  });

  it('a revoked key is refused on cache miss without any notification', async () => {
    const { id, secret } = await addKey(database, { ownerUserId: owner.id });
    const auth = makeAuth();
    await auth.authenticate(`Bearer ${secret}`, null);
    await database.db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, id));
    auth.forget(); // what the 5 s cache age does
    expect((await rejection(auth.authenticate(`Bearer ${secret}`, null))).code).toBe('invalid_token');
  });

  it('IP allowlist: IPv4 and IPv6, allow and deny', async () => {
    const { secret } = await addKey(database, {
      ownerUserId: owner.id,
      ipAllowlist: ['10.0.0.0/8', '192.168.1.5', '2001:db8::/32', '::1'],
    });
    const auth = makeAuth();
    for (const ip of ['10.1.2.3', '::ffff:10.9.9.9', '192.168.1.5', '2001:db8::1', '2001:db8:ffff::42', '::1']) {
      expect((await auth.authenticate(`Bearer ${secret}`, ip)).kind, ip).toBe('operator');
    }
    for (const ip of ['11.0.0.1', '192.168.1.6', '2001:db9::1', 'fe80::1', null, 'not-an-ip']) {
      const err = await rejection(auth.authenticate(`Bearer ${secret}`, ip));
      expect(err.code, String(ip)).toBe('invalid_token');
    }
  });

  it('ipAllowlist ignores entries that do not parse', () => {
    const allows = ipAllowlist(['garbage', '10.0.0.0/33', '10.0.0.0/', '1.2.3.4/32', '::ffff:172.16.0.0/108']);
    expect(allows('1.2.3.4')).toBe(true);
    expect(allows('10.0.0.1')).toBe(false);
    expect(allows('172.16.1.1')).toBe(true);
    expect(allows('172.32.0.1')).toBe(false);
    expect(ipAllowlist(['garbage'])('1.2.3.4')).toBe(false);
  });

  it('service account: a key bound to clients keeps exactly those, never widened', async () => {
    const bound = await addKey(database, { ownerUserId: owner.id, clientIds: ['c2', 'c1'] });
    const auth = makeAuth();
    const p = await auth.authenticate(`Bearer ${bound.secret}`, null);
    expect(p.kind).toBe('service_account');
    expect(p.clientScope).toEqual({ all: false, clientIds: ['c1', 'c2'] });
    expect(p.loginMethod).toBe('api_key');
    expect(p.credentialId).toBe(bound.id);
    // bound beyond its owner's reach: narrowed to what the owner can see
    const narrowed = await addKey(database, { ownerUserId: admin.id, clientIds: ['c1', 'c3'] });
    expect((await auth.authenticate(`Bearer ${narrowed.secret}`, null)).clientScope).toEqual({ all: false, clientIds: ['c1'] });
  });

  it('owner must be an active operator', async () => {
    const auth = makeAuth();
    const off = await addKey(database, { ownerUserId: disabled.id });
    expect((await rejection(auth.authenticate(`Bearer ${off.secret}`, null))).code).toBe('invalid_token');
    // A key without an owner cannot exist: the foreign key refuses it.
    await expect(addKey(database, { ownerUserId: 'usr_missing' })).rejects.toThrow(/api_keys_owner_user_id_users_id_fk|Failed query/);
    const admins = await addKey(database, { ownerUserId: clientAdmin.id });
    expect((await rejection(auth.authenticate(`Bearer ${admins.secret}`, null))).code).toBe('invalid_token');
  });

  it('effective scopes = key scopes ∩ the live role: owner/admin/operator all, viewer none', async () => {
    const auth = makeAuth();
    for (const [user, expected] of [
      [owner, SCOPES],
      [admin, SCOPES],
      [operator, SCOPES],
      [viewer, []],
    ] as const) {
      const { secret } = await addKey(database, { ownerUserId: user.id });
      const p = await auth.authenticate(`Bearer ${secret}`, null);
      expect([...p.scopes]).toEqual(expected);
    }
    const limited = await addKey(database, { ownerUserId: operator.id, scopes: ['tasks:read', 'bogus:scope', 'pii:read'] });
    expect([...(await auth.authenticate(`Bearer ${limited.secret}`, null)).scopes]).toEqual(['tasks:read', 'pii:read']);
    const viewers = await addKey(database, { ownerUserId: viewer.id, scopes: ['pii:read'] });
    expect((await auth.authenticate(`Bearer ${viewers.secret}`, null)).scopes.has('pii:read')).toBe(false);
  });

  it('lastUsedAt is written at most once a minute per key, off the request path', async () => {
    const { id, secret } = await addKey(database, { ownerUserId: owner.id });
    const auth = makeAuth();
    const lastUsed = async () => (await database.db.select().from(apiKeys).where(eq(apiKeys.id, id)))[0].lastUsedAt;
    const t0 = new Date('2026-11-22T10:00:00Z');
    clock = t0;
    await auth.authenticate(`Bearer ${secret}`, null);
    await auth.flush();
    expect(await lastUsed()).toEqual(t0);
    clock = new Date(t0.getTime() + 59_000);
    await auth.authenticate(`Bearer ${secret}`, null);
    await auth.flush();
    expect(await lastUsed()).toEqual(t0);
    clock = new Date(t0.getTime() + 60_000);
    await auth.authenticate(`Bearer ${secret}`, null);
    await auth.flush();
    expect(await lastUsed()).toEqual(clock);
  });
});
