// keys.*: the calling operator's API keys (Authentication 7). Only a SHA-256 hash of a secret is
// stored; the secret is minted only when keys.create or keys.rotate really runs (an approved
// proposal), never in a dry run or the proposal's pre-flight (ctx.dryRun), and the pipeline
// (runtime/auth/secret-fields.ts) hands it to the causing credential once and seals or strips it
// everywhere else. Rotation and revocation NOTIFY every instance inside the transaction: PostgreSQL
// delivers the notification at commit (never for a rollback), and each instance's key cache drops
// the key at once.
import { isIP } from 'node:net';
import { and, eq, getTableColumns, inArray, isNull, type SQL } from 'drizzle-orm';
import { apiKeys, clients } from '../runtime/data/schema.ts';
import type { HandlerContext, Page } from '../runtime/handler-types.ts';
import { newId } from '../runtime/data/ids.ts';
import { pageKeyColumn, startPage } from '../runtime/data/paging.ts';
import { notFound, type FieldError } from '../runtime/problem-error.ts';
import { announceKeyChange } from '../runtime/auth/authenticate.ts';
import { allowedByRole, apiKeyMaxLifetimeMs, keyExpiresAt, loadOwner, ownerReach } from '../runtime/auth/principal.ts';
import { displayPrefix, generateApiKeySecret, hashSecret, KEY_PREFIXES, type KeyMode } from '../runtime/auth/secrets.ts';
import { service } from '../generated/registry.ts';
import { iso } from './mappers/time.ts';
import { invalidTransition, validationFailed } from './shared.ts';
import type { KeysHandlers } from '../generated/handlers/keys.ts';
import type { components } from '../generated/types.ts';

type Schemas = components['schemas'];
type ApiKey = Schemas['ApiKey'];
type ApiKeyWithSecret = Schemas['ApiKeyWithSecret'];
type KeyRow = typeof apiKeys.$inferSelect;

export function toApiKey(row: KeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    mode: row.mode as KeyMode,
    scopes: row.scopes,
    clientIds: row.clientIds,
    ipAllowlist: row.ipAllowlist,
    createdAt: iso(row.createdAt),
    expiresAt: new Date(keyExpiresAt(row)).toISOString(),
    lastUsedAt: iso(row.lastUsedAt),
    revokedAt: iso(row.revokedAt),
  };
}

export { announceKeyChange };

/** A CIDR range or a single address (IPv4 or IPv6), as the authenticator reads it. */
export function validCidr(entry: string): boolean {
  const parts = entry.split('/');
  if (parts.length > 2) return false;
  const family = isIP(parts[0] ?? '');
  if (family === 0) return false;
  if (parts.length === 1) return true;
  const prefix = parts[1]!;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

/** The caller's own key (404 for anyone else's: keys are private to their owner). */
async function ownKey(ctx: HandlerContext, id: string): Promise<KeyRow> {
  const [row] = await ctx.db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.id, id), eq(apiKeys.ownerUserId, ctx.principal.id)))
    .limit(1);
  if (!row) throw notFound('API key');
  return row;
}

/** A secret, or in a dry run (plan, proposal pre-flight) a stand-in that is never stored as usable. */
function mint(ctx: HandlerContext, mode: KeyMode): { secret: string; prefix: string; hash: string } {
  if (ctx.dryRun) {
    // Never a usable key: the hash column holds a marker no SHA-256 hex digest can equal.
    return { secret: `${KEY_PREFIXES[mode]}dry-run`, prefix: `${KEY_PREFIXES[mode]}····`, hash: `dry-run:${newId('apiKey')}` };
  }
  const secret = generateApiKeySecret(mode);
  return { secret, prefix: displayPrefix(secret), hash: hashSecret(secret) };
}

async function list(input: Schemas['KeysListInput'], ctx: HandlerContext): Promise<Page<ApiKey>> {
  const { mode, includeRevoked = false } = input;
  const page = await startPage(ctx.db, input, 'keys.list', { mode, includeRevoked });
  const filters: (SQL | undefined)[] = [
    eq(apiKeys.ownerUserId, ctx.principal.id),
    mode !== undefined ? eq(apiKeys.mode, mode) : undefined,
    includeRevoked ? undefined : isNull(apiKeys.revokedAt),
    page.after(apiKeys.createdAt, apiKeys.id),
  ];
  const rows = await ctx.db
    .select({ ...getTableColumns(apiKeys), pageKey: pageKeyColumn(apiKeys.createdAt) })
    .from(apiKeys)
    .where(and(...filters))
    .orderBy(...page.orderBy(apiKeys.createdAt, apiKeys.id))
    .limit(page.fetch);
  return page.finish(rows, toApiKey);
}

