// Issue 39: an SSE stream's memory is bounded. A client on a real socket sends an old Last-Event-ID
// while thousands of large events exist, and never reads. The stream reads a page only while its
// consumer has room, so what the server queues for it (streamBufferedBytes, the streams' queues) stays
// near BUFFER_BYTES and a page, far below the events' size; the reader stays full, and after the stall
// bound (SVC_EVENT_STREAM_STALL_SECONDS, 2 s here; a reader that takes something in each such
// window is never cut, however slow) the server cuts the connection off. Read afterwards,
// that socket holds a prefix of the events and the `retry:` hint it got first; a normal reader resuming
// by the last complete event's id gets the rest: every event once, in order. PGlite and PostgreSQL.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { createEmitter, type EmittedEvent } from '../../runtime/events/events.ts';
import { openStreamCount, streamBufferedBytes } from '../../runtime/events/stream.ts';
import { service } from '../../generated/registry.ts';
import { openSse } from '../support/sse.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const EVENTS = 4000;
const NOTE_BYTES = 4000; // each event's data: ~4 KB, so ~16 MB in all
const BOUND = 700 * 1024; // the stream's queue (64 KiB) and one page of 100 such events, with room to spare

let s: TestServer;
let e0: EmittedEvent;
let expected: string[];
beforeAll(async () => {
  s = await startTestServer({ eventStreamStallSeconds: 2 });
  e0 = await s.database.transaction(async (tx) => {
    const sink: EmittedEvent[] = [];
    await createEmitter({ db: tx, actor: null, eventTypes: service.eventTypes, sink })('task.created', { clientId: s.credentials.clientId, subjectId: 'tsk_backpressure0' }, {});
    return sink[0]!;
  });
  await s.database.execute(sql`insert into events (id, type, occurred_at, client_id, subject_id, data)
    select 'evt_bp' || lpad(g::text, 14, '0'), 'task.created', now(), ${s.credentials.clientId}, 'tsk_bp' || g, jsonb_build_object('note', repeat('x', ${NOTE_BYTES}))
    from generate_series(1, ${EVENTS}) g`);
  const rows = await s.database.execute<{ id: string }>(sql`select id from events where id like 'evt_bp%' order by txid, seq`);
  expected = rows.map((r) => r.id);
}, 120_000);
afterAll(async () => {
  await s?.close();
});

const path = () => `/v1/events:stream?types=task.created&clientId=${s.credentials.clientId}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Ids of the complete event frames in an SSE text, and whether a retry hint came first. */
function framesOf(text: string): { ids: string[]; retryFirst: boolean } {
  const body = text.slice(text.indexOf('\r\n\r\n') + 4);
  const blocks = body.split('\n\n');
  blocks.pop(); // the last block is incomplete (or empty)
  const ids = blocks.flatMap((b) => b.split('\n').filter((l) => l.startsWith('id: ')).map((l) => l.slice(4)));
  return { ids, retryFirst: /^[0-9a-f]*\r?\n?retry: \d+/.test(body) };
}

describe('SSE backpressure (issue 39)', () => {
  it('a reader that never reads: bounded buffer, cut off; resuming by Last-Event-ID gets every event once', async () => {
    const port = new URL(s.url).port;
    const socket: Socket = connect({ host: '127.0.0.1', port: Number(port) });
    socket.pause(); // never reads, until the end of the test
    await new Promise<void>((r) => socket.once('connect', () => r()));
    socket.write(
      `GET ${path()} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${s.credentials.operatorKey}\r\n` +
        `Accept: text/event-stream\r\nLast-Event-ID: ${e0.id}\r\n\r\n`,
    );
    let closed = false;
    socket.once('close', () => (closed = true));

    // While it is open: what the server queues for it stays bounded.
    let max = 0;
    let open = false;
    const until = Date.now() + 10_000;
    while (Date.now() < until) {
      const streams = openStreamCount();
      if (streams > 0) open = true;
      max = Math.max(max, streamBufferedBytes());
      if (open && streams === 0) break; // cut off
      await sleep(20);
    }
    expect(open, 'the stream opened').toBe(true);
    expect(openStreamCount(), 'the stream was cut off').toBe(0);
    expect(max, 'the stream filled its buffer (backpressure engaged)').toBeGreaterThan(32 * 1024);
    expect(max, `queued at most ${BOUND} bytes of ~${(EVENTS * NOTE_BYTES) >> 20} MiB`).toBeLessThanOrEqual(BOUND);

    // Now read what reached that socket: a prefix of the events, the retry hint first, then the end.
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    socket.on('error', () => undefined);
    socket.resume();
    for (let i = 0; i < 400 && !closed; i++) await sleep(25);
    expect(closed, 'the server ended the connection').toBe(true);
    const got = framesOf(text);
    expect(got.retryFirst).toBe(true);
    expect(got.ids.length).toBeGreaterThan(0);
    expect(got.ids.length).toBeLessThan(EVENTS);
    expect(got.ids).toEqual(expected.slice(0, got.ids.length));

    // A reader that reads, resuming by the last complete event: the rest, once each, in order.
    const rest = await openSse(`${s.url}${path()}`, s.credentials.operatorKey, { 'last-event-id': got.ids.at(-1)! });
    try {
      const frames = await rest.events(EVENTS - got.ids.length, 60_000);
      await sleep(600);
      const ids = rest.frames.filter((f) => f.id).map((f) => f.id!);
      expect(frames.length).toBe(EVENTS - got.ids.length);
      expect([...got.ids, ...ids]).toEqual(expected);
    } finally {
      rest.close();
    }
  }, 120_000);

  it('a slow reader (slower than the server sends, but reading) is never cut off, and its buffer stays bounded', async () => {
    const port = Number(new URL(s.url).port);
    const socket: Socket = connect({ host: '127.0.0.1', port });
    socket.pause();
    await new Promise<void>((r) => socket.once('connect', () => r()));
    socket.write(`GET ${path()} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${s.credentials.operatorKey}\r\nAccept: text/event-stream\r\nLast-Event-ID: ${e0.id}\r\n\r\n`);
    let taken = 0;
    let max = 0;
    try {
      for (let i = 0; i < 1500 && openStreamCount() === 0; i++) await sleep(20);
      expect(openStreamCount(), 'the stream opened').toBe(1);
      const until = Date.now() + 6_000; // three stall bounds
      while (Date.now() < until) {
        // What one socket read holds (64 KiB) every 50 ms, about 1.3 MB/s: far slower than the server
        // could send, fast enough that it sees its socket drain (the kernel's buffers on loopback hold
        // megabytes: a reader must drain them within the stall bound to be seen reading at all).
        const chunk = socket.read() as Buffer | null;
        taken += chunk?.length ?? 0;
        max = Math.max(max, streamBufferedBytes());
        await sleep(50);
        expect(openStreamCount(), 'still open').toBe(1);
      }
      expect(taken).toBeGreaterThan(0);
      expect(max, 'the server had more to send than the reader took').toBeGreaterThan(32 * 1024);
      expect(max).toBeLessThanOrEqual(BOUND);
    } finally {
      socket.destroy();
    }
    for (let i = 0; i < 100 && openStreamCount() > 0; i++) await sleep(20);
  }, 60_000);
});
