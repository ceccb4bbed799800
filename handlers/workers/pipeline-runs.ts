// The pipeline worker: executes queued pipeline runs step by step, in the server process by
// default (SVC_WORKERS=false turns it off). Work is claimed from the database with
// FOR UPDATE SKIP LOCKED, so any number of processes share it; a claim is a lease renewed by a
// heartbeat, and a run whose holder stopped heartbeating (a crash, kill -9) is claimed again.
//
// "No step runs twice": a step is marked running (attempts + 1) in a committed transaction before
// its body runs. A resumed run finds a step still `running` — its worker died mid-step, and whether
// the body's effects happened is unknown — and fails the run cleanly instead of running it again;
// steps already succeeded are kept, steps not begun are skipped. A partial re-run
// (pipeline.run.rerun_partial) is how a person repeats it.
//
// Cancellation (operations.cancel) marks the run's operation cancelled; the worker moves the run to
// `cancelled` at the next step boundary, and what was done stays done.
import { randomBytes } from 'node:crypto';
import { and, asc, eq, sql } from 'drizzle-orm';
import type { Database, Db } from '../../runtime/data/client.ts';
import { executeRows } from '../../runtime/data/client.ts';
import { operations } from '../../runtime/data/schema.ts';
import { pipelineEvents, pipelineRuns, pipelineSteps } from '../data/schema.ts';
import { newId } from '../../runtime/data/ids.ts';
import { errorSummary, logLine } from '../../runtime/observability/log.ts';
import { problemRecord } from '../../runtime/problem-documents.ts';
import type { BackgroundWorker } from '../../runtime/workers.ts';

export type PipelineLevel = PipelineEventRow['level'];
/** A pipeline event's type (the contract's PipelineEvent.type). */
export type PipelineEventType = PipelineEventRow['type'];
type PipelineEventRow = typeof pipelineEvents.$inferInsert;
export const LEVEL_RANK: Record<PipelineLevel, number> = { debug: 0, info: 1, warning: 2, error: 3 };

export interface PipelineStepContext {
  /** The database (not a transaction): a step's writes commit on their own. */
  db: Db;
  run: { id: string; clientId: string | null; pipeline: string; parameters: Record<string, unknown> };
  /** Outputs of the steps before this one (this run's, or the parent's for a partial re-run). */
  outputs: Readonly<Record<string, unknown>>;
  /** Writes a `log` pipeline event for this step. */
  log(level: PipelineLevel, message: string, data?: Record<string, unknown>): Promise<void>;
}

export interface PipelineStepDef {
  name: string;
  run(ctx: PipelineStepContext): Promise<Record<string, unknown>>;
}

export interface PipelineDefinition {
  name: string;
  description: string;
  steps: readonly PipelineStepDef[];
}

type RunRow = typeof pipelineRuns.$inferSelect;

/** Writes one pipeline event (same transaction as the state change it records). */
export async function writePipelineEvent(
  db: Db,
  run: Pick<RunRow, 'id' | 'clientId'>,
  event: { type: PipelineEventType; level: PipelineLevel; message: string; step?: string | null; data?: Record<string, unknown>; at?: Date },
): Promise<void> {
  await db.insert(pipelineEvents).values({
    id: newId('pev'),
    runId: run.id,
    clientId: run.clientId,
    step: event.step ?? null,
    type: event.type,
    level: event.level,
    levelRank: LEVEL_RANK[event.level],
    message: event.message,
    data: event.data ?? {},
    ...(event.at ? { occurredAt: event.at } : {}),
  });
}

export interface WorkerOptions {
  database: Database;
  definitions: readonly PipelineDefinition[];
  /** How often an idle worker looks for work (ms). */
  pollMs?: number;
  /** A claim not renewed for this long is taken over by another worker (seconds). */
  leaseSeconds?: number;
  log?: (message: string) => void;
  /** The service's base URL, for the `type` of problems kept on runs and operations. */
  baseUrl?: string;
}

export interface Worker {
  readonly id: string;
  /** Claims and executes runs until none is left (tests and the poll loop). */
  drain(): Promise<number>;
  stop(): Promise<void>;
}