async function create(input: Schemas['KeysCreateInput'], ctx: HandlerContext): Promise<ApiKeyWithSecret> {
  const owner = await loadOwner(ctx.db, ctx.principal.id);
  if (!owner || owner.disabled) throw notFound('User');
  const errors: FieldError[] = [];
  // Scopes: canonical names the owner's LIVE role allows (a key never outgrows its owner).
  const canonical = new Set(service.scopes);
  const allowed = allowedByRole(owner, { scopes: service.scopes, roleScopes: service.roleScopes });
  input.scopes.forEach((scope, i) => {
    if (!canonical.has(scope)) errors.push({ pointer: `/scopes/${i}`, message: `${scope} is not a scope of this service` });
    else if (!allowed.has(scope)) errors.push({ pointer: `/scopes/${i}`, message: `your role does not allow ${scope}` });
  });
  // Clients: within the owner's reach (a client the owner cannot see is refused the same way as one that does not exist).
  const reach = ownerReach(owner);
  (input.clientIds ?? []).forEach((clientId, i) => {
    if (!reach.all && !reach.clientIds.includes(clientId)) errors.push({ pointer: `/clientIds/${i}`, message: 'is not a client you reach' });
  });
  if (reach.all && (input.clientIds ?? []).length > 0) {
    const found = await ctx.db.select({ id: clients.id }).from(clients).where(inArray(clients.id, input.clientIds ?? []));
    const known = new Set(found.map((r) => r.id));
    (input.clientIds ?? []).forEach((clientId, i) => {
      if (!known.has(clientId)) errors.push({ pointer: `/clientIds/${i}`, message: 'is not a client you reach' });
    });
  }
  (input.ipAllowlist ?? []).forEach((entry, i) => {
    if (!validCidr(entry)) errors.push({ pointer: `/ipAllowlist/${i}`, message: 'must be an IPv4 or IPv6 address or CIDR range' });
  });
  if (errors.length > 0) throw validationFailed(errors);

  const mode = input.mode ?? 'live';
  const minted = mint(ctx, mode);
  const [row] = await ctx.db
    .insert(apiKeys)
    .values({
      id: newId('apiKey'),
      ownerUserId: owner.id,
      name: input.name,
      mode,
      prefix: minted.prefix,
      secretHash: minted.hash,
      scopes: service.scopes.filter((s) => input.scopes.includes(s)),
      clientIds: [...new Set(input.clientIds ?? [])].sort(),
      ipAllowlist: input.ipAllowlist ?? [],
      createdAt: ctx.now,
      expiresAt: new Date(ctx.now.getTime() + apiKeyMaxLifetimeMs()),
    })
    .returning();
  // A new key: every instance forgets its cached misses (a stale miss never refuses it).
  await announceKeyChange(ctx.db, row!.id);
  return { ...toApiKey(row!), secret: minted.secret };
}

async function rotate(input: Schemas['KeysRotateInput'], ctx: HandlerContext): Promise<ApiKeyWithSecret> {
  const current = await ownKey(ctx, input.key_id);
  // Decision (contract): a key never rotates itself. The new secret is shown only to the proposing
  // credential, and the rotation ends that very credential, so its new secret could never be read.
  if (ctx.principal.loginMethod === 'api_key' && ctx.principal.credentialId === current.id) {
    throw validationFailed([
      { pointer: '/key_id', message: 'is the key you are calling with: a key cannot rotate itself; propose the rotation with your OAuth sign-in or another of your keys' },
    ]);
  }
  if (current.revokedAt !== null) throw invalidTransition('A revoked key cannot be rotated.');
  const minted = mint(ctx, current.mode as KeyMode);
  const [row] = await ctx.db
    .update(apiKeys)
    .set({
      prefix: minted.prefix,
      secretHash: minted.hash,
      rotatedAt: ctx.now,
      expiresAt: new Date(ctx.now.getTime() + apiKeyMaxLifetimeMs()),
    })
    .where(and(eq(apiKeys.id, current.id), isNull(apiKeys.revokedAt)))
    .returning();
  if (!row) throw invalidTransition('The key was revoked while rotating it.');
  // The old secret ends at commit on every instance: no overlap.
  await announceKeyChange(ctx.db, row.id);
  return { ...toApiKey(row), secret: minted.secret };
}

async function revoke(input: Schemas['KeysRevokeInput'], ctx: HandlerContext): Promise<ApiKey> {
  const current = await ownKey(ctx, input.key_id);
  if (current.revokedAt !== null) return toApiKey(current);
  const [row] = await ctx.db
    .update(apiKeys)
    .set({ revokedAt: ctx.now })
    .where(and(eq(apiKeys.id, current.id), isNull(apiKeys.revokedAt)))
    .returning();
  if (!row) return toApiKey((await ownKey(ctx, input.key_id)));
  await announceKeyChange(ctx.db, row.id);
  return toApiKey(row);
}

export const keysHandlers = {
  'keys.list': list,
  'keys.create': create,
  'keys.rotate': rotate,
  'keys.revoke': revoke,
} satisfies KeysHandlers;
