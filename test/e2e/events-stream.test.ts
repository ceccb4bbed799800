// events.stream over Server-Sent Events: `retry:` first, id/event/data frames, live delivery through
// LISTEN/NOTIFY, resume with Last-Event-ID (winning over `after`) missing nothing and repeating
// nothing, visibility per principal kind (table-driven) identical to the feed, and the cap on open
// streams per credential.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startIdp, type TestIdp } from '../support/idp.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { limits } from '../../generated/contract.ts';

const SIGN_IN = 'openid email profile';
let s: TestServer;
let idp: TestIdp;
const token = (sub: string) => idp.issueToken({ sub, aud: `${s.config.baseUrl}/mcp`, scope: SIGN_IN, client_id: s.credentials.oauthClientId });

interface Frame {
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
  comment?: string;
}
interface Sse {
  status: number;
  contentType: string | null;
  frames: Frame[];
  close(): void;
  /** Resolves when `n` event frames (with an id) arrived. */
  events(n: number, ms?: number): Promise<Frame[]>;
}
async function openSse(credential: string, query = '', headers: Record<string, string> = {}): Promise<Sse> {
  const ac = new AbortController();
  const res = await fetch(`${s.url}/v1/events:stream${query}`, { headers: { authorization: `Bearer ${credential}`, accept: 'text/event-stream', ...headers }, signal: ac.signal });
  const frames: Frame[] = [];
  const sse: Sse = {
    status: res.status,
    contentType: res.headers.get('content-type'),
    frames,
    close: () => ac.abort(),
    async events(n, ms = 5000) {
      const until = Date.now() + ms;
      while (frames.filter((f) => f.id).length < n) {
        if (Date.now() > until) throw new Error(`expected ${n} events, got ${frames.filter((f) => f.id).length}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return frames.filter((f) => f.id);
    },
  };
  if (res.status !== 200 || !res.body) {
    await res.body?.cancel();
    return sse;
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value;
        let at: number;
        while ((at = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          const frame: Frame = {};
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) frame.comment = line.slice(1).trim();
            else {
              const i = line.indexOf(':');
              (frame as Record<string, string>)[line.slice(0, i)] = line.slice(i + 1).trimStart();
            }
          }
          frames.push(frame);
        }
      }
    } catch {
      // aborted
    }
  })();
  return sse;
}
async function createTask(credential: string, draft: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${s.url}/v1/tasks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${credential}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify({ title: `streamed ${randomUUID()}`, ...draft }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { result: { id: string } }).result.id;
}
const subjectOf = (f: Frame) => (JSON.parse(f.data!) as { subjectId: string }).subjectId;

beforeAll(async () => {
  idp = await startIdp();
  s = await startTestServer({ oauthIssuer: idp.issuer, oauthJwksUrl: idp.jwksUrl });
}, 60_000);
afterAll(async () => {
  await s?.close();
  await idp?.close();
});

describe('events.stream', () => {
  it('sends retry first, then each new event live as id/event/data within a second', async () => {
    const sse = await openSse(s.credentials.operatorKey);
    expect(sse.status).toBe(200);
    expect(sse.contentType).toMatch(/^text\/event-stream/);
    await new Promise((r) => setTimeout(r, 200));
    const started = Date.now();
    const taskId = await createTask(s.credentials.operatorKey, { clientId: s.credentials.clientId });
    const [frame] = await sse.events(1, 1000);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(sse.frames[0]).toEqual({ retry: '5000' });
    expect(frame!.event).toBe('task.created');
    const data = JSON.parse(frame!.data!) as { id: string; subjectId: string; type: string };
    expect(data).toMatchObject({ id: frame!.id, subjectId: taskId, type: 'task.created' });
    sse.close();
  });

  it('a client that reconnects with Last-Event-ID misses nothing and sees nothing twice (and it wins over after)', async () => {
    const first = await openSse(s.credentials.operatorKey);
    await new Promise((r) => setTimeout(r, 200));
    const a = await createTask(s.credentials.operatorKey, { clientId: s.credentials.clientId });
    const [fa] = await first.events(1);
    expect(subjectOf(fa!)).toBe(a);
    first.close();
    const missed = [
      await createTask(s.credentials.operatorKey, { clientId: s.credentials.clientId }),
      await createTask(s.credentials.operatorKey, { clientId: s.credentials.otherClientId }),
    ];
    // `after` names an older event; Last-Event-ID wins.
    const feed = (await (await fetch(`${s.url}/v1/events?pageSize=1`, { headers: { authorization: `Bearer ${s.credentials.operatorKey}` } })).json()) as { items: { id: string }[] };
    const second = await openSse(s.credentials.operatorKey, `?after=${feed.items[0]!.id}`, { 'last-event-id': fa!.id! });
    const resumed = await second.events(2);
    const live = await createTask(s.credentials.operatorKey, { clientId: s.credentials.clientId });
    const all = await second.events(3);
    expect(all.map(subjectOf)).toEqual([...missed, live]);
    expect(new Set(all.map((f) => f.id)).size).toBe(3);
    expect(resumed.map((f) => f.id)).not.toContain(fa!.id);
    second.close();
  });

  const table: { who: string; credential: () => Promise<string>; sees: ('acme' | 'globex' | 'internal')[] }[] = [
    { who: 'operator with all clients (OAuth)', credential: () => token(s.credentials.operatorSub), sees: ['acme', 'globex', 'internal'] },
    { who: 'scoped operator (Acme)', credential: () => token(s.credentials.scopedOperatorSub as string), sees: ['acme', 'internal'] },
    { who: 'client admin of Acme', credential: () => token(s.credentials.clientAdminSub), sees: ['acme'] },
    { who: 'key bound to Acme', credential: async () => s.credentials.serviceKey, sees: ['acme'] },
    { who: 'unbound operator key', credential: async () => s.credentials.operatorKey, sees: ['acme', 'globex'] },
  ];
  it('carries exactly what the feed shows, per principal kind (never another client or an internal event to a client admin or key)', async () => {
    const streams = await Promise.all(table.map(async (row) => ({ row, sse: await openSse(await row.credential(), '?types=task.created') })));
    for (const { sse } of streams) expect(sse.status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    const owner = await token(s.credentials.operatorSub);
    const made = {
      acme: await createTask(s.credentials.operatorKey, { clientId: s.credentials.clientId }),
      globex: await createTask(s.credentials.operatorKey, { clientId: s.credentials.otherClientId }),
      internal: await createTask(owner, {}),
    };
    for (const { row, sse } of streams) {
      const got = await sse.events(row.sees.length);
      await new Promise((r) => setTimeout(r, 300));
      expect(sse.frames.filter((f) => f.id).map(subjectOf), row.who).toEqual(row.sees.map((k) => made[k]));
      sse.close();
      void got;
    }
  });

  it(`caps open streams per credential at ${limits.eventStreamsPerCredential}`, async () => {
    const open: Sse[] = [];
    for (let i = 0; i < limits.eventStreamsPerCredential; i++) open.push(await openSse(s.credentials.serviceKey));
    expect(open.every((o) => o.status === 200)).toBe(true);
    const over = await openSse(s.credentials.serviceKey);
    expect(over.status).toBe(429);
    open.pop()!.close();
    await new Promise((r) => setTimeout(r, 300));
    const again = await openSse(s.credentials.serviceKey);
    expect(again.status).toBe(200);
    for (const o of [...open, again]) o.close();
  });

  it('an unknown Last-Event-ID is 404, a clientId outside the reach is 404', async () => {
    expect((await openSse(s.credentials.serviceKey, '', { 'last-event-id': 'evt_nope' })).status).toBe(404);
    expect((await openSse(s.credentials.serviceKey, `?clientId=${s.credentials.otherClientId}`)).status).toBe(404);
  });
});
