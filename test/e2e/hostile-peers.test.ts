// Peers that accept and never answer hold back no other tenant's events (issue 39). One server, with
// every hostile peer at once, real sockets:
// - Acme's client admin calls webhooks.endpoint.test in a loop from two connections on an endpoint
//   that accepts and never answers (the endpoint also subscribes to Acme's task.created, so the
//   webhook worker has deliveries hanging on it too);
// - the e-mail outbox sends to an SMTP server that accepts and never says a word;
// - the file worker's storage read of a registered upload never returns.
// Throughout, each task.created of another client (Globex) reaches GET /v1/events, an open SSE stream
// and Globex's own webhook receiver within 2 s of the write, and (PostgreSQL) no connection of the
// database is idle in a transaction.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startIdp, type TestIdp } from '../support/idp.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { openSse, type Sse } from '../support/sse.ts';
import { startSilentServer, type SilentServer } from '../support/silent-server.ts';
import { LocalFileStore, type FileStore } from '../../runtime/files/store.ts';
import { longIdleTransactions } from '../support/idle-transactions.ts';

process.env.SVC_WEBHOOK_ALLOW_PRIVATE = 'true';

let s: TestServer;
let idp: TestIdp;
let hook: SilentServer;
let smtp: SilentServer;
let receiver: HttpServer;
const received: string[] = [];
let receiverUrl: string;
let dataDir: string;
let storageReads = 0;
let releaseStorage!: () => void;
const storageGate = new Promise<void>((r) => (releaseStorage = r));

beforeAll(async () => {
  idp = await startIdp();
  hook = await startSilentServer();
  smtp = await startSilentServer();
  receiver = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { subjectId: string }).subjectId);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  dataDir = mkdtempSync(join(tmpdir(), 'svc-hostile-'));
  const local = new LocalFileStore(dataDir);
  const hanging: FileStore = {
    put: (k, b, m) => local.put(k, b, m),
    read: async (k) => {
      storageReads++;
      await storageGate; // a storage read that does not return while the test runs
      return local.read(k);
    },
    stream: (k) => local.stream(k),
    exists: (k) => local.exists(k),
    remove: (k) => local.remove(k),
  };
  s = await startTestServer({
    oauthIssuer: idp.issuer,
    oauthJwksUrl: idp.jwksUrl,
    smtpUrl: `smtp://127.0.0.1:${smtp.port}`,
    app: { fileStore: hanging, workerIntervalMs: 200 },
  });
}, 60_000);

