// memberships.*: who may act for a client (Visibility 6). A client-admin membership carries one
// permission label (a scope name allows that scope; any other label allows nothing), so a person
// with several labels has several memberships; (email, client, role) is unique while invited or
// active (a partial unique index backs the conflict check). Staff assignments (kind staff: a
// scoped operator's reach) live in the same table; a client admin never sees or revokes them.
// Both writes are Tier 2: the bodies below run when a person approves the proposal (or, with
// ctx.dryRun, as a plan that is rolled back). clients.memberships.list pages a client's memberships.
//
// The invitation e-mail is a row of the outbound-message outbox (runtime/events/outbox.ts), written in the
// approved write's transaction: a dry run or the proposal's pre-flight rolls it back with the rest,
// a rejected proposal never runs the write, so nothing is queued or sent for them. With SVC_SMTP_URL
// the delivery loop sends it (nodemailer); without it the row stays queued for the operator to see.
import { and, eq, getTableColumns, inArray, lt, ne, sql, type SQL } from 'drizzle-orm';
import { memberships, outboundMessages, users } from '../runtime/data/schema.ts';
import type { Db } from '../runtime/data/client.ts';
import type { HandlerContext, Page } from '../runtime/handler-types.ts';
import { newId } from '../runtime/data/ids.ts';
import { pageKeyColumn, startPage } from '../runtime/data/paging.ts';
import { notFound, ProblemError } from '../runtime/problem-error.ts';
import { announceKeyChange } from './keys.ts';
import { iso } from './mappers/time.ts';
import { actorName, invalidTransition, requireClient, validationFailed } from './shared.ts';
import type { MembershipsHandlers } from '../generated/handlers/memberships.ts';
import type { components } from '../generated/types.ts';
import { notify, userByEmail } from '../runtime/events/notifications.ts';

type Schemas = components['schemas'];
type Membership = Schemas['Membership'];
type MembershipRow = typeof memberships.$inferSelect & { userEmail: string | null; userName: string | null; inviterName: string | null };

/** Invitations are open this long (14 days), then the sweep marks them expired. */
export const INVITATION_LIFETIME_MS = 14 * 86_400_000;

function toMembership(row: MembershipRow): Membership {
  return {
    id: row.id,
    clientId: row.clientId,
    userId: row.userId,
    email: row.email ?? row.userEmail ?? '',
    name: row.name ?? row.userName,
    role: row.role,
    status: row.status as Membership['status'],
    invitedBy: {
      kind: (row.invitedByKind ?? 'operator') as Membership['invitedBy']['kind'],
      id: row.invitedById ?? row.userId ?? row.id,
      name: row.inviterName,
    },
    createdAt: iso(row.createdAt),
    acceptedAt: iso(row.acceptedAt),
    revokedAt: iso(row.revokedAt),
  };
}

/** The sweep: invitations past their 14 days become expired (final). Runs before every membership read or write. */
export async function expireInvitations(db: Db, now: Date): Promise<void> {
  await db
    .update(memberships)
    .set({ status: 'expired', updatedAt: now })
    .where(and(eq(memberships.status, 'invited'), lt(memberships.expiresAt, now)));
}

const inviter = sql<string | null>`(select name from users i where i.id = ${memberships.invitedById})`.as('inviter_name');

function selectRows(db: Db) {
  return db
    .select({
      ...getTableColumns(memberships),
      userEmail: users.email,
      userName: users.name,
      inviterName: inviter,
      pageKey: pageKeyColumn(memberships.createdAt),
    })
    .from(memberships)
    .leftJoin(users, eq(users.id, memberships.userId));
}

/** What of a client's memberships the caller may see: a client admin never sees staff assignments. */
function kindWhere(ctx: HandlerContext): SQL | undefined {
  return ctx.principal.kind === 'client_admin' ? ne(memberships.kind, 'staff') : undefined;
}

async function membership(ctx: HandlerContext, clientId: string, id: string): Promise<MembershipRow> {
  const [row] = await selectRows(ctx.db)
    .where(and(eq(memberships.id, id), eq(memberships.clientId, clientId), kindWhere(ctx)))
    .limit(1);
  if (!row) throw notFound('Membership');
  return row;
}

export async function listClientMemberships(
  input: Schemas['ClientsMembershipsListInput'],
  ctx: HandlerContext,
): Promise<Page<Membership>> {
  ctx.policy.assertClientInScope(input.client_id);
  await requireClient(ctx.db, input.client_id);
  const page = await startPage(ctx.db, input, 'clients.memberships.list', { client_id: input.client_id, status: input.status });
  if (!ctx.dryRun) await expireInvitations(ctx.db, ctx.now);
  const rows = await selectRows(ctx.db)
    .where(
      and(
        eq(memberships.clientId, input.client_id),
        kindWhere(ctx),
        input.status !== undefined ? eq(memberships.status, input.status) : undefined,
        page.after(memberships.createdAt, memberships.id),
      ),
    )
    .orderBy(...page.orderBy(memberships.createdAt, memberships.id))
    .limit(page.fetch);
  return page.finish(rows, toMembership);
}

