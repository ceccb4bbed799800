// projects.*: engagements for one client, moving through stages from discovery to live.
// Projects keep the client scope (rule 5). projects.create and projects.stage.advance are Tier 2:
// the pipeline turns a call into a proposal and runs these bodies, as the proposer, once approved.
import { and, eq, getTableColumns, sql, type SQL } from 'drizzle-orm';
import { projects } from './data/schema.ts';
import type { HandlerContext, Page } from '../runtime/handler-types.ts';
import { newDomainId } from './data/ids.ts';
import type { SubjectLoader } from '../runtime/pipeline/approval-subjects.ts';
import { pageKeyColumn, startPage } from '../runtime/data/paging.ts';
import { notFound, ProblemError, type FieldError } from '../runtime/problem-error.ts';
import { nextStage, toProject, type Project, type ProjectRow, type ProjectStage, type ProjectStatus } from './mappers/project.ts';
import { checkDate, checkIfMatch, invalidTransition, preconditionFailed, requireClient, validationFailed } from './shared.ts';
import type { ProjectsHandlers } from '../generated/handlers/projects.ts';
import type { components } from '../generated/types.ts';

/** Loads an approval's `project` subject: its client (handlers/index.ts hands it to the registry). */
export const projectSubject: SubjectLoader = async (db, id) => {
  const [row] = await db.select({ clientId: projects.clientId }).from(projects).where(eq(projects.id, id)).limit(1);
  return row;
};

// Inputs as the contract defines them (generated types).
type Schemas = components['schemas'];
export type ProjectsListInput = Schemas['ProjectsListInput'];
export type ProjectsCreateInput = Schemas['ProjectsCreateInput'];
export type ProjectsUpdateInput = Schemas['ProjectsUpdateInput'];

async function visibleProject(ctx: HandlerContext, id: string): Promise<ProjectRow> {
  const [row] = await ctx.db.select().from(projects).where(eq(projects.id, id));
  if (!row || !ctx.policy.canReadClient(row.clientId)) throw notFound('Project');
  return row;
}

function checkDates(start: string | null | undefined, target: string | null | undefined, errors: FieldError[]): void {
  for (const [value, pointer] of [
    [start, '/startDate'],
    [target, '/targetDate'],
  ] as const) {
    try {
      checkDate(value, pointer);
    } catch (e) {
      if (e instanceof ProblemError) errors.push(...e.errors);
      else throw e;
    }
  }
  if (errors.length === 0 && start && target && target < start) {
    errors.push({ pointer: '/targetDate', message: 'must not be before startDate' });
  }
}

async function list(input: ProjectsListInput, ctx: HandlerContext): Promise<Page<Project>> {
  const { clientId, stage, status } = input;
  if (clientId !== undefined) ctx.policy.assertClientInScope(clientId);
  const page = await startPage(ctx.db, input, 'projects.list', { clientId, stage, status });
  const filters: (SQL | undefined)[] = [
    ctx.policy.clientWhere(projects.clientId),
    clientId !== undefined ? eq(projects.clientId, clientId) : undefined,
    stage !== undefined ? eq(projects.stage, stage) : undefined,
    status !== undefined ? eq(projects.status, status) : undefined,
    page.after(projects.createdAt, projects.id),
  ];
  const rows = await ctx.db
    .select({ ...getTableColumns(projects), pageKey: pageKeyColumn(projects.createdAt) })
    .from(projects)
    .where(and(...filters))
    .orderBy(...page.orderBy(projects.createdAt, projects.id))
    .limit(page.fetch);
  return page.finish(rows, toProject);
}

async function get(input: { project_id: string }, ctx: HandlerContext): Promise<Project> {
  return toProject(await visibleProject(ctx, input.project_id));
}

