// The pipeline worker (handlers/workers/pipeline-runs.ts) and the execution state machines on a fresh database
// (PGlite, or PostgreSQL when DATABASE_URL is set): claiming with SKIP LOCKED so two workers never
// run one step twice, resuming a run whose lease lapsed (a step caught mid-way fails the run cleanly,
// finished steps are not repeated), and every allowed and refused transition of requests and jobs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import type { Database } from '../../runtime/data/client.ts';
import { operations } from '../../runtime/data/schema.ts';
import { executionRequests, pipelineRuns, pipelineSteps } from '../../handlers/data/schema.ts';
import { newId } from '../../runtime/data/ids.ts';
import { startPipelineWorker, type PipelineDefinition } from '../../handlers/workers/pipeline-runs.ts';
import {
  acceptExecutionRequest,
  cancelExecutionJob,
  claimExecutionJob,
  declineExecutionRequest,
  finishExecutionJob,
} from '../../handlers/execution.ts';
import { ProblemError } from '../../runtime/problem-error.ts';
import { freshDatabase } from '../support/db.ts';

let database: Database;
const executed: string[] = [];

const pipeline: PipelineDefinition = {
  name: 'three_steps',
  description: 'test pipeline',
  steps: ['a', 'b', 'c'].map((name) => ({
    name,
    async run(ctx) {
      executed.push(`${ctx.run.id}/${name}`);
      await new Promise((r) => setTimeout(r, 5));
      return { step: name, saw: Object.keys(ctx.outputs) };
    },
  })),
};

type RunStatus = (typeof pipelineRuns.$inferInsert)['status'];
type StepStatus = (typeof pipelineSteps.$inferInsert)['status'];

async function insertRun(options: { status?: RunStatus; heartbeatAgoSeconds?: number; steps?: { status: StepStatus; attempts: number; output?: unknown }[] } = {}): Promise<{ runId: string; opId: string }> {
  const runId = newId('run');
  const opId = newId('operation');
  const running = options.status === 'running';
  await database.db.insert(operations).values({
    id: opId,
    kind: 'pipeline_run',
    status: running ? 'running' : 'queued',
    requestedByKind: 'operator',
    requestedById: 'usr_x',
    requestedByCredentialId: 'key_x',
    subjectId: runId,
  });
  await database.db.insert(pipelineRuns).values({
    id: runId,
    clientId: null,
    pipeline: 'three_steps',
    status: options.status ?? 'queued',
    trigger: 'manual',
    operationId: opId,
    parameters: {},
    requestedByKind: 'operator',
    requestedById: 'usr_x',
    requestedByCredentialId: 'key_x',
    claimedBy: running ? 'wrk_dead' : null,
    heartbeatAt: running ? new Date(Date.now() - (options.heartbeatAgoSeconds ?? 0) * 1000) : null,
    startedAt: running ? new Date() : null,
  });
  const steps: { status: StepStatus; attempts: number; output?: unknown }[] = options.steps ?? [0, 1, 2].map(() => ({ status: 'pending' as const, attempts: 0 }));
  await database.db.insert(pipelineSteps).values(
    steps.map((st, position) => ({ runId, position, name: ['a', 'b', 'c'][position]!, status: st.status, attempts: st.attempts, output: st.output ?? null })),
  );
  return { runId, opId };
}

async function stepsOf(runId: string) {
  return database.db.select().from(pipelineSteps).where(eq(pipelineSteps.runId, runId)).orderBy(pipelineSteps.position);
}

async function runRow(runId: string) {
  const [row] = await database.db.select().from(pipelineRuns).where(eq(pipelineRuns.id, runId));
  return row!;
}

async function opRow(opId: string) {
  const [row] = await database.db.select().from(operations).where(eq(operations.id, opId));
  return row!;
}

beforeAll(async () => {
  database = await freshDatabase();
}, 60_000);
afterAll(async () => {
  await database?.close();
});

