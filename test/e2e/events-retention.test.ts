// Issue 39: a position whose event retention purged resumes exactly. Retention deletes only a prefix of
// the published order (runtime/events/retention.ts) and records the boundary; a position whose event is
// gone resolves to it (runtime/events/feed.ts). Events of one client, in order:
//
//   E1 E2 E3 (older than the retention)  E4 (recent)  E5 E6 (older)  E7 E8 E9 (recent)
//
// The purge takes E1–E3 only (E4 is recent, so E5 and E6 stay: they have a kept event before them).
// Positions at E2 (purged) and at E5 (kept) were taken before the purge as a feed cursor, a
// Last-Event-ID, an endpoint's start and the fan-out's mark; afterwards each resumes with exactly the
// events after it (E4… and E6…), none again, none skipped, and so does an event written after the purge.
// Under the former rule (delete every old event; a missing position counted as (0, seq)) E5 was
// purged too and a reader at E5 was handed E4 again, and an endpoint started at E5 received E4.
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { events, settings, webhookDeliveries } from '../../runtime/data/schema.ts';
import { createEmitter, type EmittedEvent } from '../../runtime/events/events.ts';
import { PURGED_THROUGH_SETTING } from '../../runtime/events/feed.ts';
import { purgeEventsBefore } from '../../runtime/events/retention.ts';
import { fanOut, FANOUT_SETTING } from '../../runtime/events/webhooks/deliveries.ts';
import { service } from '../../generated/registry.ts';
import { openSse } from '../support/sse.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

process.env.SVC_WEBHOOK_ALLOW_PRIVATE = 'true';

const DAY = 86_400_000;
const OLD = new Date(Date.now() - 40 * DAY);
const CUTOFF = new Date(Date.now() - 30 * DAY);

let s: TestServer;
beforeAll(async () => {
  // No worker: the test runs the fan-out itself, at chosen moments.
  s = await startTestServer({ webhookWorker: false });
  await s.database.db.delete(events); // the demo seed's recent events would stand before ours in the order
}, 60_000);
afterAll(async () => {
  await s?.close();
});

const key = () => s.credentials.operatorKey;
const query = () => `types=task.created&clientId=${s.credentials.clientId}`;

async function write(at: Date | null): Promise<EmittedEvent> {
  return s.database.transaction(async (tx) => {
    const sink: EmittedEvent[] = [];
    const emit = createEmitter({ db: tx, actor: null, eventTypes: service.eventTypes, sink, now: at ? () => at : undefined });
    await emit('task.created', { clientId: s.credentials.clientId, subjectId: `tsk_${randomUUID()}` }, {});
    return sink[0]!;
  });
}