async function create(input: ProjectsCreateInput, ctx: HandlerContext): Promise<Project> {
  ctx.policy.assertClientInScope(input.clientId);
  await requireClient(ctx.db, input.clientId);
  const errors: FieldError[] = [];
  checkDates(input.startDate, input.targetDate, errors);
  if (errors.length > 0) throw validationFailed(errors);
  const [row] = await ctx.db
    .insert(projects)
    .values({
      id: newDomainId('project'),
      clientId: input.clientId,
      name: input.name,
      description: input.description ?? '',
      stage: 'discovery',
      status: 'active',
      startDate: input.startDate ?? null,
      targetDate: input.targetDate ?? null,
      version: 1,
      createdAt: ctx.now,
      updatedAt: ctx.now,
    })
    .returning();
  return toProject(row);
}

const STATUS_MOVES: Record<string, readonly string[]> = {
  active: ['active', 'on_hold', 'archived'],
  on_hold: ['on_hold', 'active', 'archived'],
  archived: [],
};

async function update(input: ProjectsUpdateInput, ctx: HandlerContext): Promise<Project> {
  const current = await visibleProject(ctx, input.project_id);
  checkIfMatch(ctx, toProject(current).etag);
  // archived is final: no change of any field, and no way out of it.
  if (current.status === 'archived') throw invalidTransition('An archived project cannot be changed.');
  if (input.status !== undefined && !STATUS_MOVES[current.status]?.includes(input.status)) {
    throw invalidTransition(`A project cannot move from ${current.status} to ${input.status}.`);
  }
  const errors: FieldError[] = [];
  const start = input.startDate !== undefined ? input.startDate : current.startDate;
  const target = input.targetDate !== undefined ? input.targetDate : current.targetDate;
  checkDates(input.startDate, input.targetDate, errors);
  if (errors.length === 0 && start && target && target < start) {
    errors.push({ pointer: input.targetDate !== undefined ? '/targetDate' : '/startDate', message: 'targetDate must not be before startDate' });
  }
  if (errors.length > 0) throw validationFailed(errors);

  const changes: Partial<typeof projects.$inferInsert> = {};
  if (input.name !== undefined) changes.name = input.name;
  if (input.description !== undefined) changes.description = input.description;
  if (input.status !== undefined) changes.status = input.status;
  if (input.startDate !== undefined) changes.startDate = input.startDate;
  if (input.targetDate !== undefined) changes.targetDate = input.targetDate;
  const [row] = await ctx.db
    .update(projects)
    .set({ ...changes, version: sql`${projects.version} + 1`, updatedAt: ctx.now })
    .where(and(eq(projects.id, current.id), eq(projects.version, current.version)))
    .returning();
  if (!row) throw preconditionFailed();
  return toProject(row);
}

async function stageAdvance(input: { project_id: string; expectedStage?: ProjectStage }, ctx: HandlerContext): Promise<Project> {
  const current = await visibleProject(ctx, input.project_id);
  if (current.status !== 'active') {
    throw invalidTransition(`Only an active project's stage can be advanced; this one is ${current.status}.`);
  }
  const to = nextStage(current.stage);
  if (to === null) throw invalidTransition(`The project is in ${current.stage}, the final stage.`);
  if (input.expectedStage !== undefined && input.expectedStage !== current.stage) {
    throw new ProblemError('conflict', `The project is in ${current.stage}, not ${input.expectedStage}.`, {
      extra: { currentStage: current.stage },
    });
  }
  const [row] = await ctx.db
    .update(projects)
    .set({ stage: to, version: sql`${projects.version} + 1`, updatedAt: ctx.now })
    .where(and(eq(projects.id, current.id), eq(projects.stage, current.stage), eq(projects.status, 'active')))
    .returning();
  if (!row) throw new ProblemError('conflict', 'The project changed while advancing it; read it again.');
  const project = toProject(row);
  await ctx.emit(
    'project.stage_advanced',
    { clientId: project.clientId, subjectId: project.id },
    { ...project, previousStage: current.stage },
  );
  return project;
}

export const projectsHandlers = {
  'projects.list': list,
  'projects.get': get,
  'projects.create': create,
  'projects.update': update,
  'projects.stage.advance': stageAdvance,
} satisfies ProjectsHandlers;
