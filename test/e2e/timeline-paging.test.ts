// timeline.list keyset paging across its two sources (issue 16): each branch (events, task comments)
// is read newest first and cut to a page before the two meet, so the page boundaries must stay those
// of the whole union. Entries are written straight into the tables with deliberate ties: events and
// comments at the same instant (the id breaks the tie, across sources), instants a microsecond apart
// within one millisecond (the cursor keeps microseconds), runs of one source at one instant longer
// than a page (a branch's own limit cuts through them), approval decisions proposed by the bound key
// and by another credential, and an event type the timeline does not show. Paging with small pages
// must return, for every caller kind and every filter, exactly the entries of the reference (the
// single-relation query filtered afterwards, as the handler read it before), each once, in
// (occurred_at desc, id desc) order; a bound caller never sees another client's entry. On PGlite and
// on PostgreSQL when DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type SQL } from 'drizzle-orm';
import { executeRows } from '../../runtime/data/client.ts';
import { startServerWithIdp, CALLERS, type World } from '../support/world.ts';

let w: World;
const ACME = 'cli_demo_acme';
const GLOBEX = 'cli_demo_globex';
const ACME_PROJECT = 'prj_demo_acme_portal';
const GLOBEX_PROJECT = 'prj_demo_globex_launch';
const OWNER = 'usr_demo_owner';
const TASKS = [
  { id: 'tsk_tl_acme', clientId: ACME, projectId: ACME_PROJECT },
  { id: 'tsk_tl_acme_loose', clientId: ACME, projectId: null },
  { id: 'tsk_tl_globex', clientId: GLOBEX, projectId: GLOBEX_PROJECT },
  { id: 'tsk_tl_internal', clientId: null, projectId: null },
] as const;
const TYPES = ['task.created', 'task.updated', 'task.completed', 'approval.approved', 'project.stage_advanced', 'membership.created', 'approval.rejected'] as const;

type Caller = (typeof CALLERS)[number];
/** What each caller reaches (test/support/world.ts): client ids, and null for internal entries. */
const REACH: Record<Caller, (clientId: string | null) => boolean> = {
  opAll: () => true,
  opScoped: (c) => c === null || c === ACME,
  clientAdmin: (c) => c === ACME,
  boundKey: (c) => c === ACME,
  unboundKey: (c) => c !== null,
};
/** API keys see only the approval decisions they proposed; people see every one they reach. */
let credentialOf: Record<Caller, string | null>;

let base: number;
let since: string;
/** An instant `ms` milliseconds and `us` microseconds after base, as microsecond RFC 3339. */
const at = (ms: number, us = 0) => `${new Date(base + ms).toISOString().slice(0, 23)}${String(us).padStart(3, '0')}Z`;

interface RefRow extends Record<string, unknown> {
  id: string;
  source: string;
  client_id: string | null;
  proposer_credential_id: string | null;
}

/** The reference: every entry as one relation, filtered afterwards (the handler's query before issue 16's rewrite). */
async function reference(filters: Record<string, string>): Promise<RefRow[]> {
  const conditions: SQL[] = [];
  if (filters.clientId) conditions.push(sql`entries.client_id = ${filters.clientId}`);
  if (filters.projectId) conditions.push(sql`entries.project_id = ${filters.projectId}`);
  if (filters.taskId) conditions.push(sql`entries.task_id = ${filters.taskId}`);
  if (filters.since) conditions.push(sql`entries.occurred_at >= ${filters.since}::timestamptz`);
  const where = conditions.length ? sql`where ${sql.join(conditions, sql` and `)}` : sql``;
  return executeRows<RefRow>(
    w.s.database.db,
    sql`select entries.id, entries.source, entries.client_id, entries.proposer_credential_id from (
      select e.id, e.type as source, e.client_id,
        case
          when e.type like 'task.%' or e.type in ('intake.finalized', 'review.released') then e.data->>'projectId'
          when e.type = 'project.stage_advanced' then e.subject_id
          when e.type like 'approval.%' and a.subject_type = 'project' then a.subject_id
          else null
        end as project_id,
        case when e.type like 'task.%' then e.subject_id else null end as task_id,
        e.occurred_at, a.proposer_credential_id
      from events e
      left join approvals a on e.type like 'approval.%' and a.id = e.subject_id
      where e.type in ('task.created', 'task.updated', 'task.completed', 'project.stage_advanced', 'intake.finalized',
        'review.released', 'approval.approved', 'approval.rejected')
      union all
      select c.id, 'comment', t.client_id, t.project_id, t.id, c.created_at, null::text
      from task_comments c join tasks t on t.id = c.task_id
    ) entries ${where}
    order by entries.occurred_at desc, entries.id desc`,
  );
}

