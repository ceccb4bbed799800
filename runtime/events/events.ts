// ctx.emit: domain events into the outbox table (same transaction as the write) and a NOTIFY on
// the channel svc_events, which PostgreSQL delivers only when the transaction commits (so a dry
// run or a failed write never announces anything). The feed, SSE stream and webhooks read the table.
//
// No lock: concurrent writers emit in parallel, so a sequence number can commit after a higher one.
// Each row records its transaction's id (events.txid, a column default), and readers publish only
// what lies below the visibility horizon, in (txid, seq) order (runtime/events/feed.ts,
// docs/writes.md), so a reader never passes an event that commits later.
import { eq, sql, type SQL } from 'drizzle-orm';
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
  /**
   * When given, events are not written at emit but queued here, for the caller to write before its
   * transaction commits (writePending, or folded into its last statement). Their seq is 0 until then.
   */
  pending?: PendingEvent[];
}

export type Emit = (type: EventType, subject: EventSubject, data: Record<string, unknown>) => Promise<void>;

const EVENT_COLUMNS = ['id', 'type', 'occurredAt', 'clientId', 'subjectId', 'actorKind', 'actorId', 'data', 'traceparent'] as const;
type EventValues = Pick<typeof events.$inferInsert, (typeof EVENT_COLUMNS)[number]>;

/**
 * The event row's INSERT with its NOTIFY (delivered at commit), for a statement built once
 * (runtime/data/statement.ts): every value a placeholder named `${prefix}${column}`. `ctes` names
 * the inserted row `${name}` and the notification `${name}_notified`, to reference in the main query.
 */
export function eventCtes(db: Db, prefix: string, name: string): SQL {
  const p = (column: string) => sql.placeholder(`${prefix}${column}`);
  const insert = db
    .insert(events)
    .values(Object.fromEntries(EVENT_COLUMNS.map((c) => [c, p(c)])) as unknown as typeof events.$inferInsert)
    .returning({ seq: events.seq });
  const notify = sql`select e.seq, pg_notify(${EVENTS_CHANNEL}, json_build_object('seq', e.seq, 'id', ${p('id')}::text, 'type', ${p('type')}::text, 'clientId', ${p('clientId')}::text)::text) from ${sql.identifier(name)} e`;
  return sql`${sql.identifier(name)} as ${insert}, ${sql.identifier(`${name}_notified`)} as (${notify})`;
}

/** The placeholders' values of one event, as eventCtes names them. */
export function eventPlaceholders(e: PendingEvent, prefix: string): Record<string, unknown> {
  const values: EventValues = { ...e.row, id: e.event.id, type: e.event.type as EventValues['type'], clientId: e.event.clientId, subjectId: e.event.subjectId, data: e.event.data };
  return Object.fromEntries(EVENT_COLUMNS.map((c) => [`${prefix}${c}`, values[c] ?? null]));
}

/** One event alone: its row and NOTIFY in one statement. */
const insertEvent = statement<{ seq: number | string }>('svc_insert_event', (db) => sql`with ${eventCtes(db, '', 'e')} select seq from e_notified`);

/** An emitted event not yet written: the executor writes it with the write's last statement (docs/writes.md). */
export interface PendingEvent {
  event: EmittedEvent;
  row: Pick<EventValues, 'occurredAt' | 'actorKind' | 'actorId' | 'traceparent'>;
}

/** Writes pending events (each one statement), in the order they were emitted, and empties the list. */
export async function writePending(db: Db, pending: PendingEvent[]): Promise<void> {
  for (const e of pending.splice(0)) {
    const [row] = await insertEvent.run(db, eventPlaceholders(e, ''));
    e.event.seq = Number(row!.seq);
  }
}

export function createEmitter(options: EmitterOptions): Emit {
  const known = new Set(options.eventTypes);
  // With tracing on, each emit is a span, and its traceparent is stored with the event: the webhook
  // attempts that deliver it later continue that trace (runtime/observability).
  const emit: Emit = (type, subject, data) => inSpan('svc.event.emit', { 'svc.event.type': type }, () => emitOne(type, subject, data));
  const emitOne: Emit = async (type, subject, data) => {
    if (!known.has(type)) throw new Error(`emit: unknown event type "${type}"`);
    const event: EmittedEvent = { id: newId('event'), seq: 0, type, clientId: subject.clientId, subjectId: subject.subjectId, data };
    const row = {
      occurredAt: options.now?.() ?? new Date(),
      actorKind: options.actor?.kind ?? null,
      actorId: options.actor?.id ?? null,
      traceparent: tracing?.activeTraceparent() ?? null,
    };
    // Deferred: written by the executor before commit (with the write's last statement when it can).
    if (options.pending) options.pending.push({ event, row });
    else await writePending(options.db, [{ event, row }]);
    options.sink?.push(event);
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
    // A pending event (seq 0) is written later with the scrubbed data.
    if (e.seq !== 0) await db.update(events).set({ data: e.data }).where(eq(events.id, e.id));
  }
}
