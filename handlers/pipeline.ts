// pipeline.*: runs of registered pipelines (handlers/pipelines.ts), executed by the pipeline worker
// (handlers/workers/pipeline-runs.ts), with their step states and event log.
// Visibility rule 3: a widened operator (OAuth) reads every run and event, client-bound and internal,
// whatever its client scope; everyone else reads their client scope only (internal runs: 404).
// Writes are unchanged: starting or re-running a run needs the client in the caller's own scope, and
// an internal run (no client) is an operator's (validation_failed for anyone else on start).
import { and, asc, eq, getTableColumns, gte, inArray, sql } from 'drizzle-orm';
import type { Db } from '../runtime/data/client.ts';
import { pipelineEvents, pipelineRuns, pipelineSteps } from './data/schema.ts';
import type { HandlerContext, Page } from '../runtime/handler-types.ts';
import { newId } from '../runtime/data/ids.ts';
import { pageKeyColumn, startKeyedPage, startPage } from '../runtime/data/paging.ts';
import { invalidField, notFound, validationFailed } from '../runtime/problem-error.ts';
import { LEVEL_RANK, writePipelineEvent, type PipelineLevel } from './workers/pipeline-runs.ts';
import type { PipelineHandlers } from '../generated/handlers/pipeline.ts';
import type { components } from '../generated/types.ts';
import { toPipelineEvent, toPipelineRun, type PipelineEvent, type PipelineRun, type PipelineRunRow } from './mappers/operation.ts';
import { createOperation } from './operations.ts';
import { findPipeline } from './pipelines.ts';
import { actorName, invalidTransition, requireClient } from './shared.ts';

type Schemas = components['schemas'];

async function withSteps(db: Db, rows: PipelineRunRow[]): Promise<PipelineRun[]> {
  if (rows.length === 0) return [];
  const steps = await db.select().from(pipelineSteps).where(inArray(pipelineSteps.runId, rows.map((r) => r.id)));
  return rows.map((r) => toPipelineRun(r, steps.filter((s) => s.runId === r.id)));
}

/** The run when the caller may read it (rule 3); 404 otherwise. */
async function readableRun(ctx: HandlerContext, id: string): Promise<PipelineRunRow> {
  const [row] = await ctx.db.select().from(pipelineRuns).where(eq(pipelineRuns.id, id));
  if (!row || !ctx.policy.canReadWidenedRow(row)) throw notFound('Pipeline run');
  return row;
}

// ------------------------------------------------------------------------------------------------
// Reads

async function runsList(input: Schemas['PipelineRunsListInput'], ctx: HandlerContext): Promise<Page<PipelineRun>> {
  const { clientId, pipeline, status } = input;
  ctx.policy.assertWidenedReadClientFilter(clientId);
  const page = await startPage(ctx.db, input, 'pipeline.runs.list', { clientId, pipeline, status });
  const rows = await ctx.db
    .select({ ...getTableColumns(pipelineRuns), pageKey: pageKeyColumn(pipelineRuns.createdAt) })
    .from(pipelineRuns)
    .where(
      and(
        ctx.policy.widenedReadWhere(pipelineRuns.clientId),
        clientId !== undefined ? eq(pipelineRuns.clientId, clientId) : undefined,
        pipeline !== undefined ? eq(pipelineRuns.pipeline, pipeline) : undefined,
        status !== undefined ? eq(pipelineRuns.status, status) : undefined,
        page.after(pipelineRuns.createdAt, pipelineRuns.id),
      ),
    )
    .orderBy(...page.orderBy(pipelineRuns.createdAt, pipelineRuns.id))
    .limit(page.fetch);
  const result = page.finish(rows, (r) => r);
  return { items: await withSteps(ctx.db, result.items), nextCursor: result.nextCursor };
}

async function runsGet(input: Schemas['PipelineRunsGetInput'], ctx: HandlerContext): Promise<PipelineRun> {
  const [run] = await withSteps(ctx.db, [await readableRun(ctx, input.run_id)]);
  return run!;
}

