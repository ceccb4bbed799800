// Where a client stands, computed from rows when asked: clients.summary, clients.health,
// clients.launch_readiness and the hub snapshot (clients.publish_hub). The formulas are the
// contract's decisions on those operations (contract/families/clients.yaml).
//
// Intake records and pipeline runs belong to families built elsewhere (issues W4, W6). Their
// checks read those tables only once they exist with the columns used here, so until then they
// read as empty (no intake records, no failed runs), never as an error.
import { createHash } from 'node:crypto';
import { and, asc, desc, eq, inArray, lt, ne, sql } from 'drizzle-orm';
import { executeRows, type Db } from '../runtime/data/client.ts';
import { approvals, events } from '../runtime/data/schema.ts';
import { hubPublications, projects, reviews, tasks, touchpoints } from './data/schema.ts';
import type { components } from '../generated/types.ts';
import type { ClientRow } from './mappers/crm.ts';

type Schemas = components['schemas'];
export type ClientSummary = Schemas['ClientSummary'];
export type ClientHealth = Schemas['ClientHealth'];
export type HealthSignal = Schemas['HealthSignal'];
export type LaunchReadiness = Schemas['LaunchReadiness'];
export type LaunchCheck = Schemas['LaunchCheck'];

const DAY = 86_400_000;
export const HEALTH = {
  overduePerTask: 10,
  overdueCap: 40,
  overdueCriticalFrom: 3,
  stalledDays: 30,
  stalledPerProject: 15,
  stalledCap: 30,
  failedRunDays: 7,
  failedRunPenalty: 25,
  quietDays: 14,
  quietPenalty: 20,
  healthyFrom: 70,
  atRiskFrom: 40,
} as const;

const n = (v: unknown): number => Number(v ?? 0);

/** True when `table` exists with every listed column (a family not built yet reads as empty). */
async function hasColumns(db: Db, table: string, columns: string[]): Promise<boolean> {
  const rows = await executeRows<{ n: string }>(db, 
    sql`select count(*)::text as n from information_schema.columns
        where table_schema = current_schema() and table_name = ${table} and column_name in (${sql.join(
          columns.map((c) => sql`${c}`),
          sql`, `,
        )})`,
  );
  return n(rows[0]?.n) === columns.length;
}

/** Intake records of the client: total and still in draft (zero while the intake family has no table). */
export async function intakeCounts(db: Db, clientId: string): Promise<{ total: number; draft: number }> {
  if (!(await hasColumns(db, 'intake_records', ['client_id', 'status']))) return { total: 0, draft: 0 };
  const rows = await executeRows<{ total: string; draft: string }>(db, 
    sql`select count(*)::text as total, count(*) filter (where status = 'draft')::text as draft
        from intake_records where client_id = ${clientId}`,
  );
  return { total: n(rows[0]?.total), draft: n(rows[0]?.draft) };
}

/** Failed pipeline runs of the client since `since` (zero while the pipeline family has no table). */
export async function failedRunsSince(db: Db, clientId: string, since: Date): Promise<number> {
  if (!(await hasColumns(db, 'pipeline_runs', ['client_id', 'status', 'created_at']))) return 0;
  const rows = await executeRows<{ n: string }>(db, 
    sql`select count(*)::text as n from pipeline_runs
        where client_id = ${clientId} and status = 'failed' and created_at >= ${since.toISOString()}::timestamptz`,
  );
  return n(rows[0]?.n);
}