function expectedFor(caller: Caller, rows: RefRow[]): string[] {
  const credential = credentialOf[caller];
  return rows
    .filter((r) => REACH[caller](r.client_id))
    .filter((r) => credential === null || !r.source.startsWith('approval.') || r.proposer_credential_id === credential)
    .map((r) => r.id);
}

interface Entry {
  id: string;
  clientId: string | null;
  occurredAt: string;
}

/** Every page of the timeline for these filters, checking each page's size and cursor. */
async function pageThrough(caller: Caller, filters: Record<string, string>, pageSize: number): Promise<Entry[]> {
  const all: Entry[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 1000; pages++) {
    const res = await w.rest(caller, 'timeline.list', { ...filters, pageSize, ...(cursor ? { cursor } : {}) });
    expect(res.status, `${caller} ${JSON.stringify(filters)}: ${JSON.stringify(res.body)}`).toBe(200);
    const items = res.body.items as Entry[];
    expect(items.length).toBeLessThanOrEqual(pageSize);
    all.push(...items);
    cursor = res.body.nextCursor as string | null;
    if (!cursor) return all;
    expect(items.length).toBe(pageSize);
  }
  throw new Error('the timeline did not end');
}

beforeAll(async () => {
  w = await startServerWithIdp();
  credentialOf = {
    opAll: null,
    opScoped: null,
    clientAdmin: null,
    boundKey: w.c.serviceKeyId as string,
    unboundKey: w.c.operatorKeyId as string,
  };
  base = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
  since = at(3);
  const db = w.s.database.db;
  for (const t of TASKS) {
    await executeRows(
      db,
      sql`insert into tasks (id, client_id, project_id, title, status, priority, created_by)
          values (${t.id}, ${t.clientId}, ${t.projectId}, ${`timeline ${t.id}`}, 'open', 'normal', ${OWNER})`,
    );
  }
  const approvals = [
    { id: 'apr_tl_bound', clientId: ACME, credential: w.c.serviceKeyId as string, subject: ACME_PROJECT },
    { id: 'apr_tl_other', clientId: ACME, credential: 'key_tl_other', subject: ACME_PROJECT },
    { id: 'apr_tl_unbound', clientId: GLOBEX, credential: w.c.operatorKeyId as string, subject: GLOBEX_PROJECT },
    { id: 'apr_tl_internal', clientId: null, credential: 'key_tl_other', subject: null },
  ];
  for (const a of approvals) {
    await executeRows(
      db,
      sql`insert into approvals (id, operation_id, tier, status, client_id, subject_type, subject_id, proposer_kind, proposer_id,
            proposer_credential_id, proposer_login_method, input, required_approvals, expires_at)
          values (${a.id}, 'projects.update', 2, 'approved', ${a.clientId}, ${a.subject ? 'project' : null}, ${a.subject}, 'operator',
            ${OWNER}, ${a.credential}, 'api_key', '{}'::jsonb, 1, now() + interval '1 day')`,
    );
  }
  // 10 milliseconds, each holding events and comments at the very same instant and others a few
  // microseconds later; ids chosen so that the tie-break by id interleaves the two sources.
  const events: SQL[] = [];
  const comments: SQL[] = [];
  let n = 0;
  for (let ms = 0; ms < 10; ms++) {
    for (const us of [0, 0, 0, 1, 2, 999]) {
      n++;
      const instant = at(ms, us);
      const task = TASKS[n % TASKS.length]!;
      const type = TYPES[n % TYPES.length]!;
      const id = `${n % 2 ? 'evt' : 'cmt'}_tl_${String(n).padStart(3, '0')}`;
      if (type.startsWith('task.')) {
        const data = JSON.stringify({ id: task.id, title: `timeline ${task.id}`, projectId: task.projectId });
        events.push(sql`(${id}, ${type}, ${instant}::timestamptz, ${task.clientId}, ${task.id}, 'operator', ${OWNER}, ${data}::jsonb)`);
      } else if (type.startsWith('approval.')) {
        const a = approvals[n % approvals.length]!;
        const data = JSON.stringify({ id: a.id, operationId: 'projects.update', status: 'approved' });
        events.push(sql`(${id}, ${type}, ${instant}::timestamptz, ${a.clientId}, ${a.id}, 'operator', 'usr_tl_gone', ${data}::jsonb)`);
      } else {
        const project = n % 3 ? { id: ACME_PROJECT, clientId: ACME } : { id: GLOBEX_PROJECT, clientId: GLOBEX };
        const data = JSON.stringify({ id: project.id, name: 'p', previousStage: 'a', stage: 'b' });
        events.push(sql`(${id}, ${type}, ${instant}::timestamptz, ${project.clientId}, ${project.id}, null, null, ${data}::jsonb)`);
      }
      // A comment at the same instant, its id on the other side of the event's.
      const commentId = `${n % 2 ? 'cmt' : 'evt'}_tl_${String(n).padStart(3, '0')}c`;
      comments.push(sql`(${commentId}, ${TASKS[(n + 1) % TASKS.length]!.id}, 'operator', ${OWNER}, 'Olivia', ${`note ${n}`}, ${instant}::timestamptz)`);
    }
  }
  // Runs of one source at one instant, longer than a page: a branch's own limit cuts through them.
  for (let i = 0; i < 9; i++) {
    const task = TASKS[i % TASKS.length]!;
    comments.push(sql`(${`cmt_tl_run${i}`}, ${task.id}, 'operator', ${OWNER}, 'Olivia', ${`run ${i}`}, ${at(10)}::timestamptz)`);
    const data = JSON.stringify({ id: task.id, title: `timeline ${task.id}`, projectId: task.projectId });
    events.push(sql`(${`evt_tl_run${i}`}, 'task.updated', ${at(11)}::timestamptz, ${task.clientId}, ${task.id}, 'operator', ${OWNER}, ${data}::jsonb)`);
  }
  await executeRows(
    db,
    sql`insert into events (id, type, occurred_at, client_id, subject_id, actor_kind, actor_id, data) values ${sql.join(events, sql`, `)}`,
  );
  await executeRows(
    db,
    sql`insert into task_comments (id, task_id, author_kind, author_id, author_name, body, created_at) values ${sql.join(comments, sql`, `)}`,
  );
}, 120_000);
afterAll(async () => {
  await w?.close();
});

