// tasks.*: work items, client-bound or internal (team-board), with co-assignees and comments.
// Visibility always through ctx.policy (rules 1, 2, 4): an operator reaches internal tasks whatever
// its client scope; a client admin or service account never does (404).
import { and, arrayContains, eq, getTableColumns, inArray, ne, or, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../runtime/data/client.ts';
import { users } from '../runtime/data/schema.ts';
import { projects, taskComments, tasks } from './data/schema.ts';
import type { HandlerContext, Page } from '../runtime/handler-types.ts';
import { newDomainId } from './data/ids.ts';
import { tableStatement } from '../runtime/data/statement.ts';
import { pageKeyColumn, startPage } from '../runtime/data/paging.ts';
import { invalidField, notFound, ProblemError, type FieldError } from '../runtime/problem-error.ts';
import { notify } from '../runtime/events/notifications.ts';
import {
  assigneeSet,
  toTask,
  toTaskComment,
  type Task,
  type TaskComment,
  type TaskPriority,
  type TaskRow,
  type TaskStatus,
} from './mappers/task.ts';
import {
  actorName,
  checkDate,
  checkIfMatch,
  invalidTransition,
  preconditionFailed,
  requireClient,
  unknownUsers,
  validationFailed,
} from './shared.ts';
import type { TasksHandlers } from '../generated/handlers/tasks.ts';
import type { components } from '../generated/types.ts';

// Inputs as the contract defines them (generated types).
type Schemas = components['schemas'];
export type TasksListInput = Schemas['TasksListInput'];
export type TaskDraft = Schemas['TaskDraft'];
export type TasksUpdateInput = Schemas['TasksUpdateInput'];

const WRITABLE_STATUSES = ['open', 'in_progress', 'blocked'];

async function loadTask(db: Db, id: string): Promise<TaskRow | undefined> {
  const [row] = await db.select().from(tasks).where(eq(tasks.id, id));
  return row;
}

/** The task when the caller may read it; 404 otherwise. */
async function visibleTask(ctx: HandlerContext, id: string): Promise<TaskRow> {
  const row = await loadTask(ctx.db, id);
  ctx.policy.assertRecordVisible(row, 'Task');
  return row;
}

/** The task when the caller may change it (rule 2 for internal tasks); 404 otherwise. */
async function writableTask(ctx: HandlerContext, id: string): Promise<TaskRow> {
  const row = await loadTask(ctx.db, id);
  ctx.policy.assertRecordWritable(row, 'Task');
  return row;
}

/**
 * Field errors for client admins named as assignees of an internal task (the decision on tasks.create
 * and tasks.update): an internal task is for operators only (visibility rule 4), so a client admin
 * can never be assigned to one.
 */
async function clientAdminsOnInternal(db: Db, clientId: string | null, refs: { pointer: string; id: string }[]): Promise<FieldError[]> {
  if (clientId !== null || refs.length === 0) return [];
  const admins = await db
    .select({ id: users.id })
    .from(users)
    .where(and(inArray(users.id, [...new Set(refs.map((r) => r.id))]), eq(users.kind, 'client_admin')));
  const set = new Set(admins.map((a) => a.id));
  return refs.filter((r) => set.has(r.id)).map((r) => ({ pointer: r.pointer, message: 'is a client admin, who cannot be assigned to an internal task' }));
}

/** task_assigned to each named user (runtime/events/notifications.ts: never the actor, only people who reach the task). */
async function notifyAssigned(ctx: HandlerContext, task: Task, userIds: readonly string[]): Promise<void> {
  await notify(
    ctx.db,
    userIds,
    {
      kind: 'task_assigned',
      title: `You were assigned to "${task.title}"`,
      body: task.dueDate ? `Due ${task.dueDate}.` : '',
      clientId: task.clientId,
      subjectId: task.id,
      path: `/v1/tasks/${task.id}`,
    },
    { now: ctx.now, actorId: ctx.principal.id },
  );
}

// ------------------------------------------------------------------------------------------------
// Reads

async function list(input: TasksListInput, ctx: HandlerContext): Promise<Page<Task>> {
  const { clientId, projectId, assigneeId, status } = input;
  // A clientId filter outside the caller's client scope answers 404 (tasks are not a rule-3 read).
  if (clientId !== undefined) ctx.policy.assertClientInScope(clientId);
  const page = await startPage(ctx.db, input, 'tasks.list', { clientId, projectId, assigneeId, status });
  const filters: (SQL | undefined)[] = [
    ctx.policy.recordWhere(tasks.clientId),
    clientId !== undefined ? eq(tasks.clientId, clientId) : undefined,
    projectId !== undefined ? eq(tasks.projectId, projectId) : undefined,
    status !== undefined ? eq(tasks.status, status) : undefined,
    assigneeId !== undefined ? or(eq(tasks.ownerId, assigneeId), arrayContains(tasks.assigneeIds, [assigneeId])) : undefined,
    page.after(tasks.createdAt, tasks.id),
  ];
  const rows = await ctx.db
    .select({ ...getTableColumns(tasks), pageKey: pageKeyColumn(tasks.createdAt) })
    .from(tasks)
    .where(and(...filters))
    .orderBy(...page.orderBy(tasks.createdAt, tasks.id))
    .limit(page.fetch);
  return page.finish(rows, toTask);
}

async function get(input: { task_id: string }, ctx: HandlerContext): Promise<Task> {
  return toTask(await visibleTask(ctx, input.task_id));
}

async function commentsList(input: Schemas['TasksCommentsListInput'], ctx: HandlerContext): Promise<Page<TaskComment>> {
  await visibleTask(ctx, input.task_id);
  const page = await startPage(ctx.db, input, 'tasks.comments.list', { taskId: input.task_id });
  const rows = await ctx.db
    .select({ ...getTableColumns(taskComments), pageKey: pageKeyColumn(taskComments.createdAt) })
    .from(taskComments)
    .where(and(eq(taskComments.taskId, input.task_id), page.after(taskComments.createdAt, taskComments.id)))
    .orderBy(...page.orderBy(taskComments.createdAt, taskComments.id))
    .limit(page.fetch);
  return page.finish(rows, toTaskComment);
}

// ------------------------------------------------------------------------------------------------
// Creation (tasks.create and tasks.batch_create share it)

/**
 * Resolves a draft into a row to insert, applying the creation rules. `at` is the JSON pointer
 * prefix of the draft in the input ('' for tasks.create, '/tasks/3' for a batch item).
 * Field problems are collected into `errors`; reach problems (404) are thrown at once.
 */
async function resolveDraft(
  ctx: HandlerContext,
  draft: TaskDraft,
  at: string,
  errors: FieldError[],
): Promise<typeof tasks.$inferInsert | null> {
  const before = errors.length;
  let clientId: string | null = null;
  const projectId = draft.projectId ?? null;
  if (projectId !== null) {
    // With a projectId the task takes the project's client.
    const [project] = await ctx.db.select().from(projects).where(eq(projects.id, projectId));
    if (!project || !ctx.policy.canReadClient(project.clientId)) throw notFound('Project');
    if (draft.clientId !== undefined && draft.clientId !== project.clientId) {
      errors.push({ pointer: `${at}/clientId`, message: "must be the project's client (or left out)" });
    }
    clientId = project.clientId;
  } else if (draft.clientId !== undefined) {
    ctx.policy.assertClientInScope(draft.clientId);
    await requireClient(ctx.db, draft.clientId);
    clientId = draft.clientId;
  } else if (!ctx.policy.canWriteInternal()) {
    // Neither projectId nor clientId: an internal task, which only an operator may create.
    errors.push({
      pointer: `${at}/clientId`,
      message: 'is required (or projectId): only an operator may create an internal task',
    });
  }

  if (draft.status !== undefined && !WRITABLE_STATUSES.includes(draft.status)) {
    errors.push({ pointer: `${at}/status`, message: 'must be open, in_progress or blocked (done is reached through tasks.complete)' });
  }
  try {
    checkDate(draft.dueDate, `${at}/dueDate`);
  } catch (e) {
    if (e instanceof ProblemError) errors.push(...e.errors);
    else throw e;
  }
  const userRefs = [
    ...(draft.ownerId ? [{ pointer: `${at}/ownerId`, id: draft.ownerId }] : []),
    ...(draft.assigneeIds ?? []).map((id, i) => ({ pointer: `${at}/assigneeIds/${i}`, id })),
  ];
  errors.push(...(await unknownUsers(ctx.db, userRefs)));
  if (projectId === null && draft.clientId === undefined) errors.push(...(await clientAdminsOnInternal(ctx.db, null, userRefs)));
  if (errors.length > before) return null;

  const ownerId = draft.ownerId ?? null;
  return {
    id: newDomainId('task'),
    clientId,
    projectId,
    title: draft.title,
    description: draft.description ?? '',
    status: draft.status ?? 'open',
    priority: draft.priority ?? 'normal',
    ownerId,
    assigneeIds: assigneeSet(ownerId, draft.assigneeIds),
    dueDate: draft.dueDate ?? null,
    version: 1,
    createdBy: ctx.principal.id,
    createdAt: ctx.now,
    updatedAt: ctx.now,
  };
}

/** The columns resolveDraft fills, each a placeholder of the one-task insert. */
const DRAFT_COLUMNS = [
  'id', 'clientId', 'projectId', 'title', 'description', 'status', 'priority', 'ownerId', 'assigneeIds', 'dueDate',
  'version', 'createdBy', 'createdAt', 'updatedAt',
] as const satisfies readonly (keyof typeof tasks.$inferInsert)[];

/** One task's INSERT, built once (runtime/data/statement.ts): tasks.create is the write the bench drives. */
const insertOneTask = tableStatement('insert_task', tasks, (db) =>
  db
    .insert(tasks)
    .values(Object.fromEntries(DRAFT_COLUMNS.map((c) => [c, sql.placeholder(c)])) as never)
    .returning(),
);

async function insertTasks(ctx: HandlerContext, values: (typeof tasks.$inferInsert)[]): Promise<Task[]> {
  const rows =
    values.length === 1
      ? await insertOneTask.run(ctx.db, Object.fromEntries(DRAFT_COLUMNS.map((c) => [c, values[0]![c] ?? null])))
      : await ctx.db.insert(tasks).values(values).returning();
  const byId = new Map(rows.map((r) => [r.id, r]));
  const created = values.map((v) => toTask(byId.get(v.id)!));
  for (const task of created) {
    await ctx.emit('task.created', { clientId: task.clientId, subjectId: task.id }, task);
    await notifyAssigned(ctx, task, task.assigneeIds);
  }
  return created;
}

async function create(input: TaskDraft, ctx: HandlerContext): Promise<Task> {
  const errors: FieldError[] = [];
  const values = await resolveDraft(ctx, input, '', errors);
  if (!values) throw validationFailed(errors);
  const [task] = await insertTasks(ctx, [values]);
  return task;
}

async function batchCreate(input: { tasks: TaskDraft[] }, ctx: HandlerContext): Promise<{ items: Task[] }> {
  if (!Array.isArray(input.tasks) || input.tasks.length === 0) throw invalidField('/tasks', 'must hold at least one task');
  if (input.tasks.length > 100) throw invalidField('/tasks', 'must hold at most 100 tasks');
  // All or nothing: every draft is checked before anything is written, and the whole operation
  // runs in one transaction (ctx.db), so a failure leaves no task behind.
  const errors: FieldError[] = [];
  const values: (typeof tasks.$inferInsert)[] = [];
  for (const [i, draft] of input.tasks.entries()) {
    const v = await resolveDraft(ctx, draft, `/tasks/${i}`, errors);
    if (v) values.push(v);
  }
  if (errors.length > 0) throw validationFailed(errors);
  return { items: await insertTasks(ctx, values) };
}

// ------------------------------------------------------------------------------------------------
// Changes

async function update(input: TasksUpdateInput, ctx: HandlerContext): Promise<Task> {
  const current = await writableTask(ctx, input.task_id);
  checkIfMatch(ctx, toTask(current).etag);
  if (current.status === 'done') throw invalidTransition('A done task cannot be changed.');
  if (input.status !== undefined && !WRITABLE_STATUSES.includes(input.status)) {
    throw invalidTransition('A task reaches done only through tasks.complete.');
  }
  const errors: FieldError[] = [];
  try {
    checkDate(input.dueDate, '/dueDate');
  } catch (e) {
    if (e instanceof ProblemError) errors.push(...e.errors);
    else throw e;
  }
  const userRefs = [
    ...(input.ownerId ? [{ pointer: '/ownerId', id: input.ownerId }] : []),
    ...(input.assigneeIds ?? []).map((id, i) => ({ pointer: `/assigneeIds/${i}`, id })),
  ];
  errors.push(...(await unknownUsers(ctx.db, userRefs)));
  errors.push(...(await clientAdminsOnInternal(ctx.db, current.clientId, userRefs)));
  if (errors.length > 0) throw validationFailed(errors);

  const changes: Partial<typeof tasks.$inferInsert> = {};
  const set = <K extends keyof typeof tasks.$inferInsert>(key: K, value: (typeof tasks.$inferInsert)[K]) => {
    changes[key] = value;
  };
  if (input.title !== undefined) set('title', input.title);
  if (input.description !== undefined) set('description', input.description);
  if (input.status !== undefined) set('status', input.status);
  if (input.priority !== undefined) set('priority', input.priority);
  if (input.dueDate !== undefined) set('dueDate', input.dueDate);
  if (input.ownerId !== undefined || input.assigneeIds !== undefined) {
    const ownerId = input.ownerId !== undefined ? input.ownerId : current.ownerId;
    const coAssignees = input.assigneeIds ?? current.assigneeIds.filter((id) => id !== current.ownerId);
    if (input.ownerId !== undefined) set('ownerId', ownerId);
    set('assigneeIds', assigneeSet(ownerId, coAssignees));
  }

  // Optimistic concurrency: the row changes only if nobody changed it since the ETag was read.
  // Of several concurrent updates holding one ETag, exactly one matches version = current.version.
  const [row] = await ctx.db
    .update(tasks)
    .set({ ...changes, version: sql`${tasks.version} + 1`, updatedAt: ctx.now })
    .where(and(eq(tasks.id, current.id), eq(tasks.version, current.version), ne(tasks.status, 'done')))
    .returning();
  if (!row) throw preconditionFailed();
  const task = toTask(row);
  await ctx.emit('task.updated', { clientId: task.clientId, subjectId: task.id }, task);
  await notifyAssigned(ctx, task, task.assigneeIds.filter((id) => !current.assigneeIds.includes(id)));
  return task;
}

async function complete(input: { task_id: string }, ctx: HandlerContext): Promise<Task> {
  const current = await writableTask(ctx, input.task_id);
  // Idempotent: a done task is returned unchanged and nothing is emitted.
  if (current.status === 'done') return toTask(current);
  const [row] = await ctx.db
    .update(tasks)
    .set({ status: 'done', completedAt: ctx.now, updatedAt: ctx.now, version: sql`${tasks.version} + 1` })
    .where(and(eq(tasks.id, current.id), ne(tasks.status, 'done')))
    .returning();
  if (!row) {
    // Completed concurrently by someone else: the same end state.
    return toTask((await loadTask(ctx.db, current.id))!);
  }
  const task = toTask(row);
  await ctx.emit('task.completed', { clientId: task.clientId, subjectId: task.id }, task);
  return task;
}

async function comment(input: { task_id: string; body: string }, ctx: HandlerContext): Promise<TaskComment> {
  const task = await writableTask(ctx, input.task_id);
  const [row] = await ctx.db
    .insert(taskComments)
    .values({
      id: newDomainId('comment'),
      taskId: task.id,
      authorKind: ctx.principal.kind,
      authorId: ctx.principal.id,
      authorName: await actorName(ctx.db, ctx.principal.id),
      body: input.body,
      createdAt: ctx.now,
    })
    .returning();
  await notify(
    ctx.db,
    task.assigneeIds,
    {
      kind: 'comment_added',
      title: `New comment on "${task.title}"`,
      body: input.body.length > 200 ? `${input.body.slice(0, 199)}…` : input.body, // not a contract limit: preview length
      clientId: task.clientId,
      subjectId: task.id,
      path: `/v1/tasks/${task.id}/comments`,
    },
    { now: ctx.now, actorId: ctx.principal.id },
  );
  return toTaskComment(row);
}

export const tasksHandlers = {
  'tasks.list': list,
  'tasks.get': get,
  'tasks.comments.list': commentsList,
  'tasks.create': create,
  'tasks.batch_create': batchCreate,
  'tasks.update': update,
  'tasks.complete': complete,
  'tasks.comment': comment,
} satisfies TasksHandlers;
