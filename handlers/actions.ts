// actions.list: the caller's to-do list, computed (never stored) from the records it is about, soonest
// due first (dueAt ascending, no due date last, then the action id). Each source needs the scope of
// the read it is derived from, so an action never shows what the caller could not read:
//
//   task_due / task_overdue  tasks:read    open, in-progress or blocked tasks the caller is assigned to
//                                          (owner or co-assignee) due within DUE_SOON_DAYS, or overdue.
//                                          Visibility rules 1 and 4 (Policy.recordWhere): an internal
//                                          task reaches operators in person only, so a client admin
//                                          once assigned to one never sees it.
//   approval_pending         approvals:decide  pending proposals the caller may decide: a person (OAuth),
//                                          reach over the subject's client, not the proposer, not
//                                          already decided by the caller. dueAt: when it expires.
//   review_ready             reviews:release   ready reviews of the caller's clients (reviews.release's
//                                          audience: operators and service accounts).
//   intake_incomplete        intake:write  draft intake records of the caller's clients with a
//                                          required field still empty: for client admins every such
//                                          record of their clients, for others the ones they created.
//   follow_up                pipeline:read failed pipeline runs of the caller's clients (internal runs:
//                                          operators in person) that no rerun replaced.
//
// assigneeId is the caller's id on actions addressed to it personally (tasks, approvals, intake) and
// null on team-wide ones (reviews, runs); the assigneeId filter matches it. A clientId outside the
// caller's scope answers 404.
import { createHash } from 'node:crypto';
import { and, arrayContains, eq, gt, inArray, lte, ne, or, sql } from 'drizzle-orm';
import { approvals } from '../runtime/data/schema.ts';
import { intakeRecords, pipelineRuns, reviews, tasks } from './data/schema.ts';
import type { HandlerContext, Page } from '../runtime/handler-types.ts';
import { isPerson, reaches, type ApprovalDecision } from '../runtime/pipeline/approvals.ts';
import { startKeyedPage } from '../runtime/data/paging.ts';
import type { ActionsHandlers } from '../generated/handlers/actions.ts';
import type { components } from '../generated/types.ts';

type Schemas = components['schemas'];
type Action = Schemas['Action'];
type ActionKind = Action['kind'];

/** A task due within this many days (today included) is task_due. */
export const DUE_SOON_DAYS = 7; // not a contract limit: the actions horizon (recorded in actions.yaml)
const DAY_MS = 86_400_000;
const NO_DUE_KEY = '9999-12-31T23:59:59.999999Z';

/** Stable per (kind, subject): the same action keeps its id across calls. */
function actionId(kind: ActionKind, subjectId: string): string {
  return `act_${createHash('sha256').update(`${kind}:${subjectId}`).digest('hex').slice(0, 24)}`;
}

/** Sort key: dueAt to the microsecond (the cursor's timestamp format), no due date last. */
function sortKey(dueAt: string | null): string {
  return dueAt ? `${dueAt.slice(0, 23)}000Z` : NO_DUE_KEY;
}

function action(kind: ActionKind, subjectId: string, rest: Omit<Action, 'id' | 'kind' | 'subjectId'>): Action {
  return { id: actionId(kind, subjectId), kind, subjectId, ...rest };
}

async function taskActions(ctx: HandlerContext, clientId: string | undefined): Promise<Action[]> {
  if (!ctx.policy.hasScope('tasks:read')) return [];
  const today = ctx.now.toISOString().slice(0, 10);
  const horizon = new Date(ctx.now.getTime() + DUE_SOON_DAYS * DAY_MS).toISOString().slice(0, 10);
  const me = ctx.principal.id;
  const rows = await ctx.db
    .select()
    .from(tasks)
    .where(
      and(
        ctx.policy.recordWhere(tasks.clientId),
        clientId !== undefined ? eq(tasks.clientId, clientId) : undefined,
        inArray(tasks.status, ['open', 'in_progress', 'blocked']),
        or(eq(tasks.ownerId, me), arrayContains(tasks.assigneeIds, [me])),
        sql`${tasks.dueDate} is not null`,
        lte(tasks.dueDate, horizon),
      ),
    );
  return rows.map((t) =>
    action(t.dueDate! < today ? 'task_overdue' : 'task_due', t.id, {
      title: t.dueDate! < today ? `Overdue since ${t.dueDate}: ${t.title}` : `Due ${t.dueDate}: ${t.title}`,
      clientId: t.clientId,
      assigneeId: me,
      dueAt: `${t.dueDate}T00:00:00.000Z`,
      createdAt: t.createdAt.toISOString(),
    }),
  );
}

