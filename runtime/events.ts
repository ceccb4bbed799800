// ctx.emit: domain events into the outbox table (same transaction as the write) and a NOTIFY on
// the channel svc_events, which PostgreSQL delivers only when the transaction commits (so a dry
// run or a failed write never announces anything). The feed, SSE stream and webhooks read the table.
//
// Sequence order = commit order. Readers follow `seq` (events.list's `after`, the stream, the webhook
// fan-out's high-water mark): if a transaction holding seq 5 committed after one holding seq 6, a
// reader that had already read 6 would skip 5 forever. So before its first event a transaction takes
// EVENTS_ORDER_LOCK (pg_advisory_xact_lock, released at commit or rollback): the next transaction
// that emits gets its sequence only after this one has ended, so a committed event never appears
// behind one a reader has passed. The lock is held from the first emit to the end of the
// transaction; handlers emit last, after their own writes, which keeps that stretch short (PGlite
// has one connection, so its transactions are serial anyway; the lock is a no-op there).
import { eq, sql } from 'drizzle-orm';
import type { Db } from './db/client.ts';
import { events } from './db/schema.ts';
import type { EventSubject, Principal } from './handler-types.ts';
import { newId } from './ids.ts';
import { withoutValues } from './secret-fields.ts';
import type { EventType } from '../generated/contract.ts';
import { inSpan, tracing } from './observability/index.ts';

export const EVENTS_CHANNEL = 'svc_events';
/** The advisory lock key that orders event-writing transactions (any fixed bigint; 'svc_events' in ASCII). */
export const EVENTS_ORDER_LOCK = 0x7376635f6576; // not a contract limit: a lock key

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

export function createEmitter(options: EmitterOptions): Emit {
  const known = new Set(options.eventTypes);
  let ordered = false;
  // With tracing on, each emit is a span, and its traceparent is stored with the event: the webhook
  // attempts that deliver it later continue that trace (runtime/observability).
  const emit: Emit = (type, subject, data) => inSpan('svc.event.emit', { 'svc.event.type': type }, () => emitOne(type, subject, data));
  const emitOne: Emit = async (type, subject, data) => {
    if (!known.has(type)) throw new Error(`emit: unknown event type "${type}"`);
    if (!ordered) {
      // Taken once per emitter (one per transaction or savepoint); taking it again is harmless.
      await options.db.execute(sql`select pg_advisory_xact_lock(${EVENTS_ORDER_LOCK}::bigint)`);
      ordered = true;
    }
    const id = newId('event');
    const [row] = await options.db
      .insert(events)
      .values({
        id,
        type,
        occurredAt: options.now?.() ?? new Date(),
        clientId: subject.clientId,
        subjectId: subject.subjectId,
        actorKind: options.actor?.kind ?? null,
        actorId: options.actor?.id ?? null,
        data,
        traceparent: tracing?.activeTraceparent() ?? null,
      })
      .returning({ seq: events.seq });
    const emitted: EmittedEvent = { id, seq: Number(row!.seq), type, clientId: subject.clientId, subjectId: subject.subjectId, data };
    options.sink?.push(emitted);
    const payload = JSON.stringify({ seq: emitted.seq, id, type, clientId: subject.clientId });
    await options.db.execute(sql`select pg_notify(${EVENTS_CHANNEL}, ${payload})`);
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
