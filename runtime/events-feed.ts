// Reading the events outbox (runtime/events.ts writes it): the feed (events.list), the SSE stream
// (events.stream) and webhook fan-out share these queries. Order is the outbox sequence `seq`, never
// occurred_at: two events of one transaction share their timestamp.
//
// Visibility (DESIGN.md, Visibility rules 1 and 4): a person signed in as an operator (OAuth) sees
// the events of the clients in reach plus internal events (clientId null); every other caller (a
// client admin, a bound or unbound API key) sees only client-bound events of its clients.
import { and, asc, eq, gt, gte, inArray, max, type SQL } from 'drizzle-orm';
import type { Db } from './db/client.ts';
import { events } from './db/schema.ts';
import type { Policy } from './policy.ts';
import { startSeqPage, type PageInput } from './paging.ts';
import { notFound } from './problem-error.ts';
import type { components } from '../generated/types.ts';
import type { EventType } from '../generated/contract.ts';

export type EventRow = typeof events.$inferSelect;

/** The contract's Event record. */
export type FeedEvent = components['schemas']['Event'];

export interface FeedFilters {
  types?: readonly EventType[];
  clientId?: string;
  since?: string;
}

export function toFeedEvent(row: EventRow): FeedEvent {
  return {
    id: row.id,
    type: row.type as FeedEvent['type'],
    occurredAt: row.occurredAt.toISOString(),
    clientId: row.clientId,
    subjectId: row.subjectId,
    data: row.data as Record<string, unknown>,
  };
}

/** WHERE for the events a policy may see, with the feed filters. */
export function feedWhere(policy: Policy, filters: FeedFilters): SQL | undefined {
  return and(
    policy.taskWhere(events.clientId),
    filters.types && filters.types.length > 0 ? inArray(events.type, [...filters.types]) : undefined,
    filters.clientId !== undefined ? eq(events.clientId, filters.clientId) : undefined,
    filters.since !== undefined ? gte(events.occurredAt, new Date(filters.since)) : undefined,
  );
}

/** True when the policy may see this event (the SSE fan-out and webhooks check rows one by one). */
export function canSeeEvent(policy: Policy, row: { clientId: string | null }): boolean {
  return policy.canReadTask(row);
}

/** The sequence of a visible event id; not_found (on the given pointer's resource) otherwise. */
export async function seqOfVisibleEvent(db: Db, policy: Policy, id: string): Promise<number> {
  const [row] = await db.select({ seq: events.seq, clientId: events.clientId }).from(events).where(eq(events.id, id));
  if (!row || !canSeeEvent(policy, row)) throw notFound('Event');
  return Number(row.seq);
}

/** Events after a sequence number, oldest first. */
export async function eventsAfter(db: Db, policy: Policy, filters: FeedFilters, afterSeq: number, limit: number): Promise<EventRow[]> {
  return db
    .select()
    .from(events)
    .where(and(feedWhere(policy, filters), gt(events.seq, afterSeq)))
    .orderBy(asc(events.seq))
    .limit(limit);
}

/** The highest sequence number written so far (0 when the outbox is empty). */
export async function lastSeq(db: Db): Promise<number> {
  const [row] = await db.select({ seq: max(events.seq) }).from(events);
  return Number(row?.seq ?? 0);
}

// Feed cursors: {v: 1, q, s} sealed like every list cursor (runtime/paging.ts startSeqPage), bound
// to the query's filters; anything wrong is validation_failed on /cursor.

export async function startFeedPage(db: Db, input: PageInput, filters: Record<string, unknown>): Promise<{ pageSize: number; afterSeq: number | null; cursorFor(seq: number): string }> {
  const page = await startSeqPage(db, input, 'events.list', filters);
  return { pageSize: page.pageSize, afterSeq: page.position, cursorFor: page.cursorFor };
}
