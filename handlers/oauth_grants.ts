// oauth_grants.*: the consents the calling person gave OAuth clients (Authentication 5, 9). Any
// credential may call them with no scope. Grants belong to people: an operator (OAuth or its own
// unbound key) and a client admin see and revoke their own; a client-bound service account has no
// grants, so it sees an empty page and revoking anything is 404 (decision in the contract).
// Revoking a grant refuses, at once, every access token issued under it before the revocation
// (runtime/auth/authenticate.ts reads the grant on every token: no cache to clear); the change is
// announced at commit so that open event streams re-check their principal at once.
import { and, eq, getTableColumns, isNull, type SQL } from 'drizzle-orm';
import { oauthClients, oauthGrants } from '../runtime/data/schema.ts';
import type { HandlerContext, Page } from '../runtime/handler-types.ts';
import { pageKeyColumn, startPage } from '../runtime/data/paging.ts';
import { notFound } from '../runtime/problem-error.ts';
import { announceKeyChange } from '../runtime/auth/authenticate.ts';
import { iso } from './mappers/time.ts';
import type { OauthGrantsHandlers } from '../generated/handlers/oauth_grants.ts';
import type { components } from '../generated/types.ts';

type Schemas = components['schemas'];
type OAuthGrant = Schemas['OAuthGrant'];
type GrantRow = typeof oauthGrants.$inferSelect & { oauthClientName: string | null };

function toGrant(row: GrantRow): OAuthGrant {
  return {
    id: row.id,
    oauthClientId: row.oauthClientId,
    // In open mode a client may have no oauth_clients row: its id is the best name there is.
    oauthClientName: row.oauthClientName ?? row.oauthClientId,
    scopes: row.scopes,
    createdAt: iso(row.createdAt),
    lastUsedAt: iso(row.lastUsedAt),
    revokedAt: iso(row.revokedAt),
  };
}

/** A person's own grants; a service account (a client-bound key) has none. */
function ownerWhere(ctx: HandlerContext): SQL | undefined {
  return ctx.principal.kind === 'service_account' ? undefined : eq(oauthGrants.userId, ctx.principal.id);
}

async function list(input: Schemas['OauthGrantsListInput'], ctx: HandlerContext): Promise<Page<OAuthGrant>> {
  const { includeRevoked = false } = input;
  const page = await startPage(ctx.db, input, 'oauth_grants.list', { includeRevoked });
  const owner = ownerWhere(ctx);
  if (!owner) return { items: [], nextCursor: null };
  const rows = await ctx.db
    .select({ ...getTableColumns(oauthGrants), oauthClientName: oauthClients.name, pageKey: pageKeyColumn(oauthGrants.createdAt) })
    .from(oauthGrants)
    .leftJoin(oauthClients, eq(oauthClients.id, oauthGrants.oauthClientId))
    .where(and(owner, includeRevoked ? undefined : isNull(oauthGrants.revokedAt), page.after(oauthGrants.createdAt, oauthGrants.id)))
    .orderBy(...page.orderBy(oauthGrants.createdAt, oauthGrants.id))
    .limit(page.fetch);
  return page.finish(rows, toGrant);
}

async function ownGrant(ctx: HandlerContext, id: string): Promise<GrantRow> {
  const owner = ownerWhere(ctx);
  if (!owner) throw notFound('OAuth grant');
  const [row] = await ctx.db
    .select({ ...getTableColumns(oauthGrants), oauthClientName: oauthClients.name })
    .from(oauthGrants)
    .leftJoin(oauthClients, eq(oauthClients.id, oauthGrants.oauthClientId))
    .where(and(eq(oauthGrants.id, id), owner))
    .limit(1);
  if (!row) throw notFound('OAuth grant');
  return row;
}

async function revoke(input: Schemas['OauthGrantsRevokeInput'], ctx: HandlerContext): Promise<OAuthGrant> {
  const current = await ownGrant(ctx, input.grant_id);
  if (current.revokedAt !== null) return toGrant(current);
  await ctx.db
    .update(oauthGrants)
    .set({ revokedAt: ctx.now })
    .where(and(eq(oauthGrants.id, current.id), isNull(oauthGrants.revokedAt)));
  if (!ctx.dryRun) await announceKeyChange(ctx.db, current.id);
  return toGrant(await ownGrant(ctx, input.grant_id));
}

export const oauthGrantsHandlers = {
  'oauth_grants.list': list,
  'oauth_grants.revoke': revoke,
} satisfies OauthGrantsHandlers;