function today(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/** Open (not done) and overdue task counts of the client; internal tasks have no client and never count. */
async function taskCounts(db: Db, clientId: string, now: Date): Promise<{ open: number; overdue: number }> {
  const [row] = await db
    .select({
      open: sql<string>`count(*)::text`,
      overdue: sql<string>`count(*) filter (where ${tasks.dueDate} < ${today(now)}::date)::text`,
    })
    .from(tasks)
    .where(and(eq(tasks.clientId, clientId), ne(tasks.status, 'done')));
  return { open: n(row?.open), overdue: n(row?.overdue) };
}

/** The latest thing recorded for the client: events, task, project, review and touchpoint changes. */
export async function lastActivityAt(db: Db, clientId: string): Promise<Date | null> {
  const rows = await executeRows<{ at: string | null }>(db, sql`
    select max(at)::text as at from (
      select max(${events.occurredAt}) as at from ${events} where ${events.clientId} = ${clientId}
      union all select max(${tasks.updatedAt}) from ${tasks} where ${tasks.clientId} = ${clientId}
      union all select max(${projects.updatedAt}) from ${projects} where ${projects.clientId} = ${clientId}
      union all select max(${reviews.updatedAt}) from ${reviews} where ${reviews.clientId} = ${clientId}
      union all select max(${touchpoints.createdAt}) from ${touchpoints} where ${touchpoints.clientId} = ${clientId}
    ) as activity`);
  const at = rows[0]?.at;
  return at ? new Date(at) : null;
}

export async function summary(db: Db, client: ClientRow, now: Date): Promise<ClientSummary> {
  const t = await taskCounts(db, client.id, now);
  const [p] = await db
    .select({ n: sql<string>`count(*)::text` })
    .from(projects)
    .where(and(eq(projects.clientId, client.id), eq(projects.status, 'active')));
  const [a] = await db
    .select({ n: sql<string>`count(*)::text` })
    .from(approvals)
    .where(and(eq(approvals.clientId, client.id), eq(approvals.status, 'pending'), sql`${approvals.expiresAt} > ${now.toISOString()}::timestamptz`));
  const [r] = await db
    .select({ n: sql<string>`count(*)::text` })
    .from(reviews)
    .where(and(eq(reviews.clientId, client.id), inArray(reviews.status, ['draft', 'ready'])));
  const intake = await intakeCounts(db, client.id);
  const last = await lastActivityAt(db, client.id);
  return {
    clientId: client.id,
    activeProjects: n(p?.n),
    openTasks: t.open,
    overdueTasks: t.overdue,
    pendingApprovals: n(a?.n),
    openReviews: n(r?.n),
    openIntakeRecords: intake.draft,
    lastActivityAt: last ? last.toISOString() : null,
  };
}

export async function health(db: Db, client: ClientRow, now: Date): Promise<ClientHealth> {
  const signals: HealthSignal[] = [];
  let penalty = 0;

  const { overdue } = await taskCounts(db, client.id, now);
  if (overdue > 0) {
    penalty += Math.min(HEALTH.overdueCap, overdue * HEALTH.overduePerTask);
    signals.push({
      code: 'overdue_tasks',
      severity: overdue >= HEALTH.overdueCriticalFrom ? 'critical' : 'warning',
      message: `${overdue} open task${overdue === 1 ? ' is' : 's are'} past the due date.`,
    });
  }

  const stalledBefore = new Date(now.getTime() - HEALTH.stalledDays * DAY);
  const stalled = await db
    .select({ id: projects.id, name: projects.name, stage: projects.stage })
    .from(projects)
    .where(and(eq(projects.clientId, client.id), eq(projects.status, 'active'), lt(projects.updatedAt, stalledBefore)))
    .orderBy(asc(projects.id));
  if (stalled.length > 0) {
    penalty += Math.min(HEALTH.stalledCap, stalled.length * HEALTH.stalledPerProject);
    signals.push({
      code: 'stalled_stage',
      severity: 'warning',
      message: `${stalled.map((s) => `${s.name} (${s.stage})`).join(', ')} unchanged for ${HEALTH.stalledDays} days or more.`,
    });
  }

  const failed = await failedRunsSince(db, client.id, new Date(now.getTime() - HEALTH.failedRunDays * DAY));
  if (failed > 0) {
    penalty += HEALTH.failedRunPenalty;
    signals.push({
      code: 'failed_pipeline_run',
      severity: 'critical',
      message: `${failed} pipeline run${failed === 1 ? '' : 's'} failed in the last ${HEALTH.failedRunDays} days.`,
    });
  }

  const last = await lastActivityAt(db, client.id);
  if (last === null || last.getTime() < now.getTime() - HEALTH.quietDays * DAY) {
    penalty += HEALTH.quietPenalty;
    signals.push({
      code: 'no_recent_activity',
      severity: 'warning',
      message: last === null ? 'Nothing has been recorded for this client.' : `No activity since ${last.toISOString()}.`,
    });
  }

  const score = Math.max(0, 100 - penalty);
  return {
    clientId: client.id,
    score,
    status: score >= HEALTH.healthyFrom ? 'healthy' : score >= HEALTH.atRiskFrom ? 'at_risk' : 'critical',
    signals,
    computedAt: now.toISOString(),
  };
}

/** The client's released material as the hub shows it, and its SHA-256 content hash. */
export async function hubSnapshot(db: Db, client: ClientRow): Promise<{ content: Record<string, unknown>; hash: string }> {
  const released = await db
    .select({
      id: reviews.id,
      projectId: reviews.projectId,
      title: reviews.title,
      kind: reviews.kind,
      summary: reviews.summary,
      fileIds: reviews.fileIds,
      releasedAt: reviews.releasedAt,
    })
    .from(reviews)
    .where(and(eq(reviews.clientId, client.id), eq(reviews.status, 'released')))
    .orderBy(asc(reviews.id));
  const stages = await db
    .select({ id: projects.id, name: projects.name, stage: projects.stage, status: projects.status })
    .from(projects)
    .where(eq(projects.clientId, client.id))
    .orderBy(asc(projects.id));
  const content = {
    client: { id: client.id, name: client.name, status: client.status },
    reviews: released.map((r) => ({ ...r, fileIds: [...r.fileIds], releasedAt: r.releasedAt ? r.releasedAt.toISOString() : null })),
    projects: stages,
  };
  const hash = createHash('sha256').update(JSON.stringify(content)).digest('hex');
  return { content, hash };
}

export async function latestHub(db: Db, clientId: string): Promise<typeof hubPublications.$inferSelect | undefined> {
  const [row] = await db
    .select()
    .from(hubPublications)
    .where(eq(hubPublications.clientId, clientId))
    .orderBy(desc(hubPublications.version))
    .limit(1);
  return row;
}

export async function launchReadiness(db: Db, client: ClientRow, now: Date): Promise<LaunchReadiness> {
  const checks: LaunchCheck[] = [];

  const intake = await intakeCounts(db, client.id);
  checks.push({
    id: 'intake_finalized',
    label: 'Intake finalized',
    status: intake.total === 0 ? 'pending' : intake.draft > 0 ? 'failed' : 'passed',
    detail: intake.total === 0 ? 'No intake record yet.' : intake.draft > 0 ? `${intake.draft} intake record(s) still in draft.` : null,
  });

  const [r] = await db
    .select({ total: sql<string>`count(*)::text`, open: sql<string>`count(*) filter (where ${reviews.status} <> 'released')::text` })
    .from(reviews)
    .where(eq(reviews.clientId, client.id));
  const totalReviews = n(r?.total);
  const openReviews = n(r?.open);
  checks.push({
    id: 'reviews_released',
    label: 'Reviews released',
    status: totalReviews === 0 ? 'pending' : openReviews > 0 ? 'failed' : 'passed',
    detail: totalReviews === 0 ? 'No review yet.' : openReviews > 0 ? `${openReviews} review(s) not released.` : null,
  });

  const latest = await latestHub(db, client.id);
  const { hash } = await hubSnapshot(db, client);
  checks.push({
    id: 'hub_published',
    label: 'Hub published',
    status: !latest ? 'pending' : latest.contentHash === hash ? 'passed' : 'failed',
    detail: !latest ? 'The hub has never been published.' : latest.contentHash === hash ? null : `Material changed since hub version ${latest.version}.`,
  });

  const [launching] = await db
    .select({ id: projects.id })
    .from(projects)
    .where(and(eq(projects.clientId, client.id), eq(projects.status, 'active'), inArray(projects.stage, ['launch', 'live'])))
    .limit(1);
  checks.push({
    id: 'project_stage',
    label: 'A project in launch or live',
    status: launching ? 'passed' : 'pending',
    detail: launching ? null : 'No active project has reached launch.',
  });

  const blockingCount = checks.filter((c) => c.status !== 'passed').length;
  return { clientId: client.id, ready: blockingCount === 0, blockingCount, checks, computedAt: now.toISOString() };
}
