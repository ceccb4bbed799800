// kill -9 of `svc serve` in the middle of a pipeline run, then a restart (issue 12): the real server
// in a child process with its pipeline worker on, on a PGlite data directory (without DATABASE_URL)
// or a fresh PostgreSQL database (with it: CI's PostgreSQL pass). The restarted worker takes the run over once the dead
// worker's lease lapses and ends it cleanly: the step the crash interrupted is failed, never run
// twice; nothing stays running. On PostgreSQL, two server processes share one queue and never run
// one step twice.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Database } from '../../runtime/data/client.ts';
import { operations } from '../../runtime/data/schema.ts';
import { pipelineRuns, pipelineSteps } from '../../handlers/data/schema.ts';
import { newId } from '../../runtime/data/ids.ts';
import { freshPostgresDatabase } from '../support/db.ts';
import { preparedDataDir } from '../support/prepared.ts';
import { freePort, runSvc as run, serveSvc, stopped } from '../support/process.ts';

const LEASE = 2;
/** svc serve with this suite's short worker lease. */
const serve = (env: Record<string, string>, port: number) => serveSvc({ ...env, SVC_WORKER_LEASE_SECONDS: String(LEASE) }, port);

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

interface Seeded {
  operatorKey: string;
  operatorKeyId: string;
  operatorUserId: string;
  clientId: string;
}

/** Queues task_digest runs as the operator key would have (run, steps, operation). */
async function queueRuns(database: Database, seeded: Seeded, n: number, pauseMs: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const runId = newId('run');
    const opId = newId('operation');
    const requester = { requestedByKind: 'operator', requestedById: seeded.operatorUserId, requestedByCredentialId: seeded.operatorKeyId };
    await database.db.insert(operations).values({ id: opId, kind: 'pipeline_run', status: 'queued', subjectId: runId, ...requester });
    await database.db.insert(pipelineRuns).values({
      id: runId,
      clientId: seeded.clientId,
      pipeline: 'task_digest',
      status: 'queued',
      trigger: 'manual',
      operationId: opId,
      parameters: { pauseMs },
      ...requester,
    });
    await database.db.insert(pipelineSteps).values(['collect', 'summarize', 'report'].map((name, position) => ({ runId, position, name, status: 'pending' as const })));
    ids.push(runId);
  }
  return ids;
}