/** Oldest first (occurredAt, then the insertion order seq), paged by an opaque cursor; level means this level and above. */
async function eventsList(input: Schemas['PipelineEventsListInput'], ctx: HandlerContext): Promise<Page<PipelineEvent>> {
  const { runId, clientId, level } = input;
  ctx.policy.assertWidenedReadClientFilter(clientId);
  if (runId !== undefined) await readableRun(ctx, runId);
  const page = await startKeyedPage(ctx.db, input, 'pipeline.events.list', { runId, clientId, level });
  const { position } = page;
  const rank = level !== undefined ? LEVEL_RANK[level as PipelineLevel] : undefined;
  if (level !== undefined && rank === undefined) throw invalidField('/level', 'must be debug, info, warning or error');
  const rows = await ctx.db
    .select({ ...getTableColumns(pipelineEvents), pageKey: pageKeyColumn(pipelineEvents.occurredAt) })
    .from(pipelineEvents)
    .where(
      and(
        ctx.policy.widenedReadWhere(pipelineEvents.clientId),
        runId !== undefined ? eq(pipelineEvents.runId, runId) : undefined,
        clientId !== undefined ? eq(pipelineEvents.clientId, clientId) : undefined,
        rank !== undefined ? gte(pipelineEvents.levelRank, rank) : undefined,
        position
          ? sql`(${pipelineEvents.occurredAt}, ${pipelineEvents.seq}) > (${position.ts}::timestamptz, (select e.seq from pipeline_events e where e.id = ${position.id}))`
          : undefined,
      ),
    )
    .orderBy(asc(pipelineEvents.occurredAt), asc(pipelineEvents.seq))
    .limit(page.fetch);
  return page.finish(rows, toPipelineEvent, (last) => ({ ts: last.pageKey, id: last.id }));
}

// ------------------------------------------------------------------------------------------------
// Writes

/** Inserts a queued run with its steps, its operation and a run_queued event. */
async function queueRun(
  ctx: HandlerContext,
  spec: {
    pipeline: string;
    clientId: string | null;
    parameters: Record<string, unknown>;
    trigger: 'manual' | 'rerun';
    parentRunId: string | null;
    /** Steps before this position reuse the parent's outputs (skipped here). */
    reuse?: { fromPosition: number; outputs: Map<number, unknown> };
  },
): Promise<PipelineRun> {
  const def = findPipeline(spec.pipeline)!;
  const runId = newId('run');
  const operation = await createOperation(ctx, 'pipeline_run', runId);
  const [run] = await ctx.db
    .insert(pipelineRuns)
    .values({
      id: runId,
      clientId: spec.clientId,
      pipeline: spec.pipeline,
      status: 'queued',
      trigger: spec.trigger,
      parentRunId: spec.parentRunId,
      operationId: operation.id,
      parameters: spec.parameters,
      requestedByKind: ctx.principal.kind,
      requestedById: ctx.principal.id,
      requestedByName: await actorName(ctx.db, ctx.principal.id),
      requestedByCredentialId: ctx.principal.credentialId,
      createdAt: ctx.now,
    })
    .returning();
  const steps = await ctx.db
    .insert(pipelineSteps)
    .values(
      def.steps.map((s, position) => {
        const reused = spec.reuse !== undefined && position < spec.reuse.fromPosition;
        return {
          runId,
          position,
          name: s.name,
          status: reused ? ('skipped' as const) : ('pending' as const),
          output: reused ? (spec.reuse!.outputs.get(position) ?? null) : null,
          finishedAt: reused ? ctx.now : null,
        };
      }),
    )
    .returning();
  await writePipelineEvent(ctx.db, run!, {
    type: 'run_queued',
    level: 'info',
    message: spec.trigger === 'rerun' ? `Partial re-run of ${spec.parentRunId} queued` : `Run of ${spec.pipeline} queued`,
    data: { operationId: operation.id, ...(spec.parentRunId ? { parentRunId: spec.parentRunId } : {}) },
    at: ctx.now,
  });
  for (const s of steps) {
    if (s.status === 'skipped') {
      await writePipelineEvent(ctx.db, run!, { type: 'step_skipped', level: 'debug', step: s.name, message: `Step ${s.name} reuses the parent run's output`, at: ctx.now });
    }
  }
  return toPipelineRun(run!, steps);
}