/** The invitation e-mail, as an outbox row (sent by the delivery loop when SVC_SMTP_URL is set). */
function invitationMail(m: Membership, clientName: string, inviterName: string | null, now: Date): typeof outboundMessages.$inferInsert {
  const until = new Date(now.getTime() + INVITATION_LIFETIME_MS).toISOString().slice(0, 10);
  const greeting = m.name ? `Hello ${m.name},` : 'Hello,';
  return {
    id: newId('msg'),
    channel: 'email',
    recipient: m.email,
    subject: `You are invited to act for ${clientName}`,
    body: [
      greeting,
      '',
      `${inviterName ?? 'An administrator'} invited you to act for ${clientName} with the permission ${m.role}.`,
      `The invitation is open until ${until} (UTC); after that it expires.`,
      '',
      `Invitation reference: ${m.id}`,
    ].join('\n'),
    status: 'queued',
    notBefore: now,
    createdAt: now,
  };
}

async function invite(input: Schemas['MembershipsInviteInput'], ctx: HandlerContext): Promise<Membership> {
  ctx.policy.assertClientInScope(input.client_id);
  const client = await requireClient(ctx.db, input.client_id);
  await expireInvitations(ctx.db, ctx.now);
  const email = input.email.trim().toLowerCase();
  if (ctx.principal.kind === 'client_admin') {
    // A client admin grants only labels it holds itself on this client (live, from the database).
    const [held] = await ctx.db
      .select({ id: memberships.id })
      .from(memberships)
      .where(
        and(
          eq(memberships.userId, ctx.principal.id),
          eq(memberships.clientId, input.client_id),
          eq(memberships.role, input.role),
          eq(memberships.status, 'active'),
        ),
      )
      .limit(1);
    if (!held) throw validationFailed([{ pointer: '/role', message: `you do not hold ${input.role} for this client, so you cannot grant it` }]);
  }
  const [open] = await ctx.db
    .select({ id: memberships.id, status: memberships.status })
    .from(memberships)
    .leftJoin(users, eq(users.id, memberships.userId))
    .where(
      and(
        eq(memberships.clientId, input.client_id),
        eq(memberships.role, input.role),
        inArray(memberships.status, ['invited', 'active']),
        sql`lower(coalesce(${memberships.email}, ${users.email})) = ${email}`,
      ),
    )
    .limit(1);
  if (open) {
    throw new ProblemError('conflict', `${email} already has an ${open.status} membership with the role ${input.role} for this client.`, {
      extra: { membershipId: open.id },
    });
  }
  const id = newId('membership');
  await ctx.db.insert(memberships).values({
    id,
    userId: null,
    clientId: input.client_id,
    kind: 'client_admin',
    email,
    name: input.name ?? null,
    role: input.role,
    status: 'invited',
    invitedByKind: ctx.principal.kind,
    invitedById: ctx.principal.id,
    createdAt: ctx.now,
    expiresAt: new Date(ctx.now.getTime() + INVITATION_LIFETIME_MS),
    updatedAt: ctx.now,
  });
  const result = toMembership(await membership(ctx, input.client_id, id));
  await ctx.db.insert(outboundMessages).values(invitationMail(result, client.name, await actorName(ctx.db, ctx.principal.id), ctx.now));
  await ctx.emit('membership.invited', { clientId: input.client_id, subjectId: id }, { ...result });
  // membership_invited to the invitee when a user with that e-mail exists; an invitee without an
  // account gets none (the invitation itself reaches them, and nothing is kept for later).
  const invitee = await userByEmail(ctx.db, email);
  if (invitee) {
    await notify(
      ctx.db,
      [invitee],
      {
        kind: 'membership_invited',
        title: `You were invited to ${client.name}`,
        body: `Role: ${input.role}.`,
        clientId: input.client_id,
        subjectId: id,
        path: `/v1/clients/${input.client_id}/memberships`,
      },
      { now: ctx.now, actorId: ctx.principal.id, requireReach: false },
    );
  }
  return result;
}

async function revoke(input: Schemas['MembershipsRevokeInput'], ctx: HandlerContext): Promise<Membership> {
  ctx.policy.assertClientInScope(input.client_id);
  await expireInvitations(ctx.db, ctx.now);
  const current = await membership(ctx, input.client_id, input.membership_id);
  if (current.status !== 'invited' && current.status !== 'active') {
    throw invalidTransition(`A ${current.status} membership cannot be revoked.`);
  }
  const [changed] = await ctx.db
    .update(memberships)
    .set({ status: 'revoked', revokedAt: ctx.now, updatedAt: ctx.now })
    .where(and(eq(memberships.id, current.id), inArray(memberships.status, ['invited', 'active'])))
    .returning({ id: memberships.id });
  if (!changed) throw invalidTransition('The membership changed while revoking it; read it again.');
  // Cached API key lookups carry their owner's memberships: every instance drops them at commit.
  await announceKeyChange(ctx.db, '*');
  const result = toMembership(await membership(ctx, input.client_id, current.id));
  await ctx.emit('membership.revoked', { clientId: input.client_id, subjectId: current.id }, { ...result });
  return result;
}

export const membershipsHandlers = {
  'memberships.invite': invite,
  'memberships.revoke': revoke,
} satisfies MembershipsHandlers;
