// operations.*: long-running work (pipeline runs, extractions, campaign sends, hub publications).
// An operation is visible to the credential that requested it and to nobody else (for an approved
// proposal: the proposer's credential, since the approved write runs as its proposer). Keyed by
// credential, not user: a bound key never sees its owner's operations, nor the owner the key's.
import { and, eq, getTableColumns, sql } from 'drizzle-orm';
import type { Db } from '../runtime/data/client.ts';
import { executeRows } from '../runtime/data/client.ts';
import { operations } from '../runtime/data/schema.ts';
import { pipelineRuns, pipelineSteps } from './data/schema.ts';
import type { HandlerContext, Page } from '../runtime/handler-types.ts';
import { newId } from '../runtime/data/ids.ts';
import { pageKeyColumn, startPage } from '../runtime/data/paging.ts';
import { notFound } from '../runtime/problem-error.ts';
import { writePipelineEvent } from './workers/pipeline-runs.ts';
import type { OperationsHandlers } from '../generated/handlers/operations.ts';
import type { components } from '../generated/types.ts';
import { toOperation, type Operation, type OperationRow } from './mappers/operation.ts';
import { actorName, invalidTransition } from './shared.ts';

type Schemas = components['schemas'];
export type OperationKind = Operation['kind'];

/** Records a queued operation requested by the caller (in the caller's transaction). */
export async function createOperation(ctx: HandlerContext, kind: OperationKind, subjectId: string | null): Promise<OperationRow> {
  const [row] = await ctx.db
    .insert(operations)
    .values({
      id: newId('operation'),
      kind,
      status: 'queued',
      progress: 0,
      requestedByKind: ctx.principal.kind,
      requestedById: ctx.principal.id,
      requestedByName: await actorName(ctx.db, ctx.principal.id),
      requestedByCredentialId: ctx.principal.credentialId,
      subjectId,
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    .returning();
  return row!;
}

/** The operation when the caller's credential requested it; 404 otherwise. */
async function ownOperation(db: Db, ctx: HandlerContext, id: string, lock = false): Promise<OperationRow> {
  if (lock) await executeRows(db, sql`select id from operations where id = ${id} for update`);
  const [row] = await db
    .select()
    .from(operations)
    .where(and(eq(operations.id, id), eq(operations.requestedByCredentialId, ctx.principal.credentialId)));
  if (!row) throw notFound('Operation');
  return row;
}

async function list(input: Schemas['OperationsListInput'], ctx: HandlerContext): Promise<Page<Operation>> {
  const { status, kind } = input;
  const page = await startPage(ctx.db, input, 'operations.list', { status, kind });
  const rows = await ctx.db
    .select({ ...getTableColumns(operations), pageKey: pageKeyColumn(operations.createdAt) })
    .from(operations)
    .where(
      and(
        eq(operations.requestedByCredentialId, ctx.principal.credentialId),
        status !== undefined ? eq(operations.status, status) : undefined,
        kind !== undefined ? eq(operations.kind, kind) : undefined,
        page.after(operations.createdAt, operations.id),
      ),
    )
    .orderBy(...page.orderBy(operations.createdAt, operations.id))
    .limit(page.fetch);
  return page.finish(rows, toOperation);
}

async function get(input: Schemas['OperationsGetInput'], ctx: HandlerContext): Promise<Operation> {
  return toOperation(await ownOperation(ctx.db, ctx, input.operation_id));
}

/**
 * queued or running -> cancelled; cancelled -> unchanged; succeeded or failed -> invalid_transition.
 * A queued pipeline run is cancelled at once; a running one stops at its next step boundary (the
 * pipeline worker sees the cancelled operation), and what it already did stays done.
 */
async function cancel(input: Schemas['OperationsCancelInput'], ctx: HandlerContext): Promise<Operation> {
  const row = await ownOperation(ctx.db, ctx, input.operation_id, true);
  if (row.status === 'cancelled') return toOperation(row);
  if (row.status === 'succeeded' || row.status === 'failed') {
    throw invalidTransition(`The operation already ${row.status}; only queued or running work can be cancelled.`);
  }
  const [updated] = await ctx.db
    .update(operations)
    .set({ status: 'cancelled', cancelRequestedAt: ctx.now, updatedAt: ctx.now, finishedAt: ctx.now })
    .where(eq(operations.id, row.id))
    .returning();
  if (row.kind === 'pipeline_run') {
    // A run not claimed yet ends now; a running one is ended by its worker at the next step boundary.
    const runs = await executeRows<{ id: string }>(
      ctx.db,
      sql`select id from pipeline_runs where operation_id = ${row.id} and status = 'queued' for update skip locked`,
    );
    for (const { id } of runs) {
      const [run] = await ctx.db
        .update(pipelineRuns)
        .set({ status: 'cancelled', finishedAt: ctx.now })
        .where(eq(pipelineRuns.id, id))
        .returning();
      await ctx.db
        .update(pipelineSteps)
        .set({ status: 'skipped', finishedAt: ctx.now })
        .where(and(eq(pipelineSteps.runId, id), eq(pipelineSteps.status, 'pending')));
      await writePipelineEvent(ctx.db, run!, { type: 'run_cancelled', level: 'warning', message: 'Run cancelled before it started', at: ctx.now });
    }
  }
  return toOperation(updated!);
}

export const operationsHandlers = {
  'operations.list': list,
  'operations.get': get,
  'operations.cancel': cancel,
} satisfies OperationsHandlers;
