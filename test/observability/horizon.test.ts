// The events feed's horizon, observable (issue 39, part B). A foreign transaction (a second connection:
// BEGIN; SELECT pg_current_xact_id(); then idle) holds the feed while tasks of two clients are
// created: the lag metrics move on /metrics, one warning names the holder (its pid and the
// application_name it gave), and when it ends every event arrives once, in order, in GET /v1/events and
// on an SSE stream opened before. Then an abandoned prepared transaction does the same, named by its
// gid, and is ended with ROLLBACK PREPARED. svc's own connections carry their application_name.
//
// Holding the horizon stalls every database of the cluster, so this runs on a PostgreSQL cluster of
// its own (test/support/private-postgres.ts), never on the shared server; skipped where PostgreSQL 15's
// binaries are missing. Short SVC_HORIZON_* settings keep it quick; nothing is timed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { openDatabase } from '../../runtime/data/client.ts';
import { observabilityConfigFrom } from '../../runtime/observability/config.ts';
import { startHorizonWatch } from '../../runtime/observability/horizon-watch.ts';
import { privatePostgresMissing, startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { parseExposition, sampleValue } from '../support/prom-text.ts';
import { openSse, type Sse } from '../support/sse.ts';

const missing = privatePostgresMissing();
if (missing) console.warn(`test/observability/horizon.test.ts skipped: ${missing}`);

const FOREIGN_NAME = 'nightly-report';
const TYPE = 'task.created';

let cluster: PrivatePostgres;
let s: TestServer;
let foreign: ReturnType<typeof postgres>;

beforeAll(async () => {
  if (missing) return;
  cluster = await startPrivatePostgres({ max_prepared_transactions: '4' });
  const url = await cluster.createDatabase('svc_horizon');
  const database = await openDatabase({ databaseUrl: url, dataDir: '' });
  const observability = { ...observabilityConfigFrom({ SVC_HORIZON_WARN_SECONDS: '1', SVC_HORIZON_CHECK_SECONDS: '0.2' }, 8787), metricsPort: 0 };
  s = await startTestServer({ database, observability });
  foreign = postgres(url, { max: 2, onnotice: () => {}, connection: { application_name: FOREIGN_NAME } });
}, 120_000);

afterAll(async () => {
  await foreign?.end({ timeout: 5 });
  await s?.close();
  await cluster?.stop();
});

async function gauges(): Promise<{ lag: number; unpublished: number; session: number; prepared: number }> {
  const res = await fetch(s.metricsUrl!);
  expect(res.status).toBe(200);
  const families = parseExposition(await res.text());
  const value = (name: string, labels: Record<string, string> = {}) => {
    // sampleValue answers 0 for a missing series: a gauge left out (a failed read) must not pass for 0.
    expect(families.get(name)?.samples.some((x) => Object.entries(labels).every(([k, v]) => x.labels[k] === v)), `${name} ${JSON.stringify(labels)}`).toBe(true);
    return sampleValue(families, name, labels);
  };
  return {
    lag: value('svc_events_feed_lag_seconds'),
    unpublished: value('svc_events_feed_unpublished'),
    session: value('svc_events_horizon_holder_age_seconds', { kind: 'session' }),
    prepared: value('svc_events_horizon_holder_age_seconds', { kind: 'prepared' }),
  };
}

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out: ${what} (last: ${JSON.stringify(v)})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function createTasks(n: number, tag: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const clientId = i % 2 === 0 ? s.credentials.clientId : s.credentials.otherClientId;
    const res = await fetch(`${s.url}/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.credentials.operatorKey}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ title: `${tag} ${i}`, clientId }),
    });
    expect(res.status).toBe(201);
    ids.push(((await res.json()) as { result: { id: string } }).result.id);
  }
  return ids;
}

/** Every task.created event in the feed from the start, as (event id, task id), in the feed's order. */
async function feed(): Promise<{ id: string; subjectId: string }[]> {
  const out: { id: string; subjectId: string }[] = [];
  let cursor: string | null = null;
  do {
    const res = await fetch(`${s.url}/v1/events?types=${TYPE}&pageSize=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: { authorization: `Bearer ${s.credentials.operatorKey}` } });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { items: { id: string; subjectId: string }[]; nextCursor: string | null };
    out.push(...page.items.map((e) => ({ id: e.id, subjectId: e.subjectId })));
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

/** The task ids of `tasks` in the order the feed (or a stream) carries them, and how often each. */
function carried(subjectIds: string[], tasks: string[]): { order: string[]; counts: number[] } {
  const order = subjectIds.filter((id) => tasks.includes(id));
  return { order, counts: tasks.map((t) => order.filter((id) => id === t).length) };
}

function streamSubjects(sse: Sse): string[] {
  return sse.frames.flatMap((f) => (f.id && f.data ? [(JSON.parse(f.data) as { subjectId: string }).subjectId] : []));
}

function warnings(): Record<string, unknown>[] {
  return s.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === 'events_horizon_held');
}

