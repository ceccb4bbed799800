// A tenant's webhook receiver that accepts the connection and never answers must not hold back anyone's
// events (issue 39): webhooks.endpoint.test commits its pending delivery and sends after the commit
// (ctx.afterCommit), so while two :test calls hang on the receiver, a task created for the same client
// and one for another client are in GET /v1/events within 2 s. On PostgreSQL no connection of the
// database is idle in a transaction meanwhile (the feed publishes only below the oldest open
// transaction); on PGlite, whose one connection a held transaction would block, the writes themselves
// would wait. When the receiver's 10 s attempt timeout ends the calls, each delivery is recorded
// failed with the timeout, and a replay of the same Idempotency-Key returns that recorded answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startIdp, type TestIdp } from '../support/idp.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { startSilentServer, type SilentServer } from '../support/silent-server.ts';
import { longIdleTransactions } from '../support/idle-transactions.ts';

process.env.SVC_WEBHOOK_ALLOW_PRIVATE = 'true';

let s: TestServer;
let idp: TestIdp;
let silent: SilentServer;
let silentUrl: string;

async function call(credential: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const h: Record<string, string> = { authorization: `Bearer ${credential}`, ...headers };
  if (body !== undefined) h['content-type'] = 'application/json';
  if (method === 'POST' && !h['idempotency-key']) h['idempotency-key'] = randomUUID();
  const res = await fetch(`${s.url}${path}`, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, any>) : {} };
}

beforeAll(async () => {
  idp = await startIdp();
  silent = await startSilentServer();
  silentUrl = `http://127.0.0.1:${silent.port}/hook`;
  s = await startTestServer({ oauthIssuer: idp.issuer, oauthJwksUrl: idp.jwksUrl });
}, 60_000);

afterAll(async () => {
  await silent?.close();
  await s?.close();
  await idp?.close();
});

describe('a receiver that never answers', () => {
  it("holds back no tenant's events while :test calls hang on it; each is recorded failed with the timeout", async () => {
    const admin = await idp.issueToken({ sub: s.credentials.clientAdminSub, aud: `${s.config.baseUrl}/mcp`, scope: 'openid email profile', client_id: s.credentials.oauthClientId });
    const created = await call(admin, 'POST', '/v1/webhook-endpoints', { url: silentUrl, eventTypes: ['task.created'], clientId: s.credentials.clientId });
    expect(created.status).toBe(201);
    const endpointId = created.body.result.id as string;

    const keys = [randomUUID(), randomUUID()];
    const started = Date.now();
    const hanging = keys.map((key) => call(admin, 'POST', `/v1/webhook-endpoints/${endpointId}:test`, {}, { 'idempotency-key': key }));
    hanging.forEach((p) => p.catch(() => undefined)); // awaited below; a failure before that is not unhandled
    await waitUntil(() => silent.sockets.length >= 2, 5_000); // both POSTs reached the receiver and wait on it

    const mine = await call(s.credentials.operatorKey, 'POST', '/v1/tasks', { title: 'beside a hanging :test', clientId: s.credentials.clientId });
    const theirs = await call(s.credentials.operatorKey, 'POST', '/v1/tasks', { title: 'another tenant', clientId: s.credentials.otherClientId });
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    const written = Date.now();
    const wanted = [mine.body.result.id, theirs.body.result.id];

    for (;;) {
      const feed = await call(s.credentials.operatorKey, 'GET', '/v1/events?types=task.created&pageSize=200');
      expect(feed.status).toBe(200);
      const seen = (feed.body.items as { subjectId: string }[]).map((e) => e.subjectId);
      expect(await longIdleTransactions(s.database)).toEqual([]);
      if (wanted.every((id) => seen.includes(id))) break;
      expect(Date.now() - written, `both task.created events in the feed within 2 s (seen: ${seen.join(', ')})`).toBeLessThan(2_000);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(Date.now() - started, 'the :test calls were still waiting on the receiver').toBeLessThan(9_000);

    const answers = await Promise.all(hanging);
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.body.result).toMatchObject({ test: true, status: 'failed', attempts: 1, responseStatus: null, error: 'timeout after 10 s' });
    }
    // The stored idempotent answer is the one the caller got (the outcome recorded after the commit).
    const replay = await call(admin, 'POST', `/v1/webhook-endpoints/${endpointId}:test`, {}, { 'idempotency-key': keys[0]! });
    expect(replay.body.result).toEqual(answers[0]!.body.result);
    const history = await call(admin, 'GET', `/v1/webhook-endpoints/${endpointId}/deliveries?pageSize=50`);
    const tests = (history.body.items as { test: boolean; status: string }[]).filter((d) => d.test);
    expect(tests.map((d) => d.status)).toEqual(['failed', 'failed']);
  }, 60_000);
});

async function waitUntil(fn: () => boolean, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > until) throw new Error('waitUntil: timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