export function startPipelineWorker(options: WorkerOptions): Worker {
  const { database } = options;
  const id = `wrk_${process.pid}_${randomBytes(4).toString('hex')}`;
  const leaseSeconds = options.leaseSeconds ?? 30; // not a contract limit
  const pollMs = options.pollMs ?? 500; // not a contract limit
  const baseUrl = options.baseUrl ?? '';
  const byName = new Map(options.definitions.map((d) => [d.name, d]));
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let busy: Promise<unknown> = Promise.resolve();
  let draining = false;

  /** Claims one run: queued, or running under a lapsed lease. */
  async function claim(): Promise<RunRow | null> {
    return database.transaction(async (tx) => {
      const rows = await executeRows<{ id: string }>(
        tx,
        sql`select id from pipeline_runs
            where status = 'queued'
               or (status = 'running' and (heartbeat_at is null or heartbeat_at < now() - make_interval(secs => ${leaseSeconds})))
            order by created_at, id limit 1 for update skip locked`,
      );
      const runId = rows[0]?.id;
      if (!runId) return null;
      const [before] = await tx.select().from(pipelineRuns).where(eq(pipelineRuns.id, runId));
      if (!before) return null;
      const [run] = await tx
        .update(pipelineRuns)
        .set({ status: 'running', claimedBy: id, heartbeatAt: sql`now()`, startedAt: before.startedAt ?? sql`now()` })
        .where(eq(pipelineRuns.id, runId))
        .returning();
      if (before.status === 'queued') {
        await writePipelineEvent(tx, run!, { type: 'run_started', level: 'info', message: `Run of ${run!.pipeline} started` });
        if (run!.operationId) {
          await tx
            .update(operations)
            .set({ status: 'running', updatedAt: sql`now()` })
            .where(and(eq(operations.id, run!.operationId), eq(operations.status, 'queued')));
        }
      } else {
        await writePipelineEvent(tx, run!, { type: 'log', level: 'warning', message: 'Run resumed by another worker after its lease lapsed' });
      }
      return run!;
    });
  }

  /** Ends the run (in tx): the run, its not-finished steps, its operation and an event. */
  async function finish(tx: Db, run: RunRow, status: 'succeeded' | 'failed' | 'cancelled', error: Record<string, unknown> | null, outputs: Record<string, unknown>): Promise<void> {
    await tx
      .update(pipelineSteps)
      .set({ status: 'skipped', finishedAt: sql`now()` })
      .where(and(eq(pipelineSteps.runId, run.id), eq(pipelineSteps.status, 'pending')));
    await tx
      .update(pipelineRuns)
      .set({ status, finishedAt: sql`now()`, error, claimedBy: null, heartbeatAt: null })
      .where(eq(pipelineRuns.id, run.id));
    if (run.operationId) {
      await tx
        .update(operations)
        .set({
          status,
          progress: status === 'succeeded' ? 100 : sql`${operations.progress}`,
          result: status === 'succeeded' ? { runId: run.id, outputs } : null,
          error,
          updatedAt: sql`now()`,
          finishedAt: sql`coalesce(${operations.finishedAt}, now())`,
        })
        .where(and(eq(operations.id, run.operationId), sql`${operations.status} in ('queued', 'running')`));
    }
    const level: PipelineLevel = status === 'failed' ? 'error' : status === 'cancelled' ? 'warning' : 'info';
    await writePipelineEvent(tx, run, { type: `run_${status}`, level, message: `Run ${status}`, data: error ? { error } : {} });
  }

  type Boundary = { kind: 'step'; step: typeof pipelineSteps.$inferSelect; outputs: Record<string, unknown> } | { kind: 'done' };

  /** At a step boundary (in one transaction holding the run row): cancel, fail, finish, or begin the next step. */
  async function boundary(runId: string, def: PipelineDefinition | undefined): Promise<Boundary> {
    return database.transaction(async (tx) => {
      const rows = await executeRows<{ id: string }>(tx, sql`select id from pipeline_runs where id = ${runId} for update`);
      if (rows.length === 0) return { kind: 'done' };
      const [run] = await tx.select().from(pipelineRuns).where(eq(pipelineRuns.id, runId));
      if (!run || run.status !== 'running' || run.claimedBy !== id) return { kind: 'done' }; // taken over or finished
      await tx.update(pipelineRuns).set({ heartbeatAt: sql`now()` }).where(eq(pipelineRuns.id, runId));
      const steps = await tx.select().from(pipelineSteps).where(eq(pipelineSteps.runId, runId)).orderBy(asc(pipelineSteps.position));
      const outputs: Record<string, unknown> = {};
      for (const s of steps) if (s.output !== null && (s.status === 'succeeded' || s.status === 'skipped')) outputs[s.name] = s.output;
      if (!def) {
        await finish(tx, run, 'failed', problemRecord('not_found', `No pipeline named ${run.pipeline} is registered`, baseUrl), outputs);
        return { kind: 'done' };
      }
      if (run.operationId) {
        const [op] = await tx.select({ status: operations.status }).from(operations).where(eq(operations.id, run.operationId));
        if (op?.status === 'cancelled') {
          await finish(tx, run, 'cancelled', null, outputs);
          return { kind: 'done' };
        }
      }
      const interrupted = steps.find((s) => s.status === 'running');
      if (interrupted) {
        const error = problemRecord('internal_error', `Step ${interrupted.name} was interrupted (its worker stopped); it is not run twice. Re-run from it with pipeline.run.rerun_partial.`, baseUrl);
        await tx
          .update(pipelineSteps)
          .set({ status: 'failed', finishedAt: sql`now()`, error })
          .where(and(eq(pipelineSteps.runId, runId), eq(pipelineSteps.position, interrupted.position)));
        await writePipelineEvent(tx, run, { type: 'step_failed', level: 'error', step: interrupted.name, message: `Step ${interrupted.name} was interrupted` });
        await finish(tx, run, 'failed', error, outputs);
        return { kind: 'done' };
      }
      const next = steps.find((s) => s.status === 'pending');
      if (!next) {
        await finish(tx, run, 'succeeded', null, outputs);
        return { kind: 'done' };
      }
      const [begun] = await tx
        .update(pipelineSteps)
        .set({ status: 'running', startedAt: sql`now()`, attempts: sql`${pipelineSteps.attempts} + 1` })
        .where(and(eq(pipelineSteps.runId, runId), eq(pipelineSteps.position, next.position), eq(pipelineSteps.status, 'pending')))
        .returning();
      await writePipelineEvent(tx, run, { type: 'step_started', level: 'debug', step: next.name, message: `Step ${next.name} started` });
      return { kind: 'step', step: begun!, outputs };
    });
  }

  async function execute(run: RunRow): Promise<void> {
    const def = byName.get(run.pipeline);
    const heartbeat = setInterval(() => {
      void database
        .execute(sql`update pipeline_runs set heartbeat_at = now() where id = ${run.id} and claimed_by = ${id}`)
        .catch(() => undefined);
    }, Math.max(200, (leaseSeconds * 1000) / 3));
    try {
      for (;;) {
        if (stopped) return; // the lease lapses; another worker resumes the run
        const b = await boundary(run.id, def);
        if (b.kind === 'done') return;
        const stepDef = def!.steps.find((s) => s.name === b.step.name);
        let output: Record<string, unknown> | null = null;
        let error: Record<string, unknown> | null = null;
        try {
          if (!stepDef) throw new Error(`The pipeline has no step named ${b.step.name}`);
          output = await stepDef.run({
            db: database.db,
            run: { id: run.id, clientId: run.clientId, pipeline: run.pipeline, parameters: (run.parameters ?? {}) as Record<string, unknown> },
            outputs: b.outputs,
            log: (level, message, data) => writePipelineEvent(database.db, run, { type: 'log', level, step: b.step.name, message, data }),
          });
        } catch (err) {
          error = problemRecord('internal_error', `Step ${b.step.name} failed: ${err instanceof Error ? err.message : String(err)}`, baseUrl);
        }
        await database.transaction(async (tx) => {
          const [current] = await tx.select().from(pipelineRuns).where(eq(pipelineRuns.id, run.id));
          if (!current || current.claimedBy !== id) return;
          await tx
            .update(pipelineSteps)
            .set({ status: error ? 'failed' : 'succeeded', finishedAt: sql`now()`, output, error })
            .where(and(eq(pipelineSteps.runId, run.id), eq(pipelineSteps.position, b.step.position)));
          await writePipelineEvent(tx, current, {
            type: error ? 'step_failed' : 'step_succeeded',
            level: error ? 'error' : 'info',
            step: b.step.name,
            message: error ? String(error.detail) : `Step ${b.step.name} succeeded`,
          });
          const steps = await tx.select({ status: pipelineSteps.status }).from(pipelineSteps).where(eq(pipelineSteps.runId, run.id));
          const done = steps.filter((s) => s.status === 'succeeded' || s.status === 'skipped').length;
          if (current.operationId) {
            await tx
              .update(operations)
              .set({ progress: Math.min(99, Math.floor((done * 100) / Math.max(1, steps.length))), updatedAt: sql`now()` })
              .where(and(eq(operations.id, current.operationId), eq(operations.status, 'running')));
          }
          if (error) await finish(tx, current, 'failed', error, b.outputs);
        });
        if (error) return;
      }
    } finally {
      clearInterval(heartbeat);
    }
  }

  async function drain(): Promise<number> {
    if (draining) return 0;
    draining = true;
    let n = 0;
    try {
      while (!stopped) {
        const run = await claim();
        if (!run) break;
        n++;
        await execute(run);
      }
    } finally {
      draining = false;
    }
    return n;
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      busy = drain()
        .catch((err) => options.log?.(logLine('error', 'pipeline_worker_failed', { worker: id, error: errorSummary(err) })))
        .finally(schedule);
    }, pollMs);
    timer.unref?.();
  }
  schedule();

  return {
    id,
    drain,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await busy.catch(() => undefined);
    },
  };
}

/**
 * The pipeline runner as a background worker of the registry (bin/wiring.ts): every served process
 * with workers on runs one over the registered pipelines (none: it does nothing).
 */
export function pipelineRunWorker(definitions: readonly PipelineDefinition[]): BackgroundWorker {
  return {
    name: 'pipeline-runs',
    start: ({ database, config, log }) =>
      definitions.length === 0
        ? { stop: async () => undefined }
        : startPipelineWorker({ database, definitions, leaseSeconds: config.workerLeaseSeconds, baseUrl: config.baseUrl, log }),
  };
}