describe('pipeline worker', () => {
  it('two workers draining together run every step exactly once', async () => {
    const runs = await Promise.all(Array.from({ length: 6 }, () => insertRun()));
    executed.length = 0;
    const w1 = startPipelineWorker({ database, definitions: [pipeline], pollMs: 3_600_000 });
    const w2 = startPipelineWorker({ database, definitions: [pipeline], pollMs: 3_600_000 });
    const [n1, n2] = await Promise.all([w1.drain(), w2.drain()]);
    await Promise.all([w1.stop(), w2.stop()]);
    expect(n1 + n2).toBe(6);
    expect(executed).toHaveLength(18);
    expect(new Set(executed).size).toBe(18);
    for (const { runId, opId } of runs) {
      expect((await runRow(runId)).status).toBe('succeeded');
      expect((await stepsOf(runId)).map((st) => [st.status, st.attempts])).toEqual([
        ['succeeded', 1],
        ['succeeded', 1],
        ['succeeded', 1],
      ]);
      const op = await opRow(opId);
      expect(op).toMatchObject({ status: 'succeeded', progress: 100 });
      expect((op.result as { runId: string }).runId).toBe(runId);
    }
    const [last] = (await stepsOf(runs[0]!.runId)).slice(-1);
    expect(last!.output).toEqual({ step: 'c', saw: ['a', 'b'] });
  });

  it('a run whose worker died mid-step is failed cleanly on resume: the step is not run again', async () => {
    const { runId, opId } = await insertRun({
      status: 'running',
      heartbeatAgoSeconds: 120,
      steps: [
        { status: 'succeeded', attempts: 1, output: { step: 'a' } },
        { status: 'running', attempts: 1 },
        { status: 'pending', attempts: 0 },
      ],
    });
    executed.length = 0;
    const w = startPipelineWorker({ database, definitions: [pipeline], pollMs: 3_600_000, leaseSeconds: 5 });
    expect(await w.drain()).toBe(1);
    await w.stop();
    expect(executed).toEqual([]);
    const run = await runRow(runId);
    expect(run.status).toBe('failed');
    expect((run.error as { detail: string }).detail).toMatch(/interrupted/);
    expect((await stepsOf(runId)).map((st) => [st.status, st.attempts])).toEqual([
      ['succeeded', 1],
      ['failed', 1],
      ['skipped', 0],
    ]);
    expect((await opRow(opId)).status).toBe('failed');
  });

  it('a run whose worker died between steps resumes after the finished ones', async () => {
    const { runId } = await insertRun({
      status: 'running',
      heartbeatAgoSeconds: 120,
      steps: [
        { status: 'succeeded', attempts: 1, output: { step: 'a' } },
        { status: 'pending', attempts: 0 },
        { status: 'pending', attempts: 0 },
      ],
    });
    executed.length = 0;
    const w = startPipelineWorker({ database, definitions: [pipeline], pollMs: 3_600_000, leaseSeconds: 5 });
    expect(await w.drain()).toBe(1);
    await w.stop();
    expect(executed).toEqual([`${runId}/b`, `${runId}/c`]);
    expect((await runRow(runId)).status).toBe('succeeded');
    expect((await stepsOf(runId)).map((st) => st.attempts)).toEqual([1, 1, 1]);
  });

  it('a run under a live lease is left to its worker', async () => {
    const { runId } = await insertRun({ status: 'running', heartbeatAgoSeconds: 0, steps: [{ status: 'running', attempts: 1 }, { status: 'pending', attempts: 0 }, { status: 'pending', attempts: 0 }] });
    const w = startPipelineWorker({ database, definitions: [pipeline], pollMs: 3_600_000, leaseSeconds: 60 });
    expect(await w.drain()).toBe(0);
    await w.stop();
    expect((await runRow(runId)).status).toBe('running');
    await database.db.update(pipelineRuns).set({ status: 'failed' }).where(eq(pipelineRuns.id, runId));
  });

  it('a run of a pipeline no longer registered fails with not_found', async () => {
    const { runId } = await insertRun();
    const w = startPipelineWorker({ database, definitions: [], pollMs: 3_600_000 });
    expect(await w.drain()).toBe(1);
    await w.stop();
    const run = await runRow(runId);
    expect(run.status).toBe('failed');
    expect((run.error as { code: string }).code).toBe('not_found');
  });
});

