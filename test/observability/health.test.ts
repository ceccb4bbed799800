// Liveness apart from readiness (runtime/observability/health.ts): /v1/health/live answers whenever
// the process does, starting included; /v1/health and /health answer 200 only when the database
// answers, this build's migrations are applied and the workers have started, else 503 unavailable
// naming the failing checks. Then the HAProxy check of docs/observability.md against two servers,
// with the Debian haproxy binary (skipped with a message when it is absent): a server that stops
// being ready is taken out of rotation and comes back when ready again. PGlite, and PostgreSQL when
// DATABASE_URL is set.
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createReadiness } from '../../runtime/observability/health.ts';
import { latestJournalEntry } from '../../runtime/data/migrations-pending.ts';
import { MIGRATIONS_FOLDER } from '../../bin/paths.ts';
import { service } from '../../generated/registry.ts';
import { freshDatabase } from '../support/db.ts';
import { firstAnswer, freePort } from '../support/process.ts';
import { startGatedTestServer, startTestServer, type TestServer } from '../support/server.ts';

const HAPROXY = '/usr/sbin/haproxy';
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c()?.catch(() => undefined);
});

describe('liveness and readiness', () => {
  let s: TestServer;

  it('while starting: live answers 200, ready 503; once started both 200, with every check named', async () => {
    const { port, open, started: starting, closeAuthenticator } = await startGatedTestServer();
    cleanups.push(closeAuthenticator);
    const early = await firstAnswer(`http://127.0.0.1:${port}/v1/health`);
    expect(early.status).toBe(503);
    const live = await fetch(`http://127.0.0.1:${port}/v1/health/live`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: 'ok' });
    open();
    s = await starting;
    cleanups.push(() => s.close());
    for (const path of ['/v1/health', '/health']) {
      const ready = await fetch(`${s.url}${path}`);
      expect(ready.status, path).toBe(200);
      expect(await ready.json()).toEqual({
        status: 'ok',
        contractVersion: service.contractVersion,
        apiVersion: service.apiVersion,
        checks: { database: 'ok', migrations: 'ok', workers: 'ok' },
      });
    }
  });

  it('workers stopping: not ready (503 unavailable naming the check), still alive', async () => {
    s.svc.readiness.setWorkers('stopping');
    try {
      const res = await fetch(`${s.url}/v1/health`);
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(await res.json()).toMatchObject({ code: 'unavailable', detail: 'This process is not ready: workers stopping.', checks: { database: 'ok', migrations: 'ok', workers: 'stopping' } });
      expect((await fetch(`${s.url}/health`)).status).toBe(503);
      expect((await fetch(`${s.url}/v1/health/live`)).status).toBe(200);
    } finally {
      s.svc.readiness.setWorkers('ok');
    }
    expect((await fetch(`${s.url}/v1/health`)).status).toBe(200);
  });

  it('a migration this build has and the database lacks: pending; a database that does not answer: unavailable', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'svc-migrations-'));
    cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
    mkdirSync(join(folder, 'meta'));
    writeFileSync(join(folder, 'meta', '_journal.json'), JSON.stringify({ entries: [{ when: latestJournalEntry(MIGRATIONS_FOLDER) + 60_000 }] }));
    expect(await createReadiness(s.database, folder).check()).toEqual({ ready: false, checks: { database: 'ok', migrations: 'pending', workers: 'ok' } });
    expect(await createReadiness(s.database, MIGRATIONS_FOLDER).check()).toEqual({ ready: true, checks: { database: 'ok', migrations: 'ok', workers: 'ok' } });

    const gone = await freshDatabase();
    await gone.close();
    expect(await createReadiness(gone, MIGRATIONS_FOLDER).check()).toEqual({ ready: false, checks: { database: 'unavailable', migrations: 'unknown', workers: 'ok' } });
  });
});

describe.skipIf(!existsSync(HAPROXY))('HAProxy takes a process out of rotation when it is not ready (docs/observability.md)', () => {
  if (!existsSync(HAPROXY)) console.warn(`skipped: ${HAPROXY} is not installed (apt-get install -y haproxy; .ci/run installs it)`);

  it('the documented check: both up, one not ready goes DOWN and its traffic moves, then it comes back', async () => {
    const a = await startTestServer({ workersEnabled: false });
    cleanups.push(() => a.close());
    const b = await startTestServer({ workersEnabled: false });
    cleanups.push(() => b.close());
    const front = await freePort();
    const stats = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'svc-haproxy-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    // The backend section as docs/observability.md gives it; only the check interval is shortened.
    const cfg = `global
  log stdout format raw local0 err
defaults
  mode http
  timeout connect 2s
  timeout client 10s
  timeout server 10s
frontend api
  bind 127.0.0.1:${front}
  default_backend svc
listen stats
  bind 127.0.0.1:${stats}
  stats enable
  stats uri /stats
backend svc
  balance roundrobin
  option httpchk GET /v1/health
  http-check expect status 200
  default-server inter 200ms fall 2 rise 2
  server a 127.0.0.1:${new URL(a.url).port} check
  server b 127.0.0.1:${new URL(b.url).port} check
`;
    writeFileSync(join(dir, 'haproxy.cfg'), cfg);
    const proxy: ChildProcess = spawn(HAPROXY, ['-f', join(dir, 'haproxy.cfg'), '-db'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let errors = '';
    proxy.stderr!.on('data', (d) => (errors += d));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          if (proxy.exitCode !== null) return resolve();
          proxy.once('exit', () => resolve());
          proxy.kill('SIGTERM');
        }),
    );

    const status = async (): Promise<Record<string, string>> => {
      const csv = await (await fetch(`http://127.0.0.1:${stats}/stats;csv`)).text();
      const out: Record<string, string> = {};
      for (const line of csv.split('\n')) {
        const f = line.split(',');
        if (f[0] === 'svc' && (f[1] === 'a' || f[1] === 'b')) out[f[1]] = f[17]!; // svname, status
      }
      return out;
    };
    const until = async (want: Record<string, string>) => {
      for (let i = 0; i < 150; i++) {
        if (proxy.exitCode !== null) throw new Error(`haproxy exited ${proxy.exitCode}: ${errors}`);
        try {
          if (JSON.stringify(await status()) === JSON.stringify(want)) return;
        } catch {
          // not listening yet
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`haproxy never reported ${JSON.stringify(want)} (last ${JSON.stringify(await status().catch(() => ({})))}): ${errors}`);
    };
    /** n requests through the proxy to /v1/health: all 200 (a server in rotation that is not ready would answer 503). */
    const throughProxy = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const res = await fetch(`http://127.0.0.1:${front}/v1/health`);
        await res.arrayBuffer();
        expect(res.status).toBe(200);
      }
    };

    await until({ a: 'UP', b: 'UP' });
    await throughProxy(4);
    b.svc.readiness.setWorkers('stopping');
    await until({ a: 'UP', b: 'DOWN' });
    // Every request now goes to a (b would answer 503); none fails.
    await throughProxy(6);
    b.svc.readiness.setWorkers('ok');
    await until({ a: 'UP', b: 'UP' });
  });
});
