// Notifications: messages to one person, written by the handler that causes them, in its
// transaction (ctx.db), so a dry run, a failed write or a rolled-back approval leaves none.
// Every producer calls notify() with a kind the contract's Notification schema names; the runtime's own
// are approval_requested (proposeApproval: the people who could decide it, approversOf) and
// approval_decided (the last approval, or a rejection: the proposer). An API's handlers notify of their
// own kinds (the Platform API's, and who receives each: docs/clients.md).
//
// The rules every notification follows (notify):
// - Never to the person who caused it (the actor), never to a disabled user, at most once per person.
// - Only to a person who reaches its subject: an internal subject (no client) reaches operators only;
//   a client's subject reaches operators over every client and people with an active membership of
//   that client. (membership_invited skips this: the invitee is not a member yet.)
import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import { contractFacts } from '../contract-facts.ts';
import type { Db } from '../data/client.ts';
import { memberships, notifications, users } from '../data/schema.ts';
import { newId } from '../data/ids.ts';

/** A notification's kind: one of the contract's (its Notification schema), named by the handler that notifies. */
export type NotificationKind = string;

/** A notification as the runtime shows it (the contract's Notification schema). */
export interface Notification {
  id: string;
  kind: NotificationKind;
  title: string;
  body: string;
  clientId: string | null;
  subjectId: string | null;
  link: string | null;
  readAt: string | null;
  createdAt: string;
}
export type NotificationRow = typeof notifications.$inferSelect;

export interface NotificationDraft {
  kind: NotificationKind;
  title: string;
  body: string;
  clientId: string | null;
  subjectId: string | null;
  /** The subject's API path (/v1/tasks/tsk_…), or null. */
  path: string | null;
}

export interface NotifyOptions {
  now: Date;
  /** The user who caused it: never notified. */
  actorId?: string | null;
  /** false: skip the reach check (an invitation reaches someone who is not a member yet). */
  requireReach?: boolean;
}

/** Writes one notification per eligible recipient (see the rules above); returns the ids written. */
export async function notify(db: Db, recipients: Iterable<string | null | undefined>, draft: NotificationDraft, o: NotifyOptions): Promise<string[]> {
  const wanted = [...new Set([...recipients].filter((r): r is string => typeof r === 'string' && r !== o.actorId))];
  if (wanted.length === 0) return [];
  const people = await db
    .select({ id: users.id, kind: users.kind, allClients: users.allClients })
    .from(users)
    .where(and(inArray(users.id, wanted), isNull(users.disabledAt)));
  let eligible = people;
  if (o.requireReach !== false) {
    const members =
      draft.clientId === null
        ? new Set<string>()
        : new Set(
            (
              await db
                .select({ userId: memberships.userId })
                .from(memberships)
                .where(and(inArray(memberships.userId, wanted), eq(memberships.clientId, draft.clientId), eq(memberships.status, 'active')))
            ).map((m) => m.userId!),
          );
    eligible = people.filter((p) =>
      draft.clientId === null ? p.kind === 'operator' : (p.kind === 'operator' && p.allClients) || members.has(p.id),
    );
  }
  if (eligible.length === 0) return [];
  // In the order the producer named them (stable ids for tests and readers alike).
  const order = new Map(wanted.map((id, i) => [id, i]));
  const rows = eligible
    .sort((a, b) => order.get(a.id)! - order.get(b.id)!)
    .map((p) => ({
      id: newId('ntf'),
      userId: p.id,
      kind: draft.kind,
      title: draft.title,
      body: draft.body,
      clientId: draft.clientId,
      subjectId: draft.subjectId,
      path: draft.path,
      readAt: null,
      createdAt: o.now,
    }));
  await db.insert(notifications).values(rows);
  return rows.map((r) => r.id);
}

/** The contract's Notification; link is the subject's absolute API URL. */
export function toNotification(row: NotificationRow, baseUrl: string): Notification {
  return {
    id: row.id,
    kind: row.kind,
    title: row.title,
    body: row.body,
    clientId: row.clientId,
    subjectId: row.subjectId,
    link: row.path ? `${baseUrl.replace(/\/$/, '')}${row.path}` : null,
    readAt: row.readAt ? row.readAt.toISOString() : null,
    createdAt: row.createdAt.toISOString(),
  };
}

// -------------------------------------------------------------------------------------------------
// Audiences

/**
 * People who could decide a proposal (approvals.approve's rules, less the credential): enabled users
 * whose live role allows approvals:decide (operators by their staff label, client admins by a
 * membership labelled approvals:decide on the subject's client), who reach the subject's client
 * (internal: operators only) and who are not the proposer.
 */
export async function approversOf(db: Db, clientId: string | null, proposerId: string): Promise<string[]> {
  const decide = 'approvals:decide';
  const staffLabels = Object.entries(contractFacts().roleScopes)
    .filter(([, scopes]) => scopes.includes(decide))
    .map(([label]) => label);
  const operators = staffLabels.length
    ? await db
        .select({ id: users.id, allClients: users.allClients })
        .from(users)
        .where(and(eq(users.kind, 'operator'), inArray(users.role, staffLabels), isNull(users.disabledAt)))
    : [];
  const out: string[] = [];
  if (clientId === null) {
    out.push(...operators.map((u) => u.id));
  } else {
    const rows = await db
      .select({ userId: memberships.userId, kind: memberships.kind, role: memberships.role })
      .from(memberships)
      .where(and(eq(memberships.clientId, clientId), eq(memberships.status, 'active')));
    const staffMembers = new Set(rows.filter((r) => r.kind === 'staff').map((r) => r.userId));
    out.push(...operators.filter((u) => u.allClients || staffMembers.has(u.id)).map((u) => u.id));
    const admins = rows.filter((r) => r.kind === 'client_admin' && r.role === decide && r.userId).map((r) => r.userId!);
    if (admins.length) {
      const live = await db
        .select({ id: users.id })
        .from(users)
        .where(and(inArray(users.id, admins), eq(users.kind, 'client_admin'), isNull(users.disabledAt)));
      out.push(...live.map((u) => u.id));
    }
  }
  return [...new Set(out)].filter((id) => id !== proposerId).sort();
}

/** Client admins with an active membership of the client labelled with the scope (rule 6: the label is the permission). */
export async function clientAdminsHolding(db: Db, clientId: string, scope: string): Promise<string[]> {
  const rows = await db
    .select({ userId: memberships.userId })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(
      and(
        eq(memberships.clientId, clientId),
        eq(memberships.kind, 'client_admin'),
        eq(memberships.role, scope),
        eq(memberships.status, 'active'),
        isNull(users.disabledAt),
      ),
    );
  return [...new Set(rows.map((r) => r.userId!))].sort();
}

/** The user an invitation's e-mail belongs to (case-insensitive), or null when nobody has an account yet. */
export async function userByEmail(db: Db, email: string): Promise<string | null> {
  const wanted = email.trim().toLowerCase();
  const [row] = await db
    .select({ id: users.id })
    .from(users)
    .where(and(sql`lower(${users.email}) = ${wanted}`, isNull(users.disabledAt)))
    .orderBy(users.id)
    .limit(1);
  return row?.id ?? null;
}
