// notifications.list / notifications.read: the calling person's notifications (users.id of the
// principal: an unbound API key reads its owner's; a service account is outside the audience).
// They are written by the producers through runtime/events/notifications.ts, in their cause's transaction.
import { and, eq, getTableColumns, inArray, isNotNull, isNull, sql } from 'drizzle-orm';
import { notifications } from '../runtime/data/schema.ts';
import type { HandlerContext, Page } from '../runtime/handler-types.ts';
import { toNotification, type NotificationRow } from '../runtime/events/notifications.ts';
import { pageKeyColumn, startPage } from '../runtime/data/paging.ts';
import { notFound } from '../runtime/problem-error.ts';
import type { NotificationsHandlers } from '../generated/handlers/notifications.ts';
import type { components } from '../generated/types.ts';

type Schemas = components['schemas'];
type Notification = Schemas['Notification'];

/** The runtime's notification (its kind a string), as the contract's: every kind written is one the contract names. */
const toContract = (row: NotificationRow, baseUrl: string): Notification => toNotification(row, baseUrl) as Notification;

/** Newest first; unread: true for unread only, false for read only. */
async function list(input: Schemas['NotificationsListInput'], ctx: HandlerContext): Promise<Page<Notification>> {
  const page = await startPage(ctx.db, input, 'notifications.list', { unread: input.unread, user: ctx.principal.id });
  const rows = await ctx.db
    .select({ ...getTableColumns(notifications), pageKey: pageKeyColumn(notifications.createdAt) })
    .from(notifications)
    .where(
      and(
        eq(notifications.userId, ctx.principal.id),
        input.unread === true ? isNull(notifications.readAt) : input.unread === false ? isNotNull(notifications.readAt) : undefined,
        page.after(notifications.createdAt, notifications.id),
      ),
    )
    .orderBy(...page.orderBy(notifications.createdAt, notifications.id))
    .limit(page.fetch);
  return page.finish(rows, (r) => toContract(r, ctx.baseUrl));
}

/**
 * All or nothing: every id must be one of the caller's notifications, else 404 and nothing is marked.
 * An already read notification keeps its first readAt. The rows are locked first, so two concurrent
 * reads of one notification agree on its readAt.
 */
async function read(input: Schemas['NotificationsReadInput'], ctx: HandlerContext): Promise<Schemas['NotificationReadResult']> {
  const ids = [...new Set(input.notificationIds)];
  const mine = await ctx.db
    .select({ id: notifications.id })
    .from(notifications)
    .where(and(inArray(notifications.id, ids), eq(notifications.userId, ctx.principal.id)))
    .for('update');
  if (mine.length !== ids.length) throw notFound('Notification');
  await ctx.db
    .update(notifications)
    .set({ readAt: sql`coalesce(${notifications.readAt}, ${ctx.now.toISOString()}::timestamptz)` })
    .where(and(inArray(notifications.id, ids), eq(notifications.userId, ctx.principal.id)));
  const rows = await ctx.db.select().from(notifications).where(inArray(notifications.id, ids));
  const byId = new Map(rows.map((r) => [r.id, r]));
  return { items: input.notificationIds.map((id) => toContract(byId.get(id)!, ctx.baseUrl)) };
}

export const notificationsHandlers = {
  'notifications.list': list,
  'notifications.read': read,
} satisfies NotificationsHandlers;
