// The registered pipeline definitions: named steps the pipeline worker (handlers/workers/pipeline-runs.ts)
// executes against the database. bin/wiring.ts hands them to the runtime; pipeline.run.start and
// pipeline.run.rerun_partial check names and parameters against them.
//
// task_digest: a run-level report of a client's tasks (or every task, for an internal run).
//   collect   counts the tasks by status and the overdue ones;
//   summarize checks them against the optional maxOpenTasks threshold (the step fails above it);
//   report    writes the digest as a pipeline event.
// Parameters: maxOpenTasks (whole number >= 0), pauseMs (0-5000, a pause before each step that
// paces a run so that it can be watched or cancelled mid-way).
import { and, eq, lt, sql } from 'drizzle-orm';
import { tasks } from './data/schema.ts';
import type { FieldError } from '../runtime/problem-error.ts';
import type { PipelineDefinition, PipelineStepContext } from './workers/pipeline-runs.ts';

export interface RegisteredPipeline extends PipelineDefinition {
  /** Field errors for the run's parameters (pointers under /parameters). */
  checkParameters(parameters: Record<string, unknown>): FieldError[];
}

const PAUSE_MAX_MS = 5000; // not a contract limit

async function pace(ctx: PipelineStepContext): Promise<void> {
  const ms = Number(ctx.run.parameters.pauseMs ?? 0);
  if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
}

function wholeNumber(parameters: Record<string, unknown>, name: string, max: number | null, errors: FieldError[]): void {
  const v = parameters[name];
  if (v === undefined) return;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || (max !== null && v > max)) {
    errors.push({ pointer: `/parameters/${name}`, message: max === null ? 'must be a whole number of at least 0' : `must be a whole number from 0 to ${max}` });
  }
}

const taskDigest: RegisteredPipeline = {
  name: 'task_digest',
  description: "Counts a client's tasks by status (every task for an internal run), checks the open ones against maxOpenTasks, and reports the digest.",
  checkParameters(parameters) {
    const errors: FieldError[] = [];
    for (const key of Object.keys(parameters)) {
      if (key !== 'maxOpenTasks' && key !== 'pauseMs') errors.push({ pointer: `/parameters/${key}`, message: 'is not a parameter of task_digest (maxOpenTasks, pauseMs)' });
    }
    wholeNumber(parameters, 'maxOpenTasks', null, errors);
    wholeNumber(parameters, 'pauseMs', PAUSE_MAX_MS, errors);
    return errors;
  },
  steps: [
    {
      name: 'collect',
      async run(ctx) {
        await pace(ctx);
        const scope = ctx.run.clientId === null ? undefined : eq(tasks.clientId, ctx.run.clientId);
        const rows = await ctx.db
          .select({ status: tasks.status, n: sql<number>`count(*)::int` })
          .from(tasks)
          .where(scope)
          .groupBy(tasks.status);
        const [overdue] = await ctx.db
          .select({ n: sql<number>`count(*)::int` })
          .from(tasks)
          .where(and(scope, lt(tasks.dueDate, sql`current_date`), sql`${tasks.status} <> 'done'`));
        const byStatus: Record<string, number> = {};
        for (const r of rows) byStatus[r.status] = Number(r.n);
        return { byStatus, overdue: Number(overdue?.n ?? 0) };
      },
    },
    {
      name: 'summarize',
      async run(ctx) {
        await pace(ctx);
        const collected = ctx.outputs.collect as { byStatus: Record<string, number>; overdue: number } | undefined;
        if (!collected) throw new Error('the collect step left no output');
        const total = Object.values(collected.byStatus).reduce((a, b) => a + b, 0);
        const open = total - (collected.byStatus.done ?? 0);
        const max = ctx.run.parameters.maxOpenTasks;
        if (typeof max === 'number' && open > max) throw new Error(`${open} open tasks exceed maxOpenTasks ${max}`);
        return { total, open, done: collected.byStatus.done ?? 0, overdue: collected.overdue };
      },
    },
    {
      name: 'report',
      async run(ctx) {
        await pace(ctx);
        const summary = ctx.outputs.summarize as { total: number; open: number; done: number; overdue: number } | undefined;
        if (!summary) throw new Error('the summarize step left no output');
        const level = summary.overdue > 0 ? 'warning' : 'info';
        await ctx.log(level, `${summary.total} tasks: ${summary.open} open, ${summary.done} done, ${summary.overdue} overdue`, { ...summary });
        return { reported: true, ...summary };
      },
    },
  ],
};

export const pipelineDefinitions: readonly RegisteredPipeline[] = [taskDigest];

export function findPipeline(name: string): RegisteredPipeline | undefined {
  return pipelineDefinitions.find((p) => p.name === name);
}

