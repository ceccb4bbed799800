// Who a credential acts as: the rules that turn a user, its live role and memberships, and a
// credential's grant into a Principal. Used when a request authenticates (authenticate.ts) and
// again when an approved proposal runs as its proposer (runtime/pipeline/approvals.ts), so both apply the
// same rules: effective scopes = granted ∩ what the live role allows (visibility rule 6).
import { and, eq, isNull } from 'drizzle-orm';
import type { Db } from '../data/client.ts';
import { memberships, users } from '../data/schema.ts';
import type { Principal } from '../handler-types.ts';
import { contractFeatures, contractLimits } from '../contract-facts.ts';

const DAY_MS = 86_400_000;
/** limits.apiKeyLifetimeDays: no key outlives it, whatever expiry it was given. */
export function apiKeyMaxLifetimeMs(): number {
  const limits = contractLimits();
  return limits.apiKeyLifetimeDays * DAY_MS;
}

/** A user as the rules need it: live role and active memberships. */
export interface OwnerView {
  id: string;
  kind: string;
  role: string;
  allClients: boolean;
  disabled: boolean;
  /** Active memberships: clientId and role. */
  memberships: { clientId: string; role: string }[];
}

export interface RoleRules {
  /** Canonical scopes, in order. */
  scopes: readonly string[];
  /** Operator role label -> scopes it allows. */
  roleScopes: Record<string, readonly string[]>;
}

export async function loadOwner(db: Db, userId: string): Promise<OwnerView | null> {
  const [user] = await db.select().from(users).where(eq(users.id, userId)).limit(1);
  if (!user) return null;
  const rows = await db
    .select({ clientId: memberships.clientId, role: memberships.role })
    .from(memberships)
    .where(and(eq(memberships.userId, userId), eq(memberships.status, 'active'), isNull(memberships.revokedAt)));
  return { id: user.id, kind: user.kind, role: user.role, allClients: user.allClients, disabled: user.disabledAt !== null, memberships: rows };
}

/**
 * Visibility rule 6, its one home: the scopes an owner's live role allows. Operator labels via the
 * contract's roles (roleScopes: staff labels every scope, viewer none); a client admin's membership
 * roles that are scope names, each allowing itself.
 */
export function allowedByRole(owner: OwnerView, rules: RoleRules): Set<string> {
  const canonical = new Set(rules.scopes);
  if (owner.kind === 'operator') return new Set((rules.roleScopes[owner.role] ?? []).filter((s) => canonical.has(s)));
  if (owner.kind === 'client_admin') return new Set(owner.memberships.map((m) => m.role).filter((r) => canonical.has(r)));
  return new Set();
}

/** Effective scopes in canonical order: granted ∩ allowed by the live role. */
export function effectiveScopes(granted: Iterable<string>, owner: OwnerView, rules: RoleRules): Set<string> {
  const allowed = allowedByRole(owner, rules);
  const grantedSet = new Set(granted);
  return new Set(rules.scopes.filter((s) => grantedSet.has(s) && allowed.has(s)));
}

/**
 * The clients the owner reaches: every client (operators with allClients) or its memberships' clients.
 * Without client tenancy (svc.yaml features) nothing belongs to a client, so every owner reaches all.
 */
export function ownerReach(owner: OwnerView): { all: boolean; clientIds: string[] } {
  if (!contractFeatures().clientTenancy) return { all: true, clientIds: [] };
  if (owner.kind === 'operator' && owner.allClients) return { all: true, clientIds: [] };
  return { all: false, clientIds: [...new Set(owner.memberships.map((m) => m.clientId))].sort() };
}

/** Principal.role: the operator's label; a client admin's sorted distinct membership roles joined with ",". */
export function roleLabel(owner: OwnerView): string {
  if (owner.kind !== 'client_admin') return owner.role;
  const roles = [...new Set(owner.memberships.map((m) => m.role))].sort();
  return roles.length ? roles.join(',') : owner.role;
}

/** When a key stops working: its expiresAt, and never later than limits.apiKeyLifetimeDays after creation or its last rotation. */
export function keyExpiresAt(key: { createdAt: Date; expiresAt: Date; rotatedAt?: Date | null }): number {
  const start = Math.max(key.createdAt.getTime(), key.rotatedAt?.getTime() ?? 0);
  return Math.min(key.expiresAt.getTime(), start + apiKeyMaxLifetimeMs());
}

/**
 * An API key's principal (the key already checked as live). Unbound: kind operator (it may call
 * operator-audience operations for its owner) with the owner's reach. Bound to clients: a service
 * account whose scope is those clients narrowed to the owner's live reach. Neither is ever widened
 * by visibility rules 1-3: loginMethod 'api_key' is what Policy.widened reads.
 */
export function keyPrincipal(owner: OwnerView, key: { id: string; scopes: readonly string[]; clientIds: readonly string[] }, rules: RoleRules): Principal {
  const reach = ownerReach(owner);
  // Without client tenancy a key's client binding means nothing: it is its owner's operator key.
  const bound = key.clientIds.length > 0 && contractFeatures().clientTenancy;
  return {
    kind: bound ? 'service_account' : 'operator',
    id: owner.id,
    loginMethod: 'api_key',
    credentialId: key.id,
    role: roleLabel(owner),
    scopes: effectiveScopes(key.scopes, owner, rules),
    clientScope: bound ? { all: false, clientIds: [...new Set(key.clientIds)].filter((c) => reach.all || reach.clientIds.includes(c)).sort() } : reach,
    oauthClientId: null,
  };
}

/** An OAuth caller's principal: granted is what the token, the grants and (allowlist mode) the client's ceiling allow. */
export function oauthPrincipal(
  owner: OwnerView,
  credential: { credentialId: string; oauthClientId: string; granted: Iterable<string> },
  rules: RoleRules,
): Principal {
  return {
    kind: owner.kind as Principal['kind'],
    id: owner.id,
    loginMethod: 'oauth',
    credentialId: credential.credentialId,
    role: roleLabel(owner),
    scopes: effectiveScopes(credential.granted, owner, rules),
    clientScope: ownerReach(owner),
    oauthClientId: credential.oauthClientId,
  };
}
