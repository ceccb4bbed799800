// The per-credential rate limit shared through Redis (REDIS_URL, runtime/http/headers/shared-rate-limit.ts).
// Two real `svc serve` processes on one database (PostgreSQL with DATABASE_URL; otherwise two copies
// of one seeded PGlite directory, so both know the same key) and one Redis: a credential gets the
// limit once across both, not once per process. Skipped when Redis does not answer on REDIS_URL
// (default redis://127.0.0.1:6379), like the PostgreSQL suites. And Redis down: the limiter fails
// open to the per-process window with one warning (no Redis needed for that one).
import { afterAll, describe, expect, it } from 'vitest';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshPostgresDatabase } from '../support/db.ts';
import { preparedDataDir } from '../support/prepared.ts';
import { redisCredentialLimiter } from '../../runtime/http/headers/shared-rate-limit.ts';
import { redisAnswers } from '../support/redis.ts';
import { freePort, runSvc, serveSvc, stopped } from '../support/process.ts';

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await Promise.resolve(c()).catch(() => undefined);
});

const redisUp = await redisAnswers(REDIS_URL);

async function serve(env: Record<string, string>): Promise<string> {
  const port = await freePort();
  const child = await serveSvc(env, port);
  cleanups.push(() => stopped(child, 'SIGTERM'));
  return `http://127.0.0.1:${port}`;
}

describe('rate limit shared through Redis', () => {
  it.runIf(redisUp)('two svc serve processes give a credential the limit once', async () => {
    const limit = 10;
    const common = { SVC_RATE_LIMIT_PER_MINUTE: String(limit), REDIS_URL, SVC_WORKERS: 'false' };
    let envA: Record<string, string>;
    let envB: Record<string, string>;
    if (process.env.DATABASE_URL) {
      const fresh = await freshPostgresDatabase(process.env.DATABASE_URL);
      cleanups.push(() => fresh.drop());
      envA = envB = { ...common, DATABASE_URL: fresh.url };
    } else {
      const a = await preparedDataDir(mkdtempSync(join(tmpdir(), 'svc-rl-a-')));
      const b = mkdtempSync(join(tmpdir(), 'svc-rl-b-'));
      cleanups.push(() => rmSync(a, { recursive: true, force: true }), () => rmSync(b, { recursive: true, force: true }));
      envA = { ...common, DATABASE_URL: '', SVC_DATA_DIR: a };
      envB = { ...common, DATABASE_URL: '', SVC_DATA_DIR: b };
    }
    const seeded = await runSvc(['seed', '--json'], envA);
    const { operatorKey } = JSON.parse(seeded.trim().split('\n').at(-1)!) as { operatorKey: string };
    if (!process.env.DATABASE_URL) cpSync(envA.SVC_DATA_DIR!, envB.SVC_DATA_DIR!, { recursive: true });
    const [a, b] = await Promise.all([serve(envA), serve(envB)]);

    const seen: { status: number; remaining: string | null }[] = [];
    for (let i = 0; i < limit + 2; i++) {
      const res = await fetch(`${i % 2 === 0 ? a : b}/v1/meta`, { headers: { authorization: `Bearer ${operatorKey}` } });
      await res.arrayBuffer();
      seen.push({ status: res.status, remaining: res.headers.get('x-ratelimit-remaining') });
    }
    // One window across both processes: remaining counts down 9..0 alternating between them, then 429s.
    expect(seen.map((s) => s.status)).toEqual([...Array(limit).fill(200), 429, 429]);
    expect(seen.slice(0, limit).map((s) => Number(s.remaining))).toEqual(Array.from({ length: limit }, (_, i) => limit - 1 - i));
  }, 180_000);
});

describe('Redis down', () => {
  it('fails open to the per-process window and logs one warning', async () => {
    const port = await freePort(); // nothing listens there
    const lines: string[] = [];
    const limiter = redisCredentialLimiter({ url: `redis://127.0.0.1:${port}`, limit: 3, windowSeconds: 60, log: (l) => lines.push(l) });
    cleanups.push(() => limiter.close());
    const decisions = [];
    for (let i = 0; i < 5; i++) decisions.push(await limiter.take('cred:test'));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0, 0]);
    await new Promise((r) => setTimeout(r, 300));
    const warnings = lines.map((l) => JSON.parse(l) as { event: string; level: string }).filter((l) => l.event === 'rate_limit_redis_unavailable');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.level).toBe('warn');
  });
});