async function feed(path: string): Promise<{ items: { id: string }[]; nextCursor: string | null }> {
  const res = await fetch(`${s.url}/v1/events?${path}`, { headers: { authorization: `Bearer ${key()}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as { items: { id: string }[]; nextCursor: string | null };
}

/** Every event after a cursor, following nextCursor to the end. */
async function followCursor(cursor: string): Promise<string[]> {
  const ids: string[] = [];
  for (let next: string | null = cursor; next; ) {
    const page = await feed(`${query()}&cursor=${encodeURIComponent(next)}`);
    ids.push(...page.items.map((e) => e.id));
    next = page.nextCursor;
  }
  return ids;
}

/**
 * Waits (at most 2 s) until the feed publishes `id`: it publishes below the cluster's oldest open
 * transaction, and one of the server's own workers may have begun a transaction just before the write
 * committed (milliseconds). The exact lists are asserted after.
 */
async function published(id: string): Promise<void> {
  const until = Date.now() + 2_000;
  while (!(await feed(`${query()}&pageSize=200`)).items.some((e) => e.id === id)) {
    if (Date.now() > until) throw new Error(`${id} was not published within 2 s`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function endpointFrom(): Promise<string> {
  const res = await fetch(`${s.url}/v1/webhook-endpoints`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key()}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify({ url: 'http://127.0.0.1:9/hook', eventTypes: ['task.created'], clientId: s.credentials.clientId }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { result: { id: string } }).result.id;
}

async function streamAfter(lastEventId: string, n: number): Promise<string[]> {
  const sse = await openSse(`${s.url}/v1/events:stream?${query()}`, key(), { 'last-event-id': lastEventId });
  expect(sse.status).toBe(200);
  try {
    await sse.events(n);
    await new Promise((r) => setTimeout(r, 600)); // one more poll: nothing beyond the n
    return sse.frames.filter((f) => f.id).map((f) => f.id!);
  } finally {
    sse.close();
  }
}

describe('purged positions resume exactly (issue 39)', () => {
  it('a cursor, a Last-Event-ID, an endpoint start and the fan-out mark, at a purged and at a kept event', async () => {
    await write(OLD); // E1
    const e2 = await write(OLD);
    // The fan-out's mark at E2, and an endpoint starting at E2.
    expect(await fanOut(s.database.db, new Date(), 2)).toBe(0);
    const [mark] = await s.database.db.select().from(settings).where(eq(settings.key, FANOUT_SETTING));
    expect(Number(mark!.value)).toBe(e2.seq);
    const fromE2 = await endpointFrom();
    const e3 = await write(OLD);
    const e4 = await write(null);
    const e5 = await write(OLD);
    const fromE5 = await endpointFrom();
    const e6 = await write(OLD);
    const recent = [await write(null), await write(null), await write(null)];
    const ids = (list: EmittedEvent[]) => list.map((e) => e.id);
    await published(recent[2]!.id);

    const atE2 = (await feed(`${query()}&pageSize=2`)).nextCursor!;
    const atE5 = (await feed(`${query()}&pageSize=5`)).nextCursor!;
    expect(atE2).toBeTruthy();

    // Retention, in steps of two: E1 E2, then E3 (E4 is recent: the prefix ends there).
    expect(await purgeEventsBefore(s.database.db, CUTOFF, 2)).toBe(3);
    const kept = await s.database.db.select({ id: events.id }).from(events);
    expect(kept.map((r) => r.id).sort()).toEqual(ids([e4, e5, e6, ...recent]).sort());
    const [boundary] = await s.database.db.select().from(settings).where(eq(settings.key, PURGED_THROUGH_SETTING));
    expect(boundary!.value.split(':')[1]).toBe(String(e3.seq));
    expect(await purgeEventsBefore(s.database.db, CUTOFF, 2)).toBe(0);

    const afterE2 = ids([e4, e5, e6, ...recent]);
    const afterE5 = ids([e6, ...recent]);
    expect(await followCursor(atE2)).toEqual(afterE2);
    expect(await followCursor(atE5)).toEqual(afterE5);
    expect(await streamAfter(e2.id, afterE2.length)).toEqual(afterE2);
    expect(await streamAfter(e5.id, afterE5.length)).toEqual(afterE5);

    // The fan-out resumes after its purged mark; each endpoint gets exactly what follows its start.
    await fanOut(s.database.db, new Date());
    const delivered = async (endpointId: string) =>
      (await s.database.db.select({ eventId: webhookDeliveries.eventId, seq: events.seq }).from(webhookDeliveries).innerJoin(events, eq(events.id, webhookDeliveries.eventId)).where(eq(webhookDeliveries.endpointId, endpointId)).orderBy(events.txid, events.seq)).map((r) => r.eventId);
    expect(await delivered(fromE2)).toEqual(afterE2);
    expect(await delivered(fromE5)).toEqual(afterE5);

    // An event written after the purge reaches every reader once.
    const later = await write(null);
    await published(later.id);
    expect(await followCursor(atE2)).toEqual([...afterE2, later.id]);
    expect(await streamAfter(e2.id, afterE2.length + 1)).toEqual([...afterE2, later.id]);
    await fanOut(s.database.db, new Date());
    expect(await delivered(fromE2)).toEqual([...afterE2, later.id]);
    expect(await delivered(fromE5)).toEqual([...afterE5, later.id]);
  }, 60_000);

  it('a Last-Event-ID that names no kept event resumes from the boundary once something was purged; so does another client’s event', async () => {
    const all = (await feed(`${query()}&pageSize=200`)).items.map((e) => e.id);
    expect(await streamAfter('evt_neverexisted0000000', all.length)).toEqual(all);
    // The service key is bound to clientId: an event of the other client is not its to name.
    const foreign = await s.database.transaction(async (tx) => {
      const sink: EmittedEvent[] = [];
      await createEmitter({ db: tx, actor: null, eventTypes: service.eventTypes, sink })('task.created', { clientId: s.credentials.otherClientId, subjectId: `tsk_${randomUUID()}` }, {});
      return sink[0]!;
    });
    const sse = await openSse(`${s.url}/v1/events:stream?${query()}`, s.credentials.serviceKey, { 'last-event-id': foreign.id });
    expect(sse.status).toBe(200);
    try {
      await sse.events(all.length);
      expect(sse.frames.filter((f) => f.id).map((f) => f.id)).toEqual(all);
    } finally {
      sse.close();
    }
  }, 30_000);
});
