// Reading the events outbox (runtime/events/events.ts writes it): the feed (events.list), the SSE stream
// (events.stream) and webhook fan-out share these queries. Order is (txid, seq), never occurred_at:
// two events of one transaction share their timestamp.
//
// Publication (decision: docs/writes.md, contract note on events.list): writers take no lock, so a
// sequence number can commit after a higher one. An event is published only once its transaction
// id lies below the visibility horizon, pg_snapshot_xmin(pg_current_snapshot()): every transaction
// below it has ended, and every transaction that has not (or has not started) has an id at or above
// it, so an event published later always sorts after one published now. The horizon is read in the
// same statement (same snapshot) as the rows. Positions stay sequence numbers (cursors s, the
// Last-Event-ID's event, the webhook high-water mark, an endpoint's start): a position resolves to
// its event's (txid, seq) in the query.
//
// Retention (events/retention.ts) deletes only a prefix of the published order and records its last
// (txid, seq), the purge boundary, in the settings row PURGED_THROUGH_SETTING. A position whose event
// is gone was purged, so it lay at or before the boundary and every kept event lies after it: it
// counts as (0, seq), which every kept event follows (each has a txid above 0), so it resumes with
// exactly the kept events after it, none again (the former purge, which deleted every old event, left
// kept events before a purged position and handed them out again).
//
// Visibility (DESIGN.md, Visibility rules 1 and 4): a person signed in as an operator (OAuth) sees
// the events of the clients in reach plus internal events (clientId null); every other caller (a
// client admin, a bound or unbound API key) sees only client-bound events of its clients.
import { and, asc, desc, eq, gte, inArray, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../data/client.ts';
import { events, settings } from '../data/schema.ts';
import type { Policy } from '../auth/policy.ts';
import { startSeqPage, type PageInput } from '../data/paging.ts';
import { notFound } from '../problem-error.ts';
import type { EventType } from '../contract-types.ts';

export type EventRow = typeof events.$inferSelect;

/** An event as the feed publishes it (the runtime writes the rows; the contract's Event schema). */
export interface FeedEvent {
  id: string;
  type: EventType;
  occurredAt: string;
  clientId: string | null;
  subjectId: string;
  data: Record<string, unknown>;
}

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
    policy.recordWhere(events.clientId),
    filters.types && filters.types.length > 0 ? inArray(events.type, [...filters.types]) : undefined,
    filters.clientId !== undefined ? eq(events.clientId, filters.clientId) : undefined,
    filters.since !== undefined ? gte(events.occurredAt, new Date(filters.since)) : undefined,
  );
}

/** True when the policy may see this event (the SSE fan-out and webhooks check rows one by one). */
export function canSeeEvent(policy: Policy, row: { clientId: string | null }): boolean {
  return policy.canReadRecord(row);
}

/** The sequence of a visible event id; not_found (on the given pointer's resource) otherwise. */
export async function seqOfVisibleEvent(db: Db, policy: Policy, id: string): Promise<number> {
  const [row] = await db.select({ seq: events.seq, clientId: events.clientId }).from(events).where(eq(events.id, id));
  if (!row || !canSeeEvent(policy, row)) throw notFound('Event');
  return Number(row.seq);
}

/**
 * Where a stream resumes after an event id (Last-Event-ID or after): the event's seq when the caller
 * may see it. Any other id, once retention has purged something, may name a purged event: it resumes
 * at the purge boundary (the seq of the last purged event, gone too), so the stream carries every kept
 * event; the same answer for an id that never existed or that the caller may not see, so the answer
 * tells nothing about other callers' events. Before any purge such an id is not_found.
 */
export async function resumeSeq(db: Db, policy: Policy, id: string): Promise<number> {
  const [row] = await db.select({ seq: events.seq, clientId: events.clientId }).from(events).where(eq(events.id, id));
  if (row && canSeeEvent(policy, row)) return Number(row.seq);
  const boundary = await purgedThrough(db);
  if (boundary) return boundary.seq;
  throw notFound('Event');
}

/** Published: written by a transaction below the visibility horizon (every one below it has ended). */
export const published: SQL = sql`${events.txid} < (pg_snapshot_xmin(pg_current_snapshot())::text)::bigint`;

/** The settings row holding the purge boundary, `txid:seq` (the last event retention deleted). */
export const PURGED_THROUGH_SETTING = 'events_purged_through';

/** The purge boundary (txid, seq), or null when retention has deleted nothing by the prefix rule yet. */
export async function purgedThrough(db: Db): Promise<{ txid: number; seq: number } | null> {
  const [row] = await db.select({ value: settings.value }).from(settings).where(eq(settings.key, PURGED_THROUGH_SETTING));
  if (!row) return null;
  const [txid, seq] = row.value.split(':').map(Number);
  return { txid: txid!, seq: seq! };
}

/** Events after a position (an event's seq; 0: the start) in the published order; a purged one counts as (0, seq). */
export function afterPosition(afterSeq: number): SQL {
  return sql`(${events.txid}, ${events.seq}) > (coalesce((select p.txid from events p where p.seq = ${afterSeq}), 0), ${afterSeq}::bigint)`;
}

/** Published events after a position, in the published order (txid, seq). */
export async function eventsAfter(db: Db, policy: Policy, filters: FeedFilters, afterSeq: number, limit: number): Promise<EventRow[]> {
  return db
    .select()
    .from(events)
    .where(and(feedWhere(policy, filters), published, afterPosition(afterSeq)))
    .orderBy(asc(events.txid), asc(events.seq))
    .limit(limit);
}

/** The position of the last published event (0 when none is): a reader starting there gets every later one. */
export async function lastSeq(db: Db): Promise<number> {
  const [row] = await db.select({ seq: events.seq }).from(events).where(published).orderBy(desc(events.txid), desc(events.seq)).limit(1);
  return Number(row?.seq ?? 0);
}

// Feed cursors: {v: 1, q, s} sealed like every list cursor (runtime/data/paging.ts startSeqPage), bound
// to the query's filters; anything wrong is validation_failed on /cursor.

export async function startFeedPage(db: Db, input: PageInput, filters: Record<string, unknown>): Promise<{ pageSize: number; afterSeq: number | null; cursorFor(seq: number): string }> {
  const page = await startSeqPage(db, input, 'events.list', filters);
  return { pageSize: page.pageSize, afterSeq: page.position, cursorFor: page.cursorFor };
}
