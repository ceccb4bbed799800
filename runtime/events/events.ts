// ctx.emit: domain events into the outbox table (same transaction as the write) and a NOTIFY on
// the channel svc_events, which PostgreSQL delivers only when the transaction commits (so a dry
// run or a failed write never announces anything). The feed, SSE stream and webhooks read the table.
//
// No lock: concurrent writers emit in parallel, so a sequence number can commit after a higher one.
// Each row records its transaction's id (events.txid, a column default), and readers publish only
// what lies below the visibility horizon, in (txid, seq) order (runtime/events/feed.ts,
// docs/writes.md), so a reader never passes an event that commits later.
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../data/client.ts';
import { statement } from '../data/statement.ts';
import { events } from '../data/schema.ts';
import type { EventSubject, Principal } from '../handler-types.ts';
import { newId } from '../data/ids.ts';
import { withoutValues } from '../auth/secret-fields.ts';
import type { EventType } from '../contract-types.ts';
import { inSpan, tracing } from '../observability/index.ts';

export const EVENTS_CHANNEL = 'svc_events';

export interface EmittedEvent {
  id: string;
  seq: number;
  type: string;
  clientId: string | null;
  subjectId: string;
  /** As stored (the executor removes any secret of the call's result from it before commit). */
  data: Record<string, unknown>;
}

export interface EmitterOptions {
  db: Db;
  actor: Pick<Principal, 'kind' | 'id'> | null;
  /** Event types the contract knows (service.eventTypes); anything else is a handler bug. */
  eventTypes: readonly string[];
  now?: () => Date;
  /** Every emitted event is pushed here (the dry-run plan lists them). */
  sink?: EmittedEvent[];
}

export type Emit = (type: EventType, subject: EventSubject, data: Record<string, unknown>) => Promise<void>;

const p = (name: string) => sql.placeholder(name);

/** The event row and its NOTIFY (runtime/data/statement.ts: compiled once). */
const insertEvent = statement<{ seq: number | string }>('svc_insert_event', (db) => {
  const columns = ['id', 'type', 'occurredAt', 'clientId', 'subjectId', 'actorKind', 'actorId', 'data', 'traceparent'] as const;
  const insert = db
    .insert(events)
    .values(Object.fromEntries(columns.map((c) => [c, p(c)])) as unknown as typeof events.$inferInsert)
    .returning({ seq: events.seq });
  return sql`with e as ${insert} select e.seq, pg_notify(${EVENTS_CHANNEL}, json_build_object('seq', e.seq, 'id', ${p('id')}::text, 'type', ${p('type')}::text, 'clientId', ${p('clientId')}::text)::text) from e`;
});

export function createEmitter(options: EmitterOptions): Emit {
  const known = new Set(options.eventTypes);
  // With tracing on, each emit is a span, and its traceparent is stored with the event: the webhook
  // attempts that deliver it later continue that trace (runtime/observability).
  const emit: Emit = (type, subject, data) => inSpan('svc.event.emit', { 'svc.event.type': type }, () => emitOne(type, subject, data));
  const emitOne: Emit = async (type, subject, data) => {
    if (!known.has(type)) throw new Error(`emit: unknown event type "${type}"`);
    const id = newId('event');
    // One round trip: the row and its NOTIFY (delivered at commit) in one statement, built once.
    const [row] = await insertEvent.run(options.db, {
      id,
      type,
      occurredAt: options.now?.() ?? new Date(),
      clientId: subject.clientId,
      subjectId: subject.subjectId,
      actorKind: options.actor?.kind ?? null,
      actorId: options.actor?.id ?? null,
      data,
      traceparent: tracing?.activeTraceparent() ?? null,
    });
    const emitted: EmittedEvent = { id, seq: Number(row!.seq), type, clientId: subject.clientId, subjectId: subject.subjectId, data };
    options.sink?.push(emitted);
  };
  return emit;
}

/**
 * Event data never carries a bearer secret (DESIGN.md): any member of an emitted event whose value is
 * one of the call's secrets is removed before the transaction commits (a guard behind the rule that
 * event data is the subject resource as its read returns it, which has no secret).
 */
export async function scrubEventSecrets(db: Db, emitted: EmittedEvent[], secrets: readonly string[]): Promise<void> {
  if (secrets.length === 0) return;
  const set = new Set(secrets);
  for (const e of emitted) {
    const text = JSON.stringify(e.data);
    if (!secrets.some((s) => text.includes(s))) continue;
    e.data = withoutValues(e.data, set) as Record<string, unknown>;
    await db.update(events).set({ data: e.data }).where(eq(events.id, e.id));
  }
}
