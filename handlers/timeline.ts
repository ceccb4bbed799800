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
// in person only (rule 1, Policy.taskWhere: whatever their client scope, never an API key or a
// client admin). approval_decided entries follow approvals' own rule: people with reach, and for an
// API key only the proposals it made itself. A clientId filter outside the scope, a project or a
// task out of reach answer 404 (taskId: the spec's "tasks.timeline").
import { eq, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import { executeRows } from '../runtime/db/client.ts';
import { projects, tasks } from '../runtime/db/schema.ts';
import type { HandlerContext, Page } from '../runtime/handler-types.ts';
import { isPerson } from '../runtime/approvals.ts';
import { startPage } from '../runtime/paging.ts';
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

/** The entries as one relation (id, source, client_id, project_id, task_id, actor, occurred_at, data). */
function entriesRelation(): SQL {
  const types = Object.keys(KIND_OF_EVENT);
  return sql`(
    select e.id, e.type as source, e.client_id,
      case
        when e.type like 'task.%' or e.type in ('intake.finalized', 'review.released') then e.data->>'projectId'
        when e.type = 'project.stage_advanced' then e.subject_id
        when e.type like 'approval.%' and a.subject_type = 'project' then a.subject_id
        else null
      end as project_id,
      case when e.type like 'task.%' then e.subject_id else null end as task_id,
      e.actor_kind, e.actor_id, u.name as actor_name, e.occurred_at, e.data, null::text as task_title,
      a.proposer_credential_id
    from events e
    left join approvals a on e.type like 'approval.%' and a.id = e.subject_id
    left join users u on u.id = e.actor_id
    where e.type in (${sql.join(
      types.map((t) => sql`${t}`),
      sql`, `,
    )})
    union all
    select c.id, 'comment' as source, t.client_id, t.project_id, t.id as task_id,
      c.author_kind, c.author_id, c.author_name, c.created_at, jsonb_build_object('commentId', c.id, 'body', c.body), t.title,
      null::text
    from task_comments c join tasks t on t.id = c.task_id
  ) entries`;
}

const col = (name: string) => sql.raw(`entries.${name}`) as unknown as AnyColumn;

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
    ctx.policy.assertTaskVisible(task);
  }
  const page = await startPage(ctx.db, input, 'timeline.list', { clientId, projectId, taskId, since });
  const conditions: SQL[] = [];
  const visible = ctx.policy.taskWhere(col('client_id'));
  if (visible) conditions.push(visible);
  if (!isPerson(ctx.principal)) {
    conditions.push(sql`(entries.source not like 'approval.%' or entries.proposer_credential_id = ${ctx.principal.credentialId})`);
  }
  if (clientId !== undefined) conditions.push(sql`entries.client_id = ${clientId}`);
  if (projectId !== undefined) conditions.push(sql`entries.project_id = ${projectId}`);
  if (taskId !== undefined) conditions.push(sql`entries.task_id = ${taskId}`);
  if (since !== undefined) conditions.push(sql`entries.occurred_at >= ${since}::timestamptz`);
  const after = page.after(col('occurred_at'), col('id'));
  if (after) conditions.push(after);
  const where = conditions.length ? sql`where ${sql.join(conditions, sql` and `)}` : sql``;
  const rows = await executeRows<EntryRow>(
    ctx.db,
    sql`select entries.id, entries.source, entries.client_id, entries.project_id, entries.task_id,
          entries.actor_kind, entries.actor_id, entries.actor_name, entries.data, entries.task_title,
          to_char(entries.occurred_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as occurred_at,
          to_char(entries.occurred_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as page_key
        from ${entriesRelation()}
        ${where}
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
