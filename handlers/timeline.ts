// timeline.list: what happened to tasks and their client's work, newest first. Nothing is stored
// for it: entries are read from the events outbox (written by ctx.emit in the transaction of the
// change) and from task comments (written by tasks.comment), so an entry exists exactly when its
// change committed. Kinds:
//   task.created / updated / completed -> task_created / task_updated / task_completed
//   project.stage_advanced -> project_stage_advanced; intake.finalized; review.released
//   approval.approved / rejected -> approval_decided; a task comment -> comment_added
// (membership events are not about work and stay in the events feed).
//
// Visibility: an entry carries its subject's client. Client-bound entries follow the client scope;
// entries with no client (internal tasks and their comments, internal approvals) reach operators
// in person only (rule 1, Policy.recordWhere: whatever their client scope, never an API key or a
// client admin). approval_decided entries follow approvals' own rule: people with reach, and for an
// API key only the proposals it made itself. A clientId filter outside the scope, a project or a
// task out of reach answer 404 (taskId: the spec's "tasks.timeline").
import { eq, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import { executeRows } from '../runtime/data/client.ts';
import { projects, tasks } from './data/schema.ts';
import type { HandlerContext, Page } from '../runtime/handler-types.ts';
import { isPerson } from '../runtime/pipeline/approvals.ts';
import { startPage } from '../runtime/data/paging.ts';
import { notFound } from '../runtime/problem-error.ts';
import type { TimelineHandlers } from '../generated/handlers/timeline.ts';
import type { components } from '../generated/types.ts';

type Schemas = components['schemas'];
type TimelineEntry = Schemas['TimelineEntry'];
type EntryKind = TimelineEntry['kind'];

const KIND_OF_EVENT: Record<string, EntryKind> = {
  'task.created': 'task_created',
  'task.updated': 'task_updated',
  'task.completed': 'task_completed',
  'project.stage_advanced': 'project_stage_advanced',
  'intake.finalized': 'intake_finalized',
  'review.released': 'review_released',
  'approval.approved': 'approval_decided',
  'approval.rejected': 'approval_decided',
};

interface EntryRow extends Record<string, unknown> {
  id: string;
  source: string;
  client_id: string | null;
  project_id: string | null;
  task_id: string | null;
  actor_kind: string | null;
  actor_id: string | null;
  actor_name: string | null;
  occurred_at: string;
  page_key: string;
  data: unknown;
  task_title: string | null;
}

// The entries are two branches, each read newest first and cut to one page before they meet: every
// condition (visibility, filters, the keyset position) is written on the branch's own columns, each
// branch is ordered by its own (occurred_at, id) and limited to the rows asked, and the outer query
// merges the two (at most 2 x fetch rows) in the same order and limit. That is the page of the whole
// union: its first `fetch` rows in (occurred_at desc, id desc) order are among the first `fetch` of
// each branch (an id is unique within its branch, so each branch's order is total).
// Events are read by events_occurred (occurred_at, id), or events_client_occurred (client_id,
// occurred_at, id) for a caller bound to a client, approvals and users then joined by primary key;
// comments by task_comments_created (created_at, id), each comment's task by its primary key. For a
// caller bound to clients the comment's client is the task's (comments carry none), so PostgreSQL
// may rather hash-join the client's tasks (tasks_client_created) to every comment and sort.

/** The columns of one branch that conditions are written on. */
interface BranchColumns {
  clientId: SQL;
  projectId: SQL;
  taskId: SQL;
  occurredAt: SQL;
  id: SQL;
}

/** The events branch: the project an entry concerns (select list and projectId filter alike). */
const EVENT_PROJECT_ID = sql`case
        when e.type like 'task.%' or e.type in ('intake.finalized', 'review.released') then e.data->>'projectId'
        when e.type = 'project.stage_advanced' then e.subject_id
        when e.type like 'approval.%' and a.subject_type = 'project' then a.subject_id
        else null
      end`;
const EVENT_TASK_ID = sql`case when e.type like 'task.%' then e.subject_id else null end`;

const EVENT_COLUMNS: BranchColumns = {
  clientId: sql.raw('e.client_id'),
  projectId: EVENT_PROJECT_ID,
  taskId: EVENT_TASK_ID,
  occurredAt: sql.raw('e.occurred_at'),
  id: sql.raw('e.id'),
};

// A comment's task is t.id = c.task_id: the taskId filter is written on c.task_id (task_comments_task).
const COMMENT_COLUMNS: BranchColumns = {
  clientId: sql.raw('t.client_id'),
  projectId: sql.raw('t.project_id'),
  taskId: sql.raw('c.task_id'),
  occurredAt: sql.raw('c.created_at'),
  id: sql.raw('c.id'),
};

const asColumn = (ref: SQL) => ref as unknown as AnyColumn;

const whereOf = (conditions: SQL[]): SQL => (conditions.length ? sql`where ${sql.join(conditions, sql` and `)}` : sql``);

/**
 * The page as one relation (id, source, client_id, project_id, task_id, actor, occurred_at, data,
 * task_title): each branch filtered by `conditionsOf` its columns (plus the events branch's own
 * `eventConditions`), ordered by (occurred_at desc, id desc) and limited to `fetch`.
 */
function entriesRelation(conditionsOf: (b: BranchColumns) => SQL[], eventConditions: SQL[], fetch: number): SQL {
  const types = Object.keys(KIND_OF_EVENT);
  const eventWhere = whereOf([
    sql`e.type in (${sql.join(
      types.map((t) => sql`${t}`),
      sql`, `,
    )})`,
    ...eventConditions,
    ...conditionsOf(EVENT_COLUMNS),
  ]);
  return sql`(
    (select e.id, e.type as source, e.client_id, ${EVENT_PROJECT_ID} as project_id, ${EVENT_TASK_ID} as task_id,
      e.actor_kind, e.actor_id, u.name as actor_name, e.occurred_at, e.data, null::text as task_title
    from events e
    left join approvals a on e.type like 'approval.%' and a.id = e.subject_id
    left join users u on u.id = e.actor_id
    ${eventWhere}
    order by e.occurred_at desc, e.id desc
    limit ${fetch})
    union all
    (select c.id, 'comment' as source, t.client_id, t.project_id, t.id as task_id,
      c.author_kind, c.author_id, c.author_name, c.created_at, jsonb_build_object('commentId', c.id, 'body', c.body), t.title
    from task_comments c join tasks t on t.id = c.task_id
    ${whereOf(conditionsOf(COMMENT_COLUMNS))}
    order by c.created_at desc, c.id desc
    limit ${fetch})
  ) entries`;
}

function summaryOf(kind: EntryKind, data: Record<string, unknown>, taskTitle: string | null): string {
  const name = (v: unknown) => (typeof v === 'string' ? `"${v}"` : 'a record');
  switch (kind) {
    case 'task_created':
      return `Task ${name(data.title)} was created`;
    case 'task_updated':
      return `Task ${name(data.title)} was updated`;
    case 'task_completed':
      return `Task ${name(data.title)} was completed`;
    case 'comment_added':
      return `Comment on task ${name(taskTitle)}`;
    case 'project_stage_advanced':
      return `Project ${name(data.name)} moved from ${String(data.previousStage ?? '?')} to ${String(data.stage ?? '?')}`;
    case 'intake_finalized':
      return `Intake record ${name(data.title)} was finalized`;
    case 'review_released':
      return `Review ${name(data.title)} was released`;
    case 'approval_decided':
      return `Proposal ${String(data.operationId ?? '')} was ${String(data.status ?? 'decided')}`;
    default:
      return String(kind);
  }
}

/**
 * What an entry shows of its record. The timeline is read under tasks:read, so task entries carry the
 * task (and a comment its body), while the others carry only ids, titles and the change, never the
 * record itself (an intake record's values need intake:read, a proposal's input approvals:read).
 */
function dataOf(kind: EntryKind, full: Record<string, unknown>): Record<string, unknown> {
  const pick = (...keys: [string, string][]) => Object.fromEntries(keys.map(([to, from]) => [to, full[from] ?? null]));
  switch (kind) {
    case 'approval_decided':
      return pick(['approvalId', 'id'], ['operationId', 'operationId'], ['status', 'status']);
    case 'project_stage_advanced':
      return pick(['projectId', 'id'], ['name', 'name'], ['previousStage', 'previousStage'], ['stage', 'stage']);
    case 'intake_finalized':
      return pick(['intakeId', 'id'], ['title', 'title'], ['status', 'status']);
    case 'review_released':
      return pick(['reviewId', 'id'], ['title', 'title'], ['releasedAt', 'releasedAt']);
    default:
      return full;
  }
}

function toEntry(row: EntryRow): TimelineEntry {
  const raw = typeof row.data === 'string' ? (JSON.parse(row.data) as unknown) : row.data;
  const full = (raw && typeof raw === 'object' && !Array.isArray(raw) ? raw : {}) as Record<string, unknown>;
  const kind: EntryKind = row.source === 'comment' ? 'comment_added' : KIND_OF_EVENT[row.source]!;
  const data = dataOf(kind, full);
  return {
    id: row.id,
    kind,
    clientId: row.client_id,
    projectId: row.project_id,
    taskId: row.task_id,
    summary: summaryOf(kind, full, row.task_title),
    actor: row.actor_kind && row.actor_id ? { kind: row.actor_kind as 'operator', id: row.actor_id, name: row.actor_name } : null,
    occurredAt: row.occurred_at,
    data,
  };
}

async function list(input: Schemas['TimelineListInput'], ctx: HandlerContext): Promise<Page<TimelineEntry>> {
  const { clientId, projectId, taskId, since } = input;
  if (clientId !== undefined) ctx.policy.assertClientInScope(clientId);
  if (projectId !== undefined) {
    const [project] = await ctx.db.select({ clientId: projects.clientId }).from(projects).where(eq(projects.id, projectId));
    if (!project || !ctx.policy.canReadClient(project.clientId)) throw notFound('Project');
  }
  if (taskId !== undefined) {
    const [task] = await ctx.db.select({ clientId: tasks.clientId }).from(tasks).where(eq(tasks.id, taskId));
    ctx.policy.assertRecordVisible(task, 'Task');
  }
  const page = await startPage(ctx.db, input, 'timeline.list', { clientId, projectId, taskId, since });
  // Every condition, on one branch's columns (the same for both branches).
  const conditionsOf = (b: BranchColumns): SQL[] => {
    const conditions: SQL[] = [];
    const visible = ctx.policy.recordWhere(asColumn(b.clientId));
    if (visible) conditions.push(visible);
    if (clientId !== undefined) conditions.push(sql`${b.clientId} = ${clientId}`);
    if (projectId !== undefined) conditions.push(sql`${b.projectId} = ${projectId}`);
    if (taskId !== undefined) conditions.push(sql`${b.taskId} = ${taskId}`);
    if (since !== undefined) conditions.push(sql`${b.occurredAt} >= ${since}::timestamptz`);
    const after = page.after(asColumn(b.occurredAt), asColumn(b.id));
    if (after) conditions.push(after);
    return conditions;
  };
  // approval_decided entries for an API key: only the proposals it made itself (comments are never approvals).
  const eventConditions: SQL[] = [];
  if (!isPerson(ctx.principal)) {
    eventConditions.push(sql`(e.type not like 'approval.%' or a.proposer_credential_id = ${ctx.principal.credentialId})`);
  }
  const rows = await executeRows<EntryRow>(
    ctx.db,
    sql`select entries.id, entries.source, entries.client_id, entries.project_id, entries.task_id,
          entries.actor_kind, entries.actor_id, entries.actor_name, entries.data, entries.task_title,
          to_char(entries.occurred_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as occurred_at,
          to_char(entries.occurred_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as page_key
        from ${entriesRelation(conditionsOf, eventConditions, page.fetch)}
        order by entries.occurred_at desc, entries.id desc
        limit ${page.fetch}`,
  );
  return page.finish(
    rows.map((r) => ({ ...r, pageKey: r.page_key })),
    toEntry,
  );
}

export const timelineHandlers = {
  'timeline.list': list,
} satisfies TimelineHandlers;