describe.skipIf(missing !== null)('the horizon of the events feed, observable (a private PostgreSQL cluster)', () => {
  it("names svc's own connections by role, host and pid", async () => {
    await createTasks(1, 'named');
    const names = await until(
      async () => (await foreign<{ name: string }[]>`select application_name as name from pg_stat_activity where application_name like 'svc:%'`).map((r) => r.name),
      (n) => ['requests', 'workers', 'listener'].every((role) => n.some((name) => name.startsWith(`svc:${role}:`))),
      'svc:requests, svc:workers and svc:listener connections',
    );
    for (const name of names) {
      expect(name).toMatch(new RegExp(`^svc:(requests|workers|listener):[A-Za-z0-9.-]+:${process.pid}$`));
      expect(Buffer.byteLength(name)).toBeLessThanOrEqual(63);
    }
  });

  it('a foreign transaction holds the feed: the lag moves, one warning names it, then every event arrives once, in order', async () => {
    const before = await feed();
    const sse = await openSse(`${s.url}/v1/events:stream?types=${TYPE}`, s.credentials.operatorKey, before.length ? { 'last-event-id': before.at(-1)!.id } : {});
    expect(sse.status).toBe(200);
    const holder = await foreign.reserve();
    try {
      await holder`begin`;
      const [{ pid }] = await holder<{ pid: number }[]>`select pg_backend_pid() as pid`;
      await holder`select pg_current_xact_id()`;

      const tasks = await createTasks(6, 'held');
      // Committed (each POST answered 201) but not published: the feed and the stream hold them back.
      const held = await until(gauges, (g) => g.unpublished >= tasks.length && g.lag > 0 && g.session > 1, 'the lag gauges to move');
      expect(held.prepared).toBe(0);
      expect(carried((await feed()).map((e) => e.subjectId), tasks).order).toEqual([]);

      const [warning] = await until(async () => warnings(), (w) => w.length > 0, 'the warning');
      expect(warning).toMatchObject({
        level: 'warn',
        holderKind: 'session',
        holderPid: pid,
        holderApplicationName: FOREIGN_NAME,
        holderState: 'idle in transaction',
        holderQuery: 'select pg_current_xact_id()',
        holderDatabase: 'svc_horizon',
        thresholdSeconds: 1,
      });
      expect(warning!.heldSeconds).toBeGreaterThanOrEqual(1);
      expect(warning!.unpublishedEvents).toBeGreaterThanOrEqual(tasks.length);
      expect(Date.parse(String(warning!.holderTransactionStart))).toBeLessThanOrEqual(Date.now());
      // Once a minute at most: the watch reads every 0.2 s while the holder stays.
      await new Promise((r) => setTimeout(r, 1_000));
      expect(warnings()).toHaveLength(1);

      await holder`rollback`;
      const published = await until(feed, (f) => tasks.every((t) => f.some((e) => e.subjectId === t)), 'the held events in GET /v1/events');
      expect(carried(published.map((e) => e.subjectId), tasks)).toEqual({ order: tasks, counts: tasks.map(() => 1) });
      expect(published.slice(0, before.length)).toEqual(before);
      await until(async () => streamSubjects(sse), (ids) => tasks.every((t) => ids.includes(t)), 'the held events on the stream');
      expect(carried(streamSubjects(sse), tasks)).toEqual({ order: tasks, counts: tasks.map(() => 1) });
      const after = await until(gauges, (g) => g.unpublished === 0 && g.lag === 0, 'the lag gauges back to 0');
      expect(after.session).toBeLessThan(1);
    } finally {
      sse.close();
      holder.release();
    }
  });

  it('an abandoned prepared transaction holds the feed: the gauge moves, the warning names its gid, ROLLBACK PREPARED ends it', async () => {
    const gid = `svc-test-${randomUUID()}`;
    const logs: string[] = [];
    // A watch of its own (the server's has warned within the minute already).
    const watch = startHorizonWatch({ database: s.database, warnSeconds: 0.5, checkSeconds: 0.1, log: (l) => logs.push(l) });
    const preparer = await foreign.reserve();
    try {
      await preparer`begin`;
      await preparer`select pg_current_xact_id()`;
      await preparer.unsafe(`prepare transaction '${gid}'`);
      preparer.release();
      const tasks = await createTasks(2, 'prepared');
      const held = await until(gauges, (g) => g.prepared > 0.5 && g.unpublished >= tasks.length, 'the prepared gauge to move');
      expect(held.session).toBeLessThan(held.prepared);
      const line = await until(async () => logs.map((l) => JSON.parse(l) as Record<string, unknown>), (l) => l.length > 0, 'the warning');
      expect(line[0]).toMatchObject({ level: 'warn', event: 'events_horizon_held', holderKind: 'prepared', preparedGid: gid, preparedOwner: 'postgres', holderDatabase: 'svc_horizon' });
      expect(line[0]).not.toHaveProperty('holderPid');
      await foreign.unsafe(`rollback prepared '${gid}'`);
      const published = await until(feed, (f) => tasks.every((t) => f.some((e) => e.subjectId === t)), 'the held events in GET /v1/events');
      expect(carried(published.map((e) => e.subjectId), tasks)).toEqual({ order: tasks, counts: [1, 1] });
      await until(gauges, (g) => g.prepared === 0 && g.unpublished === 0, 'the gauges back to 0');
    } finally {
      await watch.stop();
      await foreign.unsafe(`rollback prepared '${gid}'`).catch(() => undefined);
    }
  });
});
