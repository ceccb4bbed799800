// Trying to make a reader skip an event (issue 24; docs/writes.md). Writers take no lock: many
// transactions emit concurrently and wait a random time before they commit (some long), so sequence
// numbers commit out of order all the time. Throughout, feed readers follow `after` cursors (small
// pages), one SSE stream stays open, and another reconnects again and again with Last-Event-ID. At
// the end every reader has seen every committed event exactly once, in the published order
// (txid, seq); a rolled-back writer's event is seen by none. Without the visibility horizon
// (runtime/events/feed.ts `published`) readers pass events that commit later and this fails.
// PostgreSQL only: PGlite has one connection, so its transactions never overlap.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmitter, type EmittedEvent } from '../../runtime/events/events.ts';
import { service } from '../../generated/registry.ts';
import { openSse } from '../support/sse.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { usingPostgres } from '../support/db.ts';

const WRITERS = 6; // concurrent writer loops (the test server's pool holds 10 connections)
const PER_WRITER = 25;
const TYPE = 'task.created';

let s: TestServer;
beforeAll(async () => {
  if (usingPostgres()) s = await startTestServer();
}, 60_000);
afterAll(async () => {
  await s?.close();
});

const key = () => s.credentials.operatorKey;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const query = () => `types=${TYPE}&clientId=${s.credentials.clientId}`;

/** Emits one event in a transaction of its own, waits `delay` ms before commit; rolls back when `abort`. */
async function write(subjectId: string, delay: number, abort: boolean): Promise<string | null> {
  try {
    return await s.database.transaction(async (tx) => {
      const sink: EmittedEvent[] = [];
      const emit = createEmitter({ db: tx, actor: null, eventTypes: service.eventTypes, sink });
      await emit(TYPE, { clientId: s.credentials.clientId, subjectId }, { id: subjectId });
      await sleep(delay);
      if (abort) throw new Error('rollback');
      return sink[0]!.id;
    });
  } catch (err) {
    if ((err as Error).message === 'rollback') return null;
    throw err;
  }
}

/** A feed reader: pages of 7 after the last event it saw, over and over until stopped. */
function feedReader(start: string, stop: () => boolean) {
  const seen: string[] = [];
  let after = start;
  const done = (async () => {
    for (;;) {
      const finished = stop(); // one last full read after the writers stopped
      for (;;) {
        const res = await fetch(`${s.url}/v1/events?${query()}&after=${after}&pageSize=7`, { headers: { authorization: `Bearer ${key()}` } });
        expect(res.status).toBe(200);
        const page = (await res.json()) as { items: { id: string }[] };
        for (const e of page.items) seen.push(e.id);
        if (page.items.length > 0) after = page.items[page.items.length - 1]!.id;
        if (page.items.length < 7) break;
      }
      if (finished) return;
      await sleep(Math.random() * 30);
    }
  })();
  return { seen, done };
}

/** An SSE reader that reconnects every 100–400 ms with Last-Event-ID, until stopped and drained. */
function reconnectingStream(start: string, stop: () => boolean, expected: () => number) {
  const seen: string[] = [];
  let last = start;
  const done = (async () => {
    for (;;) {
      const finished = stop() && seen.length >= expected();
      if (finished) return;
      const sse = await openSse(`${s.url}/v1/events:stream?${query()}`, key(), { 'last-event-id': last });
      expect(sse.status).toBe(200);
      await sleep(100 + Math.random() * 300);
      sse.close();
      for (const f of sse.frames) {
        if (!f.id) continue;
        seen.push(f.id);
        last = f.id;
      }
      if (stop()) await sleep(200);
    }
  })();
  return { seen, done };
}

describe.skipIf(!usingPostgres())('no reader skips an event when writers commit out of order (PostgreSQL)', () => {
  it('every reader sees every committed event once, in the published order', async () => {
    const marker = (await write('skip_marker', 0, false))!;
    let writing = true;
    const stop = () => !writing;
    const committed: string[] = [];
    const total = () => committed.length;

    const feeds = [feedReader(marker, stop), feedReader(marker, stop)];
    const live = await openSse(`${s.url}/v1/events:stream?${query()}`, key(), { 'last-event-id': marker });
    expect(live.status).toBe(200);
    const resuming = reconnectingStream(marker, stop, total);

    let aborted = 0;
    await Promise.all(
      Array.from({ length: WRITERS }, async (_, w) => {
        for (let i = 0; i < PER_WRITER; i++) {
          // Mostly short holds, one in eight long: a later sequence number commits well before it.
          const delay = Math.random() < 0.125 ? 150 + Math.random() * 350 : Math.random() * 20;
          const abort = Math.random() < 0.05;
          const id = await write(`skip_${w}_${i}`, delay, abort);
          if (id) committed.push(id);
          else aborted++;
        }
      }),
    );
    writing = false;
    await Promise.all(feeds.map((f) => f.done));
    await Promise.race([resuming.done, sleep(20_000)]);
    await live.events(committed.length, 10_000).catch(() => undefined);
    live.close();

    const order = (
      await s.database.execute<{ id: string }>(`select id from events where subject_id like 'skip\\_%' and subject_id <> 'skip_marker' order by txid, seq`)
    ).map((r) => r.id);
    expect(new Set(order)).toEqual(new Set(committed));
    expect(order).toHaveLength(WRITERS * PER_WRITER - aborted);

    // Commits came out of order: the order writers finished in is not the published order.
    expect(committed).not.toEqual(order);

    expect.soft(feeds[0]!.seen, 'feed reader 1').toEqual(order);
    expect.soft(feeds[1]!.seen, 'feed reader 2').toEqual(order);
    expect.soft(
      live.frames.flatMap((f) => (f.id ? [f.id] : [])),
      'live stream',
    ).toEqual(order);
    expect.soft(resuming.seen, 'stream resumed by Last-Event-ID').toEqual(order);
  }, 120_000);
});