const FILTERS: Record<string, string>[] = [
  {},
  { clientId: ACME },
  { clientId: GLOBEX },
  { projectId: ACME_PROJECT },
  { projectId: GLOBEX_PROJECT },
  { taskId: 'tsk_tl_acme' },
  { taskId: 'tsk_tl_internal' },
  { since: '' },
  { since: '', clientId: ACME },
  { since: '', projectId: ACME_PROJECT },
];

describe('timeline.list pages across events and comments', () => {
  it('the seeded entries tie across the two sources and within a millisecond', async () => {
    const rows = await reference({ since });
    expect(rows.some((r) => r.source === 'comment')).toBe(true);
    expect(rows.some((r) => r.source !== 'comment')).toBe(true);
    expect(rows.length).toBeGreaterThan(40);
  });

  for (const caller of CALLERS) {
    it(`${caller}: every entry exactly once, in (occurred_at, id) order, under every filter`, async () => {
      for (const raw of FILTERS) {
        const filters = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, k === 'since' ? since : v]));
        const reaches =
          (filters.clientId === undefined || REACH[caller](filters.clientId)) &&
          (filters.projectId === undefined || REACH[caller](filters.projectId === ACME_PROJECT ? ACME : GLOBEX)) &&
          (filters.taskId === undefined || REACH[caller](TASKS.find((t) => t.id === filters.taskId)!.clientId));
        if (!reaches) {
          expect((await w.rest(caller, 'timeline.list', filters)).status, `${caller} ${JSON.stringify(filters)}`).toBe(404);
          continue;
        }
        const expected = expectedFor(caller, await reference(filters));
        expect(expected.length, `${caller} ${JSON.stringify(filters)}`).toBeGreaterThan(0);
        // Pages of 3 cut through the ties; pages of 7 end elsewhere; one page of everything.
        for (const pageSize of [3, 7, 200]) {
          const got = await pageThrough(caller, filters, pageSize);
          const ids = got.map((e) => e.id);
          expect(ids, `${caller} ${JSON.stringify(filters)} pageSize ${pageSize}`).toEqual(expected);
          expect(new Set(ids).size).toBe(ids.length);
          const times = got.map((e) => e.occurredAt);
          expect([...times].sort().reverse()).toEqual(times);
          expect(got.every((e) => REACH[caller](e.clientId))).toBe(true);
        }
      }
    }, 120_000);
  }
});
