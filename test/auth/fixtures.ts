// Shared set-up for the auth tests: canonical scopes from the contract, users, memberships, keys.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { Database } from '../../runtime/data/client.ts';
import { apiKeys, clients, memberships, oauthClients, oauthGrants, users } from '../../runtime/data/schema.ts';
import { generateApiKeySecret, hashSecret, displayPrefix } from '../../runtime/auth/secrets.ts';
import { service } from '../../generated/registry.ts';

const contract = parse(readFileSync(new URL('../../contract/svc.yaml', import.meta.url), 'utf8')) as {
  scopes: { name: string }[];
};
export const SCOPES: string[] = contract.scopes.map((s) => s.name);
/** The contract's roles: staff labels every scope, viewer none. */
export const ROLE_SCOPES = service.roleScopes;

export const DAY = 24 * 3600 * 1000;

let seq = 0;
const nextId = (prefix: string) => `${prefix}_${++seq}`;

export async function addClient(database: Database, id: string): Promise<string> {
  await database.db.insert(clients).values({ id, name: id, status: 'active' });
  return id;
}

export async function addUser(
  database: Database,
  u: { kind: 'operator' | 'client_admin'; role: string; allClients?: boolean; disabled?: boolean; sub?: string },
): Promise<{ id: string; sub: string }> {
  const id = nextId('usr');
  const sub = u.sub ?? `sub-${id}`;
  await database.db.insert(users).values({
    id,
    kind: u.kind,
    name: id,
    email: `${id}@example.test`,
    role: u.role,
    allClients: u.allClients ?? false,
    oauthSubject: sub,
    disabledAt: u.disabled ? new Date('2026-01-01T00:00:00Z') : null,
  });
  return { id, sub };
}

export async function addMembership(
  database: Database,
  m: { userId: string; clientId: string; role: string; status?: (typeof memberships.$inferInsert)['status']; revoked?: boolean },
): Promise<string> {
  const id = nextId('mem');
  await database.db.insert(memberships).values({
    id,
    userId: m.userId,
    clientId: m.clientId,
    role: m.role,
    status: m.status ?? 'active',
    revokedAt: m.revoked ? new Date('2026-01-01T00:00:00Z') : null,
  });
  return id;
}

export async function addKey(
  database: Database,
  k: {
    ownerUserId: string;
    scopes?: string[];
    clientIds?: string[];
    ipAllowlist?: string[];
    createdAt?: Date;
    expiresAt?: Date;
    revokedAt?: Date | null;
    mode?: 'live' | 'test';
    /** A chosen secret (default: a fresh one). */
    secret?: string;
  },
): Promise<{ id: string; secret: string }> {
  const id = nextId('key');
  const secret = k.secret ?? generateApiKeySecret(k.mode ?? 'live');
  const createdAt = k.createdAt ?? new Date();
  await database.db.insert(apiKeys).values({
    id,
    ownerUserId: k.ownerUserId,
    name: id,
    mode: k.mode ?? 'live',
    prefix: displayPrefix(secret),
    secretHash: hashSecret(secret),
    scopes: k.scopes ?? SCOPES,
    clientIds: k.clientIds ?? [],
    ipAllowlist: k.ipAllowlist ?? [],
    createdAt,
    expiresAt: k.expiresAt ?? new Date(createdAt.getTime() + 90 * DAY),
    revokedAt: k.revokedAt ?? null,
  });
  return { id, secret };
}

export async function addGrant(
  database: Database,
  g: { userId: string; oauthClientId: string; scopes: string[]; revoked?: boolean },
): Promise<string> {
  const id = nextId('grt');
  await database.db.insert(oauthGrants).values({
    id,
    userId: g.userId,
    oauthClientId: g.oauthClientId,
    scopes: g.scopes,
    revokedAt: g.revoked ? new Date('2026-01-01T00:00:00Z') : null,
  });
  return id;
}

export async function addOauthClient(
  database: Database,
  c: { id: string; allowlisted: boolean; scopeCeiling: string[] },
): Promise<void> {
  await database.db.insert(oauthClients).values({ id: c.id, name: c.id, allowlisted: c.allowlisted, scopeCeiling: c.scopeCeiling });
}

/** The thrown value of a promise (fails the test if it resolves). */
export async function rejection(p: Promise<unknown>): Promise<{ code: string; headers: Record<string, string>; detail: string }> {
  try {
    await p;
  } catch (err) {
    return err as { code: string; headers: Record<string, string>; detail: string };
  }
  throw new Error('expected a rejection');
}