/**
 * Tier 2: this body runs once as the proposal's pre-flight (rolled back) and again, as the proposer,
 * when a person approves; every check is made here so the approved run re-checks them.
 */
async function runStart(input: Schemas['PipelineRunStartInput'], ctx: HandlerContext): Promise<PipelineRun> {
  const def = findPipeline(input.pipeline);
  if (!def) throw invalidField('/pipeline', `no pipeline named ${input.pipeline} is registered`);
  let clientId: string | null = null;
  if (input.clientId !== undefined) {
    // Writes keep the client scope (rule 3 widens reads only).
    ctx.policy.assertClientInScope(input.clientId);
    await requireClient(ctx.db, input.clientId);
    clientId = input.clientId;
  } else if (!ctx.policy.widened) {
    throw invalidField('/clientId', 'is required: only an operator may start an internal run');
  }
  const parameters = (input.parameters ?? {}) as Record<string, unknown>;
  const errors = def.checkParameters(parameters);
  if (errors.length > 0) throw validationFailed(errors);
  return queueRun(ctx, { pipeline: def.name, clientId, parameters, trigger: 'manual', parentRunId: null });
}

async function rerunPartial(input: Schemas['PipelineRunRerunPartialInput'], ctx: HandlerContext): Promise<PipelineRun> {
  const [parent] = await ctx.db.select().from(pipelineRuns).where(eq(pipelineRuns.id, input.run_id));
  // Writes are unchanged by rule 3: the parent's client must be in the caller's own scope; an
  // internal run is an operator's.
  const writable = parent && (parent.clientId === null ? ctx.policy.widened : ctx.policy.canReadClient(parent.clientId));
  if (!parent || !writable) throw notFound('Pipeline run');
  if (parent.status === 'queued' || parent.status === 'running') {
    throw invalidTransition(`The run is still ${parent.status}; a partial re-run repeats a finished run.`);
  }
  const def = findPipeline(parent.pipeline);
  if (!def) throw invalidField('/run_id', `the run's pipeline ${parent.pipeline} is no longer registered`);
  const fromPosition = def.steps.findIndex((s) => s.name === input.fromStep);
  if (fromPosition < 0) {
    throw invalidField('/fromStep', `must be a step of ${def.name}: ${def.steps.map((s) => s.name).join(', ')}`);
  }
  const parentSteps = await ctx.db.select().from(pipelineSteps).where(eq(pipelineSteps.runId, parent.id));
  const outputs = new Map<number, unknown>();
  const missing: string[] = [];
  for (let i = 0; i < fromPosition; i++) {
    const s = parentSteps.find((p) => p.position === i);
    if (!s || s.output === null || (s.status !== 'succeeded' && s.status !== 'skipped')) missing.push(def.steps[i]!.name);
    else outputs.set(i, s.output);
  }
  if (missing.length > 0) {
    throw invalidTransition(`The parent run has no output for ${missing.join(', ')}; re-run from an earlier step.`);
  }
  return queueRun(ctx, {
    pipeline: def.name,
    clientId: parent.clientId,
    parameters: (parent.parameters ?? {}) as Record<string, unknown>,
    trigger: 'rerun',
    parentRunId: parent.id,
    reuse: { fromPosition, outputs },
  });
}

export const pipelineHandlers = {
  'pipeline.runs.list': runsList,
  'pipeline.runs.get': runsGet,
  'pipeline.events.list': eventsList,
  'pipeline.run.start': runStart,
  'pipeline.run.rerun_partial': rerunPartial,
} satisfies PipelineHandlers;