async function getRun(base: string, key: string, id: string): Promise<any> {
  const res = await fetch(`${base}/v1/pipeline-runs/${id}`, { headers: { authorization: `Bearer ${key}` } });
  expect(res.status).toBe(200);
  return res.json();
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const v = await fn();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function crashMidRun(store: { env: Record<string, string>; open: () => Promise<Database>; keepOpen: boolean }) {
  const seeded = JSON.parse((await run(['seed', '--json'], store.env)).trim().split('\n').at(-1)!) as Seeded;
  let database = await store.open();
  const [runId] = await queueRuns(database, seeded, 1, 1500);
  if (!store.keepOpen) await database.close(); // PGlite: one process per data directory
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const first = await serve(store.env, port);
  cleanups.push(() => stopped(first, 'SIGKILL'));

  // kill -9 while the second step runs.
  await until('the summarize step to run', async () => {
    const r = await getRun(base, seeded.operatorKey, runId!);
    return r.steps[1].status === 'running' ? r : undefined;
  });
  await stopped(first, 'SIGKILL');

  const second = await serve(store.env, port);
  cleanups.push(() => stopped(second, 'SIGKILL'));
  const finished = await until('the run to end', async () => {
    const r = await getRun(base, seeded.operatorKey, runId!);
    return r.status === 'running' || r.status === 'queued' ? undefined : r;
  });
  expect(finished.status).toBe('failed');
  expect(finished.steps.map((x: any) => x.status)).toEqual(['succeeded', 'failed', 'skipped']);
  expect(finished.steps[1].error.detail).toMatch(/interrupted/);
  const op = await (await fetch(`${base}/v1/operations/${finished.operationId}`, { headers: { authorization: `Bearer ${seeded.operatorKey}` } })).json();
  expect(op.status).toBe('failed');
  await stopped(second, 'SIGTERM');

  if (!store.keepOpen) database = await store.open();
  try {
    const steps = await database.execute<{ name: string; attempts: number }>(`select name, attempts from pipeline_steps where run_id = '${runId}' order by position`);
    expect(steps).toEqual([
      { name: 'collect', attempts: 1 },
      { name: 'summarize', attempts: 1 },
      { name: 'report', attempts: 0 },
    ]);
    const stuck = await database.execute(`select id from pipeline_runs where status = 'running' union all select id from operations where status = 'running'`);
    expect(stuck).toEqual([]);
    const started = await database.execute<{ step: string; n: number }>(
      `select step, count(*)::int as n from pipeline_events where run_id = '${runId}' and type = 'step_started' group by step order by step`,
    );
    expect(started).toEqual([
      { step: 'collect', n: 1 },
      { step: 'summarize', n: 1 },
    ]);
  } finally {
    await database.close();
  }
}

describe('kill -9 of the server mid-run', () => {
  // Each engine in its own CI pass: the PGlite case where DATABASE_URL is unset, the PostgreSQL one where it is set.
  it.skipIf(Boolean(process.env.DATABASE_URL))('PGlite: the restarted worker fails the interrupted run cleanly; no step runs twice', async () => {
    const dataDir = await preparedDataDir(mkdtempSync(join(tmpdir(), 'svc-pipeline-crash-')));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const env = { SVC_DATA_DIR: dataDir, DATABASE_URL: '' };
    await crashMidRun({ env, open: () => openDatabase({ databaseUrl: null, dataDir }), keepOpen: false });
  }, 240_000);

  it.runIf(Boolean(process.env.DATABASE_URL))('PostgreSQL: the same, and two server processes never run one step twice', async () => {
    const fresh = await freshPostgresDatabase(process.env.DATABASE_URL!);
    cleanups.push(() => fresh.drop());
    const env = { DATABASE_URL: fresh.url };
    await crashMidRun({ env, open: () => openDatabase({ databaseUrl: fresh.url, dataDir: '' }), keepOpen: true });

    // Two processes, one queue.
    const database = await openDatabase({ databaseUrl: fresh.url, dataDir: '' });
    try {
      const seeded = JSON.parse((await run(['seed', '--json'], env)).trim().split('\n').at(-1)!) as Seeded;
      const ids = await queueRuns(database, seeded, 8, 100);
      const [p1, p2] = [await freePort(), await freePort()];
      const a = await serve(env, p1);
      cleanups.push(() => stopped(a, 'SIGKILL'));
      const b = await serve(env, p2);
      cleanups.push(() => stopped(b, 'SIGKILL'));
      await until('every run to succeed', async () => {
        const rows = await database.execute<{ n: number }>(
          `select count(*)::int as n from pipeline_runs where id in (${ids.map((i) => `'${i}'`).join(',')}) and status = 'succeeded'`,
        );
        return rows[0]!.n === ids.length ? true : undefined;
      });
      await Promise.all([stopped(a, 'SIGTERM'), stopped(b, 'SIGTERM')]);
      const attempts = await database.execute<{ attempts: number }>(
        `select attempts from pipeline_steps where run_id in (${ids.map((i) => `'${i}'`).join(',')})`,
      );
      expect(attempts).toHaveLength(24);
      expect(attempts.every((r) => r.attempts === 1)).toBe(true);
      const started = await database.execute<{ n: number }>(
        `select count(*)::int as n from pipeline_events where type = 'step_started' and run_id in (${ids.map((i) => `'${i}'`).join(',')})`,
      );
      expect(started[0]!.n).toBe(24);
    } finally {
      await database.close();
    }
  }, 240_000);
});
