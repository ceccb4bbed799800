// Webhooks end to end with a real receiver on loopback that verifies every delivery with
// standardwebhooks' Webhook.verify: creation shows the secret once, deliveries by the worker,
// :test synchronous and outside the feed, both signatures during a rotation overlap, the whole retry
// schedule on an injected clock against a receiver that is down, then replay; management visibility.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { eq } from 'drizzle-orm';
import { startIdp, type TestIdp } from '../support/idp.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { startWebhookWorker } from '../../runtime/events/webhooks/worker.ts';
import { RETRY_DELAYS_MS } from '../../runtime/events/webhooks/deliveries.ts';
import { webhookUrlProblem } from '../../runtime/events/webhooks/ssrf.ts';
import { webhookAttempts, webhookSecrets } from '../../runtime/data/schema.ts';

process.env.SVC_WEBHOOK_ALLOW_PRIVATE = 'true';

interface Received {
  headers: Record<string, string>;
  body: string;
}
interface Receiver {
  url: string;
  got: Received[];
  status: number;
  close(): Promise<void>;
}
async function startReceiver(): Promise<Receiver> {
  const r = { got: [] as Received[], status: 204 } as Receiver;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      r.got.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(r.status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  r.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return r;
}
function verify(secret: string, m: Received): { id: string; type: string; subjectId: string } {
  return new Webhook(secret).verify(m.body, m.headers) as { id: string; type: string; subjectId: string };
}
async function waitFor<T>(fn: () => T | undefined | false, ms = 5000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > until) throw new Error('waitFor: timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

let s: TestServer;
let idp: TestIdp;
let rx: Receiver;
const SIGN_IN = 'openid email profile';
const token = (sub: string) => idp.issueToken({ sub, aud: `${s.config.baseUrl}/mcp`, scope: SIGN_IN, client_id: s.credentials.oauthClientId });

async function call(server: TestServer, credential: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const h: Record<string, string> = { authorization: `Bearer ${credential}`, ...headers };
  if (body !== undefined) h['content-type'] = 'application/json';
  if (method === 'POST' && !h['idempotency-key']) h['idempotency-key'] = randomUUID();
  const res = await fetch(`${server.url}${path}`, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, any>) : {} };
}
async function createTask(server: TestServer, clientId: string): Promise<string> {
  const res = await call(server, server.credentials.operatorKey, 'POST', '/v1/tasks', { title: `hooked ${randomUUID()}`, clientId });
  expect(res.status).toBe(201);
  return res.body.result.id as string;
}

beforeAll(async () => {
  idp = await startIdp();
  rx = await startReceiver();
  s = await startTestServer({ oauthIssuer: idp.issuer, oauthJwksUrl: idp.jwksUrl });
}, 60_000);
afterAll(async () => {
  await s?.close();
  await idp?.close();
  await rx?.close();
});

describe('webhooks', () => {
  let endpointId: string;
  let secret: string;

  it('creates an endpoint (secret once, stored sealed) and the worker delivers each event, verifiable with the secret', async () => {
    const owner = await token(s.credentials.operatorSub);
    const created = await call(s, owner, 'POST', '/v1/webhook-endpoints', { url: rx.url, eventTypes: ['task.created'], clientId: s.credentials.clientId });
    expect(created.status).toBe(201);
    secret = created.body.result.secret;
    endpointId = created.body.result.id;
    expect(secret).toMatch(/^whsec_/);
    const [stored] = await s.database.db.select().from(webhookSecrets).where(eq(webhookSecrets.endpointId, endpointId));
    expect(stored!.sealed).not.toContain(secret.slice(6));
    const got = await call(s, owner, 'GET', `/v1/webhook-endpoints/${endpointId}`);
    expect(got.status).toBe(200);
    expect(got.body.secret).toBeUndefined();

    const before = rx.got.length;
    const taskId = await createTask(s, s.credentials.clientId);
    await createTask(s, s.credentials.otherClientId); // another client: never delivered to this endpoint
    const msg = await waitFor(() => rx.got[before]);
    const event = verify(secret, msg);
    expect(event.subjectId).toBe(taskId);
    expect(msg.headers['webhook-id']).toBe(event.id);
    await new Promise((r) => setTimeout(r, 500));
    expect(rx.got.length).toBe(before + 1);
    const list = await call(s, owner, 'GET', `/v1/webhook-endpoints/${endpointId}/deliveries`);
    expect(list.body.items.map((d: { eventId: string; status: string }) => [d.eventId, d.status])).toEqual([[event.id, 'succeeded']]);
  });

  it(':test delivers synchronously, test: true, and the sample is not in the feed', async () => {
    const owner = await token(s.credentials.operatorSub);
    const before = rx.got.length;
    const res = await call(s, owner, 'POST', `/v1/webhook-endpoints/${endpointId}:test`, {});
    expect(res.status).toBe(200);
    expect(res.body.result).toMatchObject({ test: true, status: 'succeeded', attempts: 1, responseStatus: 204 });
    expect(rx.got.length).toBe(before + 1);
    const sample = verify(secret, rx.got[before]!);
    expect(sample.id).toBe(res.body.result.eventId);
    const feed = await call(s, owner, 'GET', '/v1/events?pageSize=200');
    expect(feed.body.items.map((e: { id: string }) => e.id)).not.toContain(sample.id);
  });

  it('a dry-run :test calls nobody', async () => {
    const owner = await token(s.credentials.operatorSub);
    const before = rx.got.length;
    const res = await call(s, owner, 'POST', `/v1/webhook-endpoints/${endpointId}:test`, {}, { prefer: 'dry-run' });
    expect(res.status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.got.length).toBe(before);
  });

  it('after a rotation each delivery carries both signatures: it verifies with the old and with the new secret', async () => {
    const owner = await token(s.credentials.operatorSub);
    const rotated = await call(s, owner, 'POST', `/v1/webhook-endpoints/${endpointId}:rotate-secret`, {});
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.result.secret as string;
    expect(fresh).not.toBe(secret);
    const before = rx.got.length;
    const taskId = await createTask(s, s.credentials.clientId);
    const msg = await waitFor(() => rx.got[before]);
    expect(msg.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(verify(secret, msg).subjectId).toBe(taskId);
    expect(verify(fresh, msg).subjectId).toBe(taskId);
    expect(() => verify(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, msg)).toThrow();
    secret = fresh;
  });

  it('update needs If-Match; a disabled endpoint gets no deliveries; bad URLs are validation_failed on /url', async () => {
    const owner = await token(s.credentials.operatorSub);
    const current = await call(s, owner, 'GET', `/v1/webhook-endpoints/${endpointId}`);
    expect((await call(s, owner, 'PATCH', `/v1/webhook-endpoints/${endpointId}`, { status: 'disabled' })).status).toBe(428);
    const off = await call(s, owner, 'PATCH', `/v1/webhook-endpoints/${endpointId}`, { status: 'disabled' }, { 'if-match': current.body.etag });
    expect(off.status).toBe(200);
    expect(off.body.result.status).toBe('disabled');
    const before = rx.got.length;
    await createTask(s, s.credentials.clientId);
    await new Promise((r) => setTimeout(r, 600));
    expect(rx.got.length).toBe(before);
    const bad = await call(s, owner, 'POST', '/v1/webhook-endpoints', { url: 'ftp://127.0.0.1/x', eventTypes: ['task.created'] });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].pointer).toBe('/url');
  });

  it('management visibility: a scoped operator reaches Acme endpoints only; a bound key finds nothing; an unbound endpoint is its owner’s', async () => {
    const owner = await token(s.credentials.operatorSub);
    const globex = await call(s, owner, 'POST', '/v1/webhook-endpoints', { url: rx.url, eventTypes: ['task.created'], clientId: s.credentials.otherClientId });
    const unbound = await call(s, owner, 'POST', '/v1/webhook-endpoints', { url: rx.url, eventTypes: ['task.completed'] });
    expect(unbound.body.result.clientId).toBeNull();
    const scoped = await token(s.credentials.scopedOperatorSub as string);
    expect((await call(s, scoped, 'GET', `/v1/webhook-endpoints/${endpointId}`)).status).toBe(200);
    expect((await call(s, scoped, 'GET', `/v1/webhook-endpoints/${globex.body.result.id}`)).status).toBe(404);
    expect((await call(s, scoped, 'GET', `/v1/webhook-endpoints/${unbound.body.result.id}`)).status).toBe(404);
    const listed = await call(s, scoped, 'GET', '/v1/webhook-endpoints');
    expect(listed.body.items.map((e: { id: string }) => e.id)).toEqual([endpointId]);
    const key = await call(s, s.credentials.serviceKey, 'GET', '/v1/webhook-endpoints');
    expect(key.status).toBe(404); // outside the audience: the operation does not exist for a bound key
    // Two credentials of one owner: the unbound operator key manages the same endpoints as its owner's sign-in.
    const viaKey = await call(s, s.credentials.operatorKey, 'GET', '/v1/webhook-endpoints?pageSize=200');
    const viaOauth = await call(s, owner, 'GET', '/v1/webhook-endpoints?pageSize=200');
    expect(viaKey.body.items.map((e: { id: string }) => e.id).sort()).toEqual(viaOauth.body.items.map((e: { id: string }) => e.id).sort());
    expect((await call(s, owner, 'DELETE', `/v1/webhook-endpoints/${globex.body.result.id}`)).status).toBe(200);
    expect((await call(s, owner, 'GET', `/v1/webhook-endpoints/${globex.body.result.id}`)).status).toBe(404);
  });

  it("the demo client admin manages its client's endpoints (seeded webhooks:manage), never another client's", async () => {
    const ca = await token(s.credentials.clientAdminSub);
    // No clientId: a client admin of one client gets an endpoint bound to it.
    const made = await call(s, ca, 'POST', '/v1/webhook-endpoints', { url: rx.url, eventTypes: ['task.created'] });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.result).toMatchObject({ clientId: s.credentials.clientId, secret: expect.stringMatching(/^whsec_/) });
    const mine = await call(s, ca, 'GET', '/v1/webhook-endpoints?pageSize=200');
    expect(mine.status).toBe(200);
    const ids = mine.body.items.map((e: { id: string; clientId: string }) => e.id);
    expect(ids).toContain(made.body.result.id);
    expect(ids).toContain(endpointId); // the operator's Acme endpoint is Acme's
    expect(mine.body.items.every((e: { clientId: string }) => e.clientId === s.credentials.clientId)).toBe(true);
    const other = await call(s, ca, 'POST', '/v1/webhook-endpoints', { url: rx.url, eventTypes: ['task.created'], clientId: s.credentials.otherClientId });
    expect(other.status).toBe(404);
    expect((await call(s, ca, 'DELETE', `/v1/webhook-endpoints/${made.body.result.id}`)).status).toBe(200);
  });
});

