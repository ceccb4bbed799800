// Events reach every reader in the published order, none skipped, when transactions commit in another
// order than they took their sequence numbers (runtime/events/feed.ts: the visibility horizon).
// Transaction A emits first and stays open; transaction B emits after it and commits first. While A
// is open, a feed reader following `after`, an SSE stream and the webhook fan-out all run; then A
// commits. Each must have seen A then B: B is published only once A has ended. Without the horizon,
// on PostgreSQL, readers pass B's sequence and A is skipped forever (test/e2e/events-skip.test.ts
// tries harder). On PGlite (one connection) transactions are serial; the same test runs there.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { createEmitter, type EmittedEvent } from '../../runtime/events/events.ts';
import { service } from '../../generated/registry.ts';
import { openSse } from '../support/sse.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

process.env.SVC_WEBHOOK_ALLOW_PRIVATE = 'true';

let s: TestServer;
let receiver: Server;
let hookUrl = '';
const received: { id: string; subjectId: string }[] = [];
let secret = '';

beforeAll(async () => {
  s = await startTestServer();
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const event = new Webhook(secret).verify(Buffer.concat(chunks).toString('utf8'), req.headers as Record<string, string>) as { id: string; subjectId: string };
      received.push({ id: event.id, subjectId: event.subjectId });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
}, 60_000);
afterAll(async () => {
  await s?.close();
  await new Promise((r) => receiver?.close(r));
});

const key = () => s.credentials.operatorKey;
const TYPE = 'task.created';

async function get(path: string): Promise<any> {
  const res = await fetch(`${s.url}${path}`, { headers: { authorization: `Bearer ${key()}` } });
  expect(res.status, path).toBe(200);
  return res.json();
}

/** A feed reader as a client writes it: pages after the last event it saw, remembering where it is. */
function feedReader(start: string) {
  let after = start;
  const seen: string[] = [];
  return {
    seen,
    async read(): Promise<void> {
      for (;;) {
        const page = (await get(`/v1/events?types=${TYPE}&clientId=${s.credentials.clientId}&after=${after}&pageSize=100`)) as { items: { id: string }[] };
        for (const e of page.items) seen.push(e.id);
        if (page.items.length > 0) after = page.items[page.items.length - 1]!.id;
        if (page.items.length < 100) return;
      }
    },
  };
}

/**
 * An SSE client collecting event ids, resuming after `lastEventId` as a client does: a stream opened
 * without it starts at the last published event, and an event another database's open transaction
 * holds below the horizon (the cluster's xids are shared) may not be published yet.
 */
async function stream(lastEventId: string): Promise<{ ids: string[]; close(): void }> {
  const sse = await openSse(`${s.url}/v1/events:stream?types=${TYPE}&clientId=${s.credentials.clientId}`, key(), { 'last-event-id': lastEventId });
  expect(sse.status).toBe(200);
  return {
    get ids() {
      return sse.frames.flatMap((f) => (f.id ? [f.id] : []));
    },
    close: sse.close,
  };
}

async function waitFor(fn: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > until) throw new Error('waitFor: timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Emits one event through the runtime's emitter in a transaction of its own; resolves with its id when committed. */
function emitIn(subjectId: string, hold: Promise<void> = Promise.resolve(), emitted?: () => void): Promise<string> {
  return s.database.transaction(async (tx) => {
    const sink: EmittedEvent[] = [];
    const emit = createEmitter({ db: tx, actor: null, eventTypes: service.eventTypes, sink });
    await emit(TYPE, { clientId: s.credentials.clientId, subjectId }, { id: subjectId });
    emitted?.();
    await hold;
    return sink[0]!.id;
  });
}

describe('events committed out of sequence order', () => {
  it('the feed cursor, the stream and the webhook fan-out see both events, in order, none skipped', async () => {
    const created = await fetch(`${s.url}/v1/webhook-endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key()}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ url: hookUrl, eventTypes: [TYPE], clientId: s.credentials.clientId }),
    });
    expect(created.status).toBe(201);
    secret = ((await created.json()) as { result: { secret: string } }).result.secret;

    const marker = await emitIn('tsk_order_marker');
    const feed = feedReader(marker);
    const sse = await stream(marker);
    await new Promise((r) => setTimeout(r, 200));

    // A takes its sequence number first and stays open.
    let releaseA!: () => void;
    const holdA = new Promise<void>((r) => (releaseA = r));
    let aEmitted = false;
    const a = emitIn('tsk_order_a', holdA, () => (aEmitted = true));
    if (s.database.kind === 'postgres') await waitFor(() => aEmitted);
    // B emits after A and would commit first (it holds nothing open).
    const b = emitIn('tsk_order_b');
    // Readers run while A is open (on PGlite they queue behind A's transaction).
    await new Promise((r) => setTimeout(r, 300));
    const during = feed.read();
    await new Promise((r) => setTimeout(r, 700)); // the stream polls twice a second, the webhook worker four times
    releaseA();
    const [idA, idB] = await Promise.all([a, b]);
    await during;

    // Sequence order equals commit order: A before B.
    const seqs = await s.database.execute<{ id: string; seq: number }>(`select id, seq::int as seq from events where id in ('${idA}', '${idB}') order by seq`);
    expect(seqs.map((r) => r.id)).toEqual([idA, idB]);

    // Soft: each reader's outcome is reported on its own.
    await feed.read();
    expect.soft(feed.seen, 'feed').toEqual([idA, idB]);
    await waitFor(() => sse.ids.length >= 2).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 300));
    expect.soft(sse.ids, 'stream').toEqual([idA, idB]);
    sse.close();
    await waitFor(() => received.length >= 3).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 500));
    expect.soft(received.map((e) => e.subjectId).sort()).toEqual(['tsk_order_a', 'tsk_order_b', 'tsk_order_marker']);
    const fanned = await s.database.execute<{ event_id: string }>(`select event_id from webhook_deliveries order by created_at, event_id`);
    expect.soft(new Set(fanned.map((d) => d.event_id))).toEqual(new Set([marker, idA, idB]));
  });
});
