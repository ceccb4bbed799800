// execution.*: work handed to the platform's runners. Staff work: the contract's audience is
// operators only (people and their unbound keys); a request or job bound to a client is visible
// within the caller's client scope, an internal one (no client) to every operator.
//
// The API only records requests (execution.requests.propose) and reads jobs (execution.jobs.get).
// Acceptance happens in the console and runners claim jobs; those sides are the functions below
// (acceptExecutionRequest, declineExecutionRequest, claimExecutionJob, finishExecutionJob,
// cancelExecutionJob), which hold the state machines:
//   request: pending -> accepted (a job is queued) | declined | cancelled; all but pending are final;
//   job:     queued -> running -> succeeded | failed; queued or running -> cancelled; final otherwise.
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../runtime/data/client.ts';
import { executeRows } from '../runtime/data/client.ts';
import { executionJobs, executionRequests } from './data/schema.ts';
import type { HandlerContext } from '../runtime/handler-types.ts';
import { newId } from '../runtime/data/ids.ts';
import { notFound, ProblemError } from '../runtime/problem-error.ts';
import type { ExecutionHandlers } from '../generated/handlers/execution.ts';
import type { components } from '../generated/types.ts';
import { toExecutionJob, toExecutionRequest, type ExecutionJob, type ExecutionJobRow, type ExecutionRequest, type ExecutionRequestRow } from './mappers/operation.ts';
import { problemRecord } from '../runtime/problem-documents.ts';
import { actorName, invalidTransition, requireClient } from './shared.ts';

type Schemas = components['schemas'];

async function propose(input: Schemas['ExecutionRequestsProposeInput'], ctx: HandlerContext): Promise<ExecutionRequest> {
  if (input.clientId !== undefined) {
    ctx.policy.assertClientInScope(input.clientId);
    await requireClient(ctx.db, input.clientId);
  }
  const [row] = await ctx.db
    .insert(executionRequests)
    .values({
      id: newId('exr'),
      clientId: input.clientId ?? null,
      kind: input.kind,
      title: input.title,
      instructions: input.instructions,
      parameters: (input.parameters ?? {}) as Record<string, unknown>,
      status: 'pending',
      requestedByKind: ctx.principal.kind,
      requestedById: ctx.principal.id,
      requestedByName: await actorName(ctx.db, ctx.principal.id),
      requestedByCredentialId: ctx.principal.credentialId,
      createdAt: ctx.now,
    })
    .returning();
  return toExecutionRequest(row!);
}

async function jobsGet(input: Schemas['ExecutionJobsGetInput'], ctx: HandlerContext): Promise<ExecutionJob> {
  const [row] = await ctx.db.select().from(executionJobs).where(eq(executionJobs.id, input.job_id));
  if (!row || (row.clientId !== null && !ctx.policy.canReadClient(row.clientId))) throw notFound('Execution job');
  return toExecutionJob(row);
}

export const executionHandlers = {
  'execution.jobs.get': jobsGet,
  'execution.requests.propose': propose,
} satisfies ExecutionHandlers;

// ------------------------------------------------------------------------------------------------
// The console's and the runners' side (no API operation): state transitions under a row lock.

async function lockedRequest(db: Db, id: string): Promise<ExecutionRequestRow> {
  await executeRows(db, sql`select id from execution_requests where id = ${id} for update`);
  const [row] = await db.select().from(executionRequests).where(eq(executionRequests.id, id));
  if (!row) throw notFound('Execution request');
  return row;
}

async function lockedJob(db: Db, id: string): Promise<ExecutionJobRow> {
  await executeRows(db, sql`select id from execution_jobs where id = ${id} for update`);
  const [row] = await db.select().from(executionJobs).where(eq(executionJobs.id, id));
  if (!row) throw notFound('Execution job');
  return row;
}

/** pending -> accepted, queueing its job. Run inside a transaction. */
export async function acceptExecutionRequest(db: Db, requestId: string, now = new Date()): Promise<{ request: ExecutionRequestRow; job: ExecutionJobRow }> {
  const request = await lockedRequest(db, requestId);
  if (request.status !== 'pending') throw invalidTransition(`The request is ${request.status}; only a pending request can be accepted.`);
  const [job] = await db
    .insert(executionJobs)
    .values({ id: newId('job'), requestId, clientId: request.clientId, status: 'queued', createdAt: now })
    .returning();
  const [updated] = await db
    .update(executionRequests)
    .set({ status: 'accepted', jobId: job!.id, decidedAt: now })
    .where(eq(executionRequests.id, requestId))
    .returning();
  return { request: updated!, job: job! };
}

/** pending -> declined, or pending -> cancelled (by its proposer). */
export async function declineExecutionRequest(db: Db, requestId: string, to: 'declined' | 'cancelled' = 'declined', now = new Date()): Promise<ExecutionRequestRow> {
  const request = await lockedRequest(db, requestId);
  if (request.status !== 'pending') throw invalidTransition(`The request is ${request.status}; only a pending request can be ${to}.`);
  const [updated] = await db.update(executionRequests).set({ status: to, decidedAt: now }).where(eq(executionRequests.id, requestId)).returning();
  return updated!;
}

/** A runner claims the oldest queued job (FOR UPDATE SKIP LOCKED: runners never share a job). */
export async function claimExecutionJob(db: Db, runner: string): Promise<ExecutionJobRow | null> {
  const rows = await executeRows<{ id: string }>(
    db,
    sql`select id from execution_jobs where status = 'queued' order by created_at, id limit 1 for update skip locked`,
  );
  if (!rows[0]) return null;
  const [job] = await db
    .update(executionJobs)
    .set({ status: 'running', runner, startedAt: sql`now()` })
    .where(and(eq(executionJobs.id, rows[0].id), eq(executionJobs.status, 'queued')))
    .returning();
  return job ?? null;
}

/** running -> succeeded | failed, by the runner that claimed it. */
export async function finishExecutionJob(
  db: Db,
  jobId: string,
  runner: string,
  outcome: { ok: true; result: Record<string, unknown> } | { ok: false; detail: string },
  baseUrl = '',
): Promise<ExecutionJobRow> {
  const job = await lockedJob(db, jobId);
  if (job.status !== 'running') throw invalidTransition(`The job is ${job.status}; only a running job can finish.`);
  if (job.runner !== runner) throw new ProblemError('conflict', 'Another runner holds this job.');
  const error = outcome.ok
    ? null
    : problemRecord('internal_error', outcome.detail, baseUrl);
  const [updated] = await db
    .update(executionJobs)
    .set({ status: outcome.ok ? 'succeeded' : 'failed', result: outcome.ok ? outcome.result : null, error, finishedAt: sql`now()` })
    .where(eq(executionJobs.id, jobId))
    .returning();
  return updated!;
}

/** queued or running -> cancelled; cancelled stays cancelled; succeeded or failed is invalid_transition. */
export async function cancelExecutionJob(db: Db, jobId: string): Promise<ExecutionJobRow> {
  const job = await lockedJob(db, jobId);
  if (job.status === 'cancelled') return job;
  if (job.status !== 'queued' && job.status !== 'running') throw invalidTransition(`The job already ${job.status}.`);
  const [updated] = await db.update(executionJobs).set({ status: 'cancelled', finishedAt: sql`now()` }).where(eq(executionJobs.id, jobId)).returning();
  return updated!;
}