afterAll(async () => {
  releaseStorage();
  await hook?.close();
  await smtp?.close();
  await s?.close();
  await idp?.close();
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function call(credential: string, method: string, path: string, body?: unknown) {
  const headers: Record<string, string> = { authorization: `Bearer ${credential}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method === 'POST') headers['idempotency-key'] = randomUUID();
  const res = await fetch(`${s.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, any>) : {} };
}

async function waitUntil(what: string, fn: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > until) throw new Error(`waited ${ms} ms for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('hostile peers', () => {
  it("a hanging webhook receiver, SMTP server and storage read hold back no other tenant's events", async () => {
    const token = (sub: string) => idp.issueToken({ sub, aud: `${s.config.baseUrl}/mcp`, scope: 'openid email profile', client_id: s.credentials.oauthClientId });
    const admin = await token(s.credentials.clientAdminSub);
    const operator = await token(s.credentials.operatorSub);
    const key = s.credentials.operatorKey;
    const acme = s.credentials.clientId;
    const globex = s.credentials.otherClientId;

    // Acme's endpoint that never answers; Globex's that does.
    const silent = await call(admin, 'POST', '/v1/webhook-endpoints', { url: `http://127.0.0.1:${hook.port}/hook`, eventTypes: ['task.created'], clientId: acme });
    expect(silent.status).toBe(201);
    const fine = await call(operator, 'POST', '/v1/webhook-endpoints', { url: receiverUrl, eventTypes: ['task.created'], clientId: globex });
    expect(fine.status).toBe(201);

    // The SMTP server: a queued e-mail the outbox loop sends to it.
    await s.database.execute(
      `insert into outbound_messages (id, channel, recipient, subject, body, status, not_before) values ('obm_hostile', 'email', 'a@example.com', 's', 'b', 'queued', now() - interval '1 minute')`,
    );
    // The storage: an upload registered, whose scan reads bytes that never come.
    const bytes = Buffer.from('Legal name: Hostile Storage\n');
    const up = (await call(key, 'POST', '/v1/files:upload-url', { name: 'h.txt', contentType: 'text/plain', sizeBytes: bytes.length, clientId: acme })).body.result;
    expect((await fetch(up.url, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: bytes })).status).toBe(200);
    expect((await call(key, 'POST', '/v1/files', { uploadId: up.uploadId })).status).toBe(201);

    // :test in a loop from two connections, for as long as the test runs.
    let looping = true;
    const tests = [0, 1].map(async () => {
      let calls = 0;
      while (looping) {
        const res = await call(admin, 'POST', `/v1/webhook-endpoints/${silent.body.result.id}:test`, {}).catch(() => null);
        if (res) expect(res.status).toBe(200);
        calls++;
      }
      return calls;
    });
    const stream: Sse = await openSse(`${s.url}/v1/events:stream?types=task.created&clientId=${globex}`, key);
    expect(stream.status).toBe(200);
    try {
      await waitUntil('both :test calls to hang on the receiver', () => hook.sockets.length >= 2, 5_000);
      await waitUntil('the outbox to wait on the SMTP server', () => smtp.sockets.length >= 1, 10_000);
      await waitUntil('the scan to wait on storage', () => storageReads >= 1, 5_000);

      for (let round = 0; round < 3; round++) {
        // An Acme event for the silent endpoint (the worker's delivery hangs too), then Globex's.
        expect((await call(key, 'POST', '/v1/tasks', { title: `acme ${round}`, clientId: acme })).status).toBe(201);
        const created = await call(key, 'POST', '/v1/tasks', { title: `globex ${round}`, clientId: globex });
        expect(created.status).toBe(201);
        const taskId = created.body.result.id as string;
        const written = Date.now();
        const inFeed = async () => {
          const feed = await call(key, 'GET', `/v1/events?types=task.created&clientId=${globex}&pageSize=200`);
          return (feed.body.items as { subjectId: string }[]).some((e) => e.subjectId === taskId);
        };
        const seen = { feed: -1, stream: -1, webhook: -1 };
        await waitUntil(`Globex's task.created (round ${round}) in the feed, the stream and the webhook`, async () => {
          if (seen.feed < 0 && (await inFeed())) seen.feed = Date.now() - written;
          if (seen.stream < 0 && stream.frames.some((f) => f.data?.includes(taskId))) seen.stream = Date.now() - written;
          if (seen.webhook < 0 && received.includes(taskId)) seen.webhook = Date.now() - written;
          return seen.feed >= 0 && seen.stream >= 0 && seen.webhook >= 0;
        }, 10_000);
        expect(seen.feed, 'feed').toBeLessThan(2_000);
        expect(seen.stream, 'SSE stream').toBeLessThan(2_000);
        expect(seen.webhook, 'webhook receiver').toBeLessThan(2_000);
        expect(await longIdleTransactions(s.database)).toEqual([]);
      }
      // The peers were still hanging all along.
      expect(storageReads).toBe(1);
      expect(received.filter((id) => id.startsWith('tsk_')).length).toBe(3);
    } finally {
      looping = false;
      stream.close();
      releaseStorage();
      for (const socket of [...hook.sockets, ...smtp.sockets]) socket.destroy();
    }
    const calls = await Promise.all(tests);
    expect(calls.every((n) => n >= 1)).toBe(true);
  }, 90_000);
});