describe('retry schedule on an injected clock, then replay', () => {
  let t: TestServer;
  let down: Receiver;
  afterAll(async () => {
    await t?.close();
    await down?.close();
  });

  it('a receiver down for the whole schedule gets exactly the recorded attempts, the delivery ends failed, replay delivers it once', async () => {
    down = await startReceiver();
    down.status = 503;
    t = await startTestServer({ webhookWorker: false });
    let clock = Date.now();
    const worker = startWebhookWorker({ db: t.database.db, now: () => new Date(clock) }, false);
    try {
      const created = await call(t, t.credentials.operatorKey, 'POST', '/v1/webhook-endpoints', { url: down.url, eventTypes: ['task.created'] });
      expect(created.status).toBe(201);
      const id = created.body.result.id as string;
      const hookSecret = created.body.result.secret as string;
      await createTask(t, t.credentials.clientId);
      const gaps: number[] = [];
      let last = clock;
      for (let i = 0; i < RETRY_DELAYS_MS.length; i++) {
        await worker.runOnce();
        expect(down.got.length).toBe(i + 1);
        gaps.push(clock - last);
        last = clock;
        // Just before the next attempt is due nothing is sent; at the due time it is.
        const next = RETRY_DELAYS_MS[i + 1];
        if (next === undefined) break;
        clock += next - 1;
        await worker.runOnce();
        expect(down.got.length).toBe(i + 1);
        clock += 1;
      }
      expect(gaps).toEqual(RETRY_DELAYS_MS);
      clock += 86_400_000;
      await worker.runOnce();
      expect(down.got.length).toBe(RETRY_DELAYS_MS.length);
      for (const m of down.got) verify(hookSecret, m);
      expect(new Set(down.got.map((m) => m.headers['webhook-id'])).size).toBe(1);
      const deliveries = await call(t, t.credentials.operatorKey, 'GET', `/v1/webhook-endpoints/${id}/deliveries`);
      const d = deliveries.body.items[0];
      expect(d).toMatchObject({ status: 'failed', attempts: 8, responseStatus: 503, nextAttemptAt: null });
      const history = await t.database.db.select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, d.id));
      expect(history.map((h) => h.attempt).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);

      down.status = 200;
      const replayed = await call(t, t.credentials.operatorKey, 'POST', `/v1/webhook-endpoints/${id}/deliveries/${d.id}:replay`, {});
      expect(replayed.status).toBe(200);
      expect(replayed.body.result.status).toBe('pending');
      const again = await call(t, t.credentials.operatorKey, 'POST', `/v1/webhook-endpoints/${id}/deliveries/${d.id}:replay`, {});
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('invalid_transition');
      await worker.runOnce();
      await worker.runOnce();
      expect(down.got.length).toBe(RETRY_DELAYS_MS.length + 1);
      expect(down.got.at(-1)!.headers['webhook-id']).toBe(down.got[0]!.headers['webhook-id']);
      verify(hookSecret, down.got.at(-1)!);
      const after = await call(t, t.credentials.operatorKey, 'GET', `/v1/webhook-endpoints/${id}/deliveries/`.slice(0, -1));
      expect(after.body.items[0]).toMatchObject({ status: 'succeeded', attempts: 9, responseStatus: 200 });
    } finally {
      await worker.stop();
    }
  }, 60_000);
});

describe('SSRF guard', () => {
  it('refuses private, loopback, link-local and non-https targets without SVC_WEBHOOK_ALLOW_PRIVATE', async () => {
    for (const url of ['http://example.com/x', 'https://127.0.0.1/x', 'https://10.1.2.3/x', 'https://192.168.0.1/', 'https://169.254.169.254/latest', 'https://[::1]/x', 'https://[fe80::1]/x', 'https://[::ffff:127.0.0.1]/x', 'https://user:pw@93.184.216.34/']) {
      expect(await webhookUrlProblem(url, false), url).not.toBeNull();
    }
    expect(await webhookUrlProblem('https://93.184.216.34/hook', false)).toBeNull();
    expect(await webhookUrlProblem('http://127.0.0.1:9/hook', true)).toBeNull();
    expect(await webhookUrlProblem('http://10.0.0.1/hook', true)).not.toBeNull();
  });
});