async function approvalActions(ctx: HandlerContext, clientId: string | undefined): Promise<Action[]> {
  const p = ctx.principal;
  if (!isPerson(p) || !ctx.policy.hasScope('approvals:decide')) return [];
  const rows = await ctx.db
    .select()
    .from(approvals)
    .where(
      and(
        eq(approvals.status, 'pending'),
        gt(approvals.expiresAt, ctx.now),
        ne(approvals.proposerId, p.id),
        clientId !== undefined ? eq(approvals.clientId, clientId) : undefined,
      ),
    );
  return rows
    .filter((r) => reaches(p, r.clientId) && !((r.decisions as ApprovalDecision[] | null) ?? []).some((d) => d.approver.id === p.id))
    .map((r) =>
      action('approval_pending', r.id, {
        title: `Decide ${r.operationId}${r.proposerName ? ` proposed by ${r.proposerName}` : ''}`,
        clientId: r.clientId,
        assigneeId: p.id,
        dueAt: r.expiresAt.toISOString(),
        createdAt: r.createdAt.toISOString(),
      }),
    );
}

async function reviewActions(ctx: HandlerContext, clientId: string | undefined): Promise<Action[]> {
  if (ctx.principal.kind === 'client_admin' || !ctx.policy.hasScope('reviews:release')) return [];
  const rows = await ctx.db
    .select()
    .from(reviews)
    .where(and(ctx.policy.clientWhere(reviews.clientId), clientId !== undefined ? eq(reviews.clientId, clientId) : undefined, eq(reviews.status, 'ready')));
  return rows.map((r) =>
    action('review_ready', r.id, {
      title: `Release review "${r.title}"`,
      clientId: r.clientId,
      assigneeId: null,
      dueAt: null,
      createdAt: r.createdAt.toISOString(),
    }),
  );
}

async function intakeActions(ctx: HandlerContext, clientId: string | undefined): Promise<Action[]> {
  if (!ctx.policy.hasScope('intake:write')) return [];
  const me = ctx.principal.id;
  const rows = await ctx.db
    .select()
    .from(intakeRecords)
    .where(
      and(
        ctx.policy.clientWhere(intakeRecords.clientId),
        clientId !== undefined ? eq(intakeRecords.clientId, clientId) : undefined,
        eq(intakeRecords.status, 'draft'),
        ctx.principal.kind === 'client_admin' ? undefined : eq(intakeRecords.createdById, me),
        sql`exists (select 1 from jsonb_array_elements(${intakeRecords.fields}) f
                    where (f->>'required')::boolean and (f->'value' is null or f->'value' = 'null'::jsonb))`,
      ),
    );
  return rows.map((r) =>
    action('intake_incomplete', r.id, {
      title: `Complete intake "${r.title}"`,
      clientId: r.clientId,
      assigneeId: me,
      dueAt: null,
      createdAt: r.createdAt.toISOString(),
    }),
  );
}

async function runActions(ctx: HandlerContext, clientId: string | undefined): Promise<Action[]> {
  if (!ctx.policy.hasScope('pipeline:read')) return [];
  const rows = await ctx.db
    .select()
    .from(pipelineRuns)
    .where(
      and(
        ctx.policy.recordWhere(pipelineRuns.clientId),
        clientId !== undefined ? eq(pipelineRuns.clientId, clientId) : undefined,
        eq(pipelineRuns.status, 'failed'),
        sql`not exists (select 1 from pipeline_runs c where c.parent_run_id = ${pipelineRuns.id})`,
      ),
    );
  return rows.map((r) =>
    action('follow_up', r.id, {
      title: `Pipeline run of ${r.pipeline} failed`,
      clientId: r.clientId,
      assigneeId: null,
      dueAt: null,
      createdAt: (r.finishedAt ?? r.createdAt).toISOString(),
    }),
  );
}

const SOURCES: Record<ActionKind, (ctx: HandlerContext, clientId: string | undefined) => Promise<Action[]>> = {
  task_due: taskActions,
  task_overdue: taskActions,
  approval_pending: approvalActions,
  review_ready: reviewActions,
  intake_incomplete: intakeActions,
  follow_up: runActions,
};

async function list(input: Schemas['ActionsListInput'], ctx: HandlerContext): Promise<Page<Action>> {
  const { clientId, assigneeId, kind } = input;
  if (clientId !== undefined) ctx.policy.assertClientInScope(clientId);
  const page = await startKeyedPage(ctx.db, input, 'actions.list', { clientId, assigneeId, kind, user: ctx.principal.id, credential: ctx.principal.credentialId });
  const { position } = page;

  const sources = [...new Set(kind ? [SOURCES[kind]] : Object.values(SOURCES))];
  const all: Action[] = [];
  for (const source of sources) all.push(...(await source(ctx, clientId))); // one at a time: one transaction
  const keyed = all
    .filter((a) => (kind === undefined || a.kind === kind) && (assigneeId === undefined || a.assigneeId === assigneeId))
    .map((a) => ({ a, key: sortKey(a.dueAt) }))
    .sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : x.a.id < y.a.id ? -1 : x.a.id > y.a.id ? 1 : 0))
    .filter((x) => !position || x.key > position.ts || (x.key === position.ts && x.a.id > position.id));
  return page.finish(keyed, (x) => x.a, (last) => ({ ts: last.key, id: last.a.id }));
}

export const actionsHandlers = {
  'actions.list': list,
} satisfies ActionsHandlers;
