// Two `svc serve` processes on one PostgreSQL database (runs when DATABASE_URL is set): 1,000 events
// give exactly 1,000 deliveries per endpoint, none twice and none lost (claims are FOR UPDATE SKIP
// LOCKED); an SSE client on process A receives an event written through process B within a second;
// after a kill -9 of A in the middle of deliveries, B finishes the work with nothing lost once A's
// claims lapse. Every delivery is verified with standardwebhooks.
import { afterAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { freshPostgresDatabase } from '../support/db.ts';
import { freePort, runSvc as run, serveSvc } from '../support/process.ts';
import { openSse } from '../support/sse.ts';

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

async function serve(env: Record<string, string>): Promise<{ child: ChildProcess; base: string }> {
  const port = await freePort();
  const child = await serveSvc(env, port);
  cleanups.push(async () => void child.kill('SIGKILL'));
  return { child, base: `http://127.0.0.1:${port}` };
}
async function until(fn: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('webhooks and the stream across two processes', () => {
  it.runIf(Boolean(process.env.DATABASE_URL))('exactly once per endpoint, live SSE across processes, kill -9 loses nothing', async () => {
    const fresh = await freshPostgresDatabase(process.env.DATABASE_URL!);
    cleanups.push(() => fresh.drop());
    const env = { DATABASE_URL: fresh.url, SVC_RATE_LIMIT_PER_MINUTE: '100000', SVC_WEBHOOK_ALLOW_PRIVATE: 'true' };
    const seeded = JSON.parse((await run(['seed', '--json'], env)).trim().split('\n').at(-1)!) as { operatorKey: string; clientId: string };

    // The receiver: counts every delivery per (endpoint path, webhook-id), verifying each signature.
    const secrets = new Map<string, string>();
    const got = new Map<string, Map<string, number>>();
    let delayMs = 0;
    let bad = 0;
    const receiver = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url!;
        try {
          new Webhook(secrets.get(path)!).verify(Buffer.concat(chunks).toString('utf8'), req.headers as Record<string, string>);
        } catch {
          bad++;
        }
        const per = got.get(path) ?? new Map<string, number>();
        got.set(path, per);
        const id = req.headers['webhook-id'] as string;
        setTimeout(() => {
          per.set(id, (per.get(id) ?? 0) + 1);
          res.writeHead(204).end();
        }, delayMs);
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => receiver.close(() => r())));
    const rxBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

    const a = await serve(env);
    const b = await serve(env);
    const call = async (base: string, path: string, body: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${seeded.operatorKey}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        body: JSON.stringify(body),
      });
      const json = (await res.json()) as { result: Record<string, unknown> };
      expect(res.status).toBe(201);
      return json.result;
    };
    for (const path of ['/one', '/two']) {
      const ep = await call(a.base, '/v1/webhook-endpoints', { url: `${rxBase}${path}`, eventTypes: ['task.created'] });
      secrets.set(path, ep.secret as string);
    }

    // SSE on A, an event written through B: received within a second.
    const sse = await openSse(`${a.base}/v1/events:stream`, seeded.operatorKey);
    const seen = (id: string) => sse.frames.some((f) => f.data?.includes(id));
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    const viaB = (await call(b.base, '/v1/tasks', { title: 'written through B', clientId: seeded.clientId })).id as string;
    await until(() => seen(viaB), 1000, 'the SSE client on A sees the event written through B');
    expect(Date.now() - started).toBeLessThan(1000);
    sse.close();

    // 1,000 more events, written half through each process: 1,001 deliveries per endpoint, each once.
    const batch = (i: number) => ({ tasks: Array.from({ length: 100 }, (_, j) => ({ title: `load ${i}-${j}`, clientId: seeded.clientId })) });
    for (let i = 0; i < 10; i++) await call(i % 2 ? b.base : a.base, '/v1/tasks:batch', batch(i));
    const total = (path: string) => got.get(path)?.size ?? 0;
    await until(() => total('/one') === 1001 && total('/two') === 1001, 90_000, '1,001 deliveries per endpoint');
    await new Promise((r) => setTimeout(r, 1000));
    for (const path of ['/one', '/two']) {
      expect(total(path)).toBe(1001);
      expect([...got.get(path)!.values()].every((n) => n === 1)).toBe(true);
    }
    expect(bad).toBe(0);

    // kill -9 of A in the middle of deliveries: B finishes everything once A's claims lapse.
    delayMs = 20;
    for (let i = 0; i < 2; i++) await call(b.base, '/v1/tasks:batch', batch(100 + i));
    await until(() => total('/one') > 1001 + 20, 30_000, 'deliveries under way');
    a.child.kill('SIGKILL');
    await until(() => total('/one') === 1201 && total('/two') === 1201, 120_000, 'B finishes the work after kill -9 of A');
    expect(bad).toBe(0);
  }, 300_000);
});