describe('execution state machines', () => {
  async function request(): Promise<string> {
    const id = newId('exr');
    await database.db.insert(executionRequests).values({
      id,
      kind: 'report',
      title: 't',
      instructions: 'i',
      status: 'pending',
      requestedByKind: 'operator',
      requestedById: 'usr_x',
      requestedByCredentialId: 'key_x',
    });
    return id;
  }
  const code = async (p: Promise<unknown>) => {
    try {
      await p;
      return 'ok';
    } catch (e) {
      return e instanceof ProblemError ? e.code : String(e);
    }
  };

  it('requests: pending -> accepted | declined | cancelled; nothing leaves a final state', async () => {
    const a = await request();
    const { request: accepted, job } = await database.transaction((tx) => acceptExecutionRequest(tx, a));
    expect(accepted).toMatchObject({ status: 'accepted', jobId: job.id });
    expect(accepted.decidedAt).not.toBeNull();
    expect(job).toMatchObject({ status: 'queued', requestId: a, runner: null });
    const d = await request();
    expect((await database.transaction((tx) => declineExecutionRequest(tx, d))).status).toBe('declined');
    const c = await request();
    expect((await database.transaction((tx) => declineExecutionRequest(tx, c, 'cancelled'))).status).toBe('cancelled');
    for (const id of [a, d, c]) {
      expect(await code(database.transaction((tx) => acceptExecutionRequest(tx, id)))).toBe('invalid_transition');
      expect(await code(database.transaction((tx) => declineExecutionRequest(tx, id)))).toBe('invalid_transition');
      expect(await code(database.transaction((tx) => declineExecutionRequest(tx, id, 'cancelled')))).toBe('invalid_transition');
    }
    expect(await code(database.transaction((tx) => acceptExecutionRequest(tx, 'exr_missing')))).toBe('not_found');
  });

  it('jobs: queued -> running -> succeeded | failed; queued or running -> cancelled; runners never share a job', async () => {
    await database.execute(`update execution_jobs set status = 'cancelled'`);
    const jobs: string[] = [];
    for (let i = 0; i < 4; i++) {
      const id = await request();
      jobs.push((await database.transaction((tx) => acceptExecutionRequest(tx, id))).job.id);
    }
    // Two runners claim at once: four distinct jobs, then none.
    const claims = await Promise.all([0, 1, 2, 3, 4].map((i) => database.transaction((tx) => claimExecutionJob(tx, `runner_${i % 2}`))));
    const claimed = claims.filter((j) => j !== null);
    expect(claimed).toHaveLength(4);
    expect(new Set(claimed.map((j) => j!.id))).toEqual(new Set(jobs));
    expect(claimed.every((j) => j!.status === 'running' && j!.startedAt !== null)).toBe(true);
    const [j1, j2, j3, j4] = claimed as NonNullable<(typeof claimed)[number]>[];
    const other = j1!.runner === 'runner_0' ? 'runner_1' : 'runner_0';
    expect(await code(database.transaction((tx) => finishExecutionJob(tx, j1!.id, other, { ok: true, result: {} })))).toBe('conflict');
    const ok = await database.transaction((tx) => finishExecutionJob(tx, j1!.id, j1!.runner!, { ok: true, result: { rows: 3 } }));
    expect(ok).toMatchObject({ status: 'succeeded', result: { rows: 3 }, error: null });
    const failed = await database.transaction((tx) => finishExecutionJob(tx, j2!.id, j2!.runner!, { ok: false, detail: 'boom' }));
    expect(failed.status).toBe('failed');
    expect((failed.error as { detail: string }).detail).toBe('boom');
    const cancelled = await database.transaction((tx) => cancelExecutionJob(tx, j3!.id));
    expect(cancelled.status).toBe('cancelled');
    expect((await database.transaction((tx) => cancelExecutionJob(tx, j3!.id))).finishedAt).toEqual(cancelled.finishedAt);
    for (const id of [j1!.id, j2!.id]) {
      expect(await code(database.transaction((tx) => cancelExecutionJob(tx, id)))).toBe('invalid_transition');
      expect(await code(database.transaction((tx) => finishExecutionJob(tx, id, 'runner_0', { ok: true, result: {} })))).toBe('invalid_transition');
    }
    expect(await code(database.transaction((tx) => finishExecutionJob(tx, j3!.id, j3!.runner!, { ok: true, result: {} })))).toBe('invalid_transition');
    expect((await database.transaction((tx) => cancelExecutionJob(tx, j4!.id))).status).toBe('cancelled');
    // A queued job is cancelled before any runner claims it.
    const last = await request();
    const queued = (await database.transaction((tx) => acceptExecutionRequest(tx, last))).job;
    expect((await database.transaction((tx) => cancelExecutionJob(tx, queued.id))).status).toBe('cancelled');
    expect(await database.transaction((tx) => claimExecutionJob(tx, 'runner_0'))).toBeNull();
  });
});
