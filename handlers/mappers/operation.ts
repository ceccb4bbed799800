// operations / pipeline_* / execution_* rows -> the contract's Operation, PipelineRun, PipelineEvent,
// ExecutionRequest and ExecutionJob resources.
import type { components } from '../../generated/types.ts';
import type { PrincipalKind } from '../../runtime/contract-types.ts';
import type { operations } from '../../runtime/data/schema.ts';
import type { executionJobs, executionRequests, pipelineEvents, pipelineRuns, pipelineSteps } from '../data/schema.ts';
import { iso } from './time.ts';

type Schemas = components['schemas'];
export type Operation = Schemas['Operation'];
export type PipelineRun = Schemas['PipelineRun'];
export type PipelineEvent = Schemas['PipelineEvent'];
export type ExecutionRequest = Schemas['ExecutionRequest'];
export type ExecutionJob = Schemas['ExecutionJob'];
export type OperationRow = typeof operations.$inferSelect;
export type PipelineRunRow = typeof pipelineRuns.$inferSelect;
export type PipelineStepRow = typeof pipelineSteps.$inferSelect;
export type PipelineEventRow = typeof pipelineEvents.$inferSelect;
export type ExecutionRequestRow = typeof executionRequests.$inferSelect;
export type ExecutionJobRow = typeof executionJobs.$inferSelect;

type ProblemRecord = Schemas['ProblemRecord'];

function actor(row: { requestedByKind: string; requestedById: string; requestedByName: string | null }): Schemas['ActorRef'] {
  return { kind: row.requestedByKind as PrincipalKind, id: row.requestedById, name: row.requestedByName };
}

function problem(value: unknown): ProblemRecord | null {
  return value === null || value === undefined ? null : (value as ProblemRecord);
}

export function toOperation(row: OperationRow): Operation {
  return {
    id: row.id,
    kind: row.kind as Operation['kind'],
    status: row.status as Operation['status'],
    progress: row.progress,
    requestedBy: actor(row),
    result: (row.result ?? null) as Operation['result'],
    error: problem(row.error),
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    finishedAt: iso(row.finishedAt),
  };
}

export function toPipelineRun(row: PipelineRunRow, steps: readonly PipelineStepRow[]): PipelineRun {
  return {
    id: row.id,
    clientId: row.clientId,
    pipeline: row.pipeline,
    status: row.status as PipelineRun['status'],
    trigger: row.trigger as PipelineRun['trigger'],
    parentRunId: row.parentRunId,
    operationId: row.operationId,
    steps: [...steps]
      .sort((a, b) => a.position - b.position)
      .map((s) => ({
        name: s.name,
        status: s.status as Schemas['PipelineStepStatus'],
        startedAt: iso(s.startedAt),
        finishedAt: iso(s.finishedAt),
        error: problem(s.error),
      })),
    parameters: (row.parameters ?? {}) as Record<string, unknown>,
    requestedBy: actor(row),
    createdAt: iso(row.createdAt),
    startedAt: iso(row.startedAt),
    finishedAt: iso(row.finishedAt),
    error: problem(row.error),
  };
}

export function toPipelineEvent(row: PipelineEventRow): PipelineEvent {
  return {
    id: row.id,
    runId: row.runId,
    clientId: row.clientId,
    step: row.step,
    type: row.type as PipelineEvent['type'],
    level: row.level as PipelineEvent['level'],
    message: row.message,
    occurredAt: iso(row.occurredAt),
    data: (row.data ?? {}) as Record<string, unknown>,
  };
}

export function toExecutionRequest(row: ExecutionRequestRow): ExecutionRequest {
  return {
    id: row.id,
    clientId: row.clientId,
    kind: row.kind as ExecutionRequest['kind'],
    title: row.title,
    instructions: row.instructions,
    parameters: (row.parameters ?? {}) as Record<string, unknown>,
    status: row.status as ExecutionRequest['status'],
    jobId: row.jobId,
    requestedBy: actor(row),
    createdAt: iso(row.createdAt),
    decidedAt: iso(row.decidedAt),
  };
}

export function toExecutionJob(row: ExecutionJobRow): ExecutionJob {
  return {
    id: row.id,
    requestId: row.requestId,
    clientId: row.clientId,
    runner: row.runner,
    status: row.status as ExecutionJob['status'],
    result: (row.result ?? null) as ExecutionJob['result'],
    error: problem(row.error),
    createdAt: iso(row.createdAt),
    startedAt: iso(row.startedAt),
    finishedAt: iso(row.finishedAt),
  };
}
