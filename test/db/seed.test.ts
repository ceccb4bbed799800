// The demo workspace: idempotent, keys hashed with a 90-day expiry, and the printed keys
// authenticate as the principals the README promises (operator with every scope; service account
// bound to clientId).
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { service } from '../../generated/registry.ts';
import { createAuthenticator } from '../../runtime/auth/authenticate.ts';
import { hashSecret } from '../../runtime/auth/secrets.ts';
import { loadConfig } from '../../runtime/config.ts';
import type { Database } from '../../runtime/data/client.ts';
import { apiKeys, memberships, oauthClients, oauthGrants, users } from '../../runtime/data/schema.ts';
import { seed, type SeedCredentials } from '../../demo/seed.ts';
import { freshDatabase } from '../support/db.ts';

async function counts(database: Database): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of ['clients', 'users', 'memberships', 'oauth_clients', 'oauth_grants', 'projects', 'tasks', 'task_comments', 'api_keys', 'reviews', 'accounts', 'contacts', 'leads', 'opportunities', 'touchpoints', 'campaigns', 'campaign_recipients']) {
    const [row] = await database.execute<{ n: number }>(sql.raw(`select count(*)::int as n from ${t}`));
    out[t] = row.n;
  }
  return out;
}

describe('seed', () => {
  let database: Database;
  let first: SeedCredentials;
  let second: SeedCredentials;
  let afterFirst: Record<string, number>;
  const now = new Date('2026-11-22T10:00:00Z');

  beforeAll(async () => {
    database = await freshDatabase();
    first = await seed(database, { baseUrl: 'http://svc.test', now });
    afterFirst = await counts(database);
    second = await seed(database, { baseUrl: 'http://svc.test', now });
  }, 60_000);
  afterAll(async () => {
    await database?.close();
  });

  it('returns the documented credentials', () => {
    expect(first.operatorKey).toMatch(/^svc_sk_(test|live)_/);
    expect(first.serviceKey).toMatch(/^svc_sk_(test|live)_/);
    expect(first.clientId).not.toBe(first.otherClientId);
    for (const k of ['oauthClientId', 'operatorSub', 'clientAdminSub', 'scopedOperatorSub', 'viewerSub', 'adminSub'] as const) {
      expect(typeof first[k]).toBe('string');
    }
  });

  it('is idempotent: a second run adds only two fresh keys', async () => {
    const afterSecond = await counts(database);
    expect(afterSecond).toEqual({ ...afterFirst, api_keys: afterFirst.api_keys + 2 });
    expect(afterFirst.clients).toBeGreaterThanOrEqual(3);
    expect(afterFirst.tasks).toBeGreaterThanOrEqual(5);
    expect(second.clientId).toBe(first.clientId);
    expect(second.operatorKey).not.toBe(first.operatorKey);
  });

  it('stores only hashes, with a 90-day expiry; the service key is bound to clientId', async () => {
    const rows = await database.db.select().from(apiKeys);
    for (const row of rows) {
      expect(row.secretHash).toMatch(/^[0-9a-f]{64}$/);
      // 90 days from creation, or from the last rotation (the demo's rotated key).
      expect(row.expiresAt.getTime() - (row.rotatedAt ?? row.createdAt).getTime()).toBe(90 * 86_400_000);
    }
    const serialized = JSON.stringify(rows);
    expect(serialized).not.toContain(first.operatorKey);
    const [op] = rows.filter((r) => r.secretHash === hashSecret(first.operatorKey));
    const [svc] = rows.filter((r) => r.secretHash === hashSecret(first.serviceKey));
    expect(op.clientIds).toEqual([]);
    expect([...op.scopes].sort()).toEqual([...service.scopes].sort());
    expect(svc.clientIds).toEqual([first.clientId]);
  });

  it('has every role label, a scoped operator, a client admin of clientId, an allowlisted OAuth client with grants', async () => {
    const people = await database.db.select().from(users);
    const roles = people.filter((u) => u.kind === 'operator').map((u) => u.role);
    expect(roles).toEqual(expect.arrayContaining(['owner', 'admin', 'operator', 'viewer']));
    const scoped = people.find((u) => u.oauthSubject === first.scopedOperatorSub)!;
    expect(scoped.allClients).toBe(false);
    const scopedMembers = await database.db.select().from(memberships).where(eq(memberships.userId, scoped.id));
    expect(scopedMembers.map((m) => m.clientId)).toEqual([first.clientId]);
    const admin = people.find((u) => u.oauthSubject === first.clientAdminSub)!;
    expect(admin.kind).toBe('client_admin');
    const adminMembers = await database.db.select().from(memberships).where(eq(memberships.userId, admin.id));
    expect(new Set(adminMembers.map((m) => m.clientId))).toEqual(new Set([first.clientId]));
    const [client] = await database.db.select().from(oauthClients).where(eq(oauthClients.id, first.oauthClientId));
    expect(client.allowlisted).toBe(true);
    expect(client.scopeCeiling.length).toBeGreaterThan(0);
    const grants = await database.db.select().from(oauthGrants).where(eq(oauthGrants.oauthClientId, first.oauthClientId));
    const grantees = new Set(grants.map((g) => g.userId));
    const operator = people.find((u) => u.oauthSubject === first.operatorSub)!;
    expect(grantees.has(operator.id)).toBe(true);
    expect(grantees.has(admin.id)).toBe(true);
  });

  it('the printed keys authenticate: operator with every scope, service account bound to clientId', async () => {
    const auth = createAuthenticator({
      db: database.db,
      config: loadConfig({}),
      scopes: service.scopes,
      roleScopes: service.roleScopes,
      now: () => new Date(now.getTime() + 60_000),
    });
    try {
      for (const creds of [first, second]) {
        const op = await auth.authenticate(`Bearer ${creds.operatorKey}`, '127.0.0.1');
        expect(op.kind).toBe('operator');
        expect(op.clientScope.all).toBe(true);
        expect([...op.scopes].sort()).toEqual([...service.scopes].sort());
        const sa = await auth.authenticate(`Bearer ${creds.serviceKey}`, '127.0.0.1');
        expect(sa.kind).toBe('service_account');
        expect(sa.clientScope).toEqual({ all: false, clientIds: [first.clientId] });
      }
    } finally {
      await auth.close();
    }
  });
});
