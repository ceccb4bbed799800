// Timeline, actions and notifications (issue 13, first half), over REST and MCP (the SDK Client), on
// PGlite and on PostgreSQL when DATABASE_URL is set. Every caller kind of test/support/world.ts
// against two clients (Acme in the bound callers' reach, Globex outside it) and internal tasks:
//   opAll       operator over every client (OAuth)     Acme, Globex, internal
//   opScoped    operator scoped to Acme (OAuth)        Acme, internal (rule 1)
//   clientAdmin client admin of Acme (OAuth)           Acme
//   boundKey    API key bound to Acme                  Acme
//   unboundKey  API key of the owner, not bound        Acme, Globex (never internal: keys are not widened)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { notifications } from '../../runtime/data/schema.ts';
import { intakeRecords, pipelineRuns, tasks } from '../../handlers/data/schema.ts';
import { startServerWithIdp, CALLERS, type CallerName, type World } from '../support/world.ts';

let w: World;
let t0: string;
const ACME = 'cli_demo_acme';
const GLOBEX = 'cli_demo_globex';
const U = {
  owner: 'usr_demo_owner',
  admin: 'usr_demo_admin',
  staff: 'usr_demo_operator',
  scoped: 'usr_demo_scoped',
  viewer: 'usr_demo_viewer',
  clientAdmin: 'usr_demo_client_admin',
};
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

type Reach = 'acme' | 'globex' | 'internal';
const REACH: Record<(typeof CALLERS)[number], Reach[]> = {
  opAll: ['acme', 'globex', 'internal'],
  opScoped: ['acme', 'internal'],
  clientAdmin: ['acme'],
  boundKey: ['acme'],
  unboundKey: ['acme', 'globex'],
};
const TRANSPORTS = ['rest', 'mcp'] as const;

async function call(transport: 'rest' | 'mcp', caller: CallerName, op: string, input: Record<string, unknown> = {}) {
  return transport === 'rest' ? w.rest(caller, op, input) : w.mcp(caller, op, input);
}

async function createTask(caller: CallerName, body: Record<string, unknown>): Promise<string> {
  const res = await w.rest(caller, 'tasks.create', body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.result.id as string;
}

async function notificationsOf(userId: string) {
  return w.s.database.db.select().from(notifications).where(eq(notifications.userId, userId));
}

async function allNotifications() {
  return w.s.database.db.select().from(notifications);
}

// Records made in beforeAll.
const made: Record<string, string> = {};

beforeAll(async () => {
  w = await startServerWithIdp();
  t0 = new Date(Date.now() - 1000).toISOString();
  // Timeline markers: one task per reach, each commented.
  made.acmeTask = await createTask('opAll', { clientId: ACME, title: 'wv acme task', assigneeIds: [U.staff], dueDate: day(1) });
  made.globexTask = await createTask('opAll', { clientId: GLOBEX, title: 'wv globex task', assigneeIds: [U.staff], dueDate: day(1) });
  made.internalTask = await createTask('opAll', { title: 'wv internal task', assigneeIds: [U.staff], dueDate: day(-1) });
  for (const id of [made.acmeTask, made.globexTask, made.internalTask]) {
    expect((await w.rest('opAll', 'tasks.comment', { task_id: id, body: `note on ${id}` })).status).toBe(201);
  }
}, 120_000);
afterAll(async () => {
  await w?.close();
});

function reachOf(clientId: string | null): Reach {
  return clientId === null ? 'internal' : clientId === ACME ? 'acme' : clientId === GLOBEX ? 'globex' : ('other' as Reach);
}

describe('timeline.list visibility', () => {
  for (const transport of TRANSPORTS) {
    for (const caller of CALLERS) {
      it(`${caller} over ${transport} sees exactly the entries of ${REACH[caller].join(', ')}`, async () => {
        const res = await call(transport, caller, 'timeline.list', { since: t0, pageSize: 200 });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const items = res.body.items as { id: string; kind: string; clientId: string | null; taskId: string | null; occurredAt: string }[];
        const ours = items.filter((e) => [made.acmeTask, made.globexTask, made.internalTask].includes(e.taskId ?? ''));
        const seen = new Set(ours.map((e) => reachOf(e.clientId)));
        expect([...seen].sort()).toEqual([...REACH[caller]].sort());
        // Each visible task has its creation and its comment, newest first.
        for (const r of REACH[caller]) {
          const kinds = ours.filter((e) => reachOf(e.clientId) === r).map((e) => e.kind);
          expect(kinds).toEqual(['comment_added', 'task_created']);
        }
        const times = items.map((e) => e.occurredAt);
        expect([...times].sort().reverse()).toEqual(times);
        // No entry about an internal task reaches anyone but an operator in person.
        if (!REACH[caller].includes('internal')) expect(items.every((e) => e.clientId !== null)).toBe(true);
        if (!REACH[caller].includes('globex')) expect(items.every((e) => e.clientId !== GLOBEX)).toBe(true);
      });
    }
  }

  it('filters: taskId (the spec\'s tasks.timeline), a task out of reach and a clientId outside the scope answer 404', async () => {
    for (const caller of CALLERS) {
      for (const [reach, task] of [
        ['acme', made.acmeTask],
        ['globex', made.globexTask],
        ['internal', made.internalTask],
      ] as const) {
        for (const transport of TRANSPORTS) {
          const res = await call(transport, caller, 'timeline.list', { taskId: task });
          if (REACH[caller].includes(reach)) {
            expect(res.status, `${caller} ${transport} ${reach}`).toBe(200);
            expect(res.body.items.map((e: { taskId: string }) => e.taskId)).toEqual([task, task]);
          } else {
            expect(res.status, `${caller} ${transport} ${reach}`).toBe(404);
            expect(res.body.code).toBe('not_found');
          }
        }
      }
      const byClient = await w.rest(caller, 'timeline.list', { clientId: GLOBEX, since: t0 });
      expect(byClient.status, caller).toBe(REACH[caller].includes('globex') ? 200 : 404);
      if (byClient.status === 200) expect(byClient.body.items.every((e: { clientId: string }) => e.clientId === GLOBEX)).toBe(true);
    }
  });

  it('projectId filters to a project (404 out of reach); since and paging work', async () => {
    const res = await w.rest('opAll', 'timeline.list', { projectId: 'prj_demo_acme_portal' });
    expect(res.status).toBe(200);
    expect(res.body.items.length).toBeGreaterThan(0);
    expect(res.body.items.every((e: { projectId: string }) => e.projectId === 'prj_demo_acme_portal')).toBe(true);
    expect((await w.rest('clientAdmin', 'timeline.list', { projectId: 'prj_demo_globex_launch' })).status).toBe(404);
    const first = await w.rest('opAll', 'timeline.list', { pageSize: 2 });
    const second = await w.rest('opAll', 'timeline.list', { pageSize: 2, cursor: first.body.nextCursor });
    expect(second.status).toBe(200);
    const ids = [...first.body.items, ...second.body.items].map((e: { id: string }) => e.id);
    expect(new Set(ids).size).toBe(4);
    expect((await w.rest('opAll', 'timeline.list', { pageSize: 2, cursor: first.body.nextCursor, taskId: made.acmeTask })).status).toBe(422);
  });
});

describe('actions.list visibility', () => {
  beforeAll(async () => {
    // Due tomorrow in Acme and Globex, overdue internally; assigned to the owner (whose keys are boundKey
    // and unboundKey), the scoped operator and the client admin where allowed.
    made.acmeDue = await createTask('opAll', { clientId: ACME, title: 'wv act acme', assigneeIds: [U.owner, U.scoped, U.clientAdmin], dueDate: day(1) });
    made.globexDue = await createTask('opAll', { clientId: GLOBEX, title: 'wv act globex', assigneeIds: [U.owner, U.scoped], dueDate: day(2) });
    made.internalDue = await createTask('opAll', { title: 'wv act internal', assigneeIds: [U.owner, U.scoped], dueDate: day(-2) });
    made.farAway = await createTask('opAll', { clientId: ACME, title: 'wv act later', assigneeIds: [U.owner, U.scoped, U.clientAdmin], dueDate: day(30) });
    // A client admin who was assigned to an internal task before the rule (written directly): never shown to it.
    made.legacyInternal = 'tsk_wv_legacy_internal';
    await w.s.database.db.insert(tasks).values({
      id: made.legacyInternal,
      clientId: null,
      title: 'wv legacy internal',
      status: 'open',
      priority: 'normal',
      ownerId: U.clientAdmin,
      assigneeIds: [U.clientAdmin, U.scoped],
      dueDate: day(1),
      createdBy: U.owner,
    });
  });

  const TASKS: Record<Reach, () => string[]> = {
    acme: () => [made.acmeDue],
    globex: () => [made.globexDue],
    internal: () => [made.internalDue, made.legacyInternal],
  };
  // The callers assigned to each: opAll/boundKey/unboundKey act as the owner.
  const ASSIGNED: Record<(typeof CALLERS)[number], Reach[]> = {
    opAll: ['acme', 'globex', 'internal'],
    opScoped: ['acme', 'internal'],
    clientAdmin: ['acme'],
    boundKey: ['acme'],
    unboundKey: ['acme', 'globex'],
  };

  for (const transport of TRANSPORTS) {
    for (const caller of CALLERS) {
      it(`${caller} over ${transport}: its due and overdue tasks in reach, soonest first`, async () => {
        const res = await call(transport, caller, 'actions.list', { pageSize: 200 });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const items = res.body.items as { kind: string; subjectId: string; dueAt: string | null; clientId: string | null; assigneeId: string | null }[];
        const taskItems = items.filter((a) => a.kind === 'task_due' || a.kind === 'task_overdue');
        const subjects = new Set(taskItems.map((a) => a.subjectId));
        for (const r of ['acme', 'globex', 'internal'] as const) {
          for (const id of TASKS[r]()) {
            const expected = ASSIGNED[caller].includes(r) && (id !== made.legacyInternal || caller === 'opScoped' || caller === 'opAll');
            // opAll is not an assignee of the legacy task.
            expect(subjects.has(id), `${caller} ${r} ${id}`).toBe(expected && !(caller === 'opAll' && id === made.legacyInternal));
          }
        }
        expect(subjects.has(made.farAway)).toBe(false);
        if (subjects.has(made.internalDue)) expect(taskItems.find((a) => a.subjectId === made.internalDue)!.kind).toBe('task_overdue');
        if (subjects.has(made.acmeDue)) expect(taskItems.find((a) => a.subjectId === made.acmeDue)!.kind).toBe('task_due');
        if (!REACH[caller].includes('internal')) expect(items.every((a) => a.clientId !== null)).toBe(true);
        if (!REACH[caller].includes('globex')) expect(items.every((a) => a.clientId !== GLOBEX)).toBe(true);
        // Soonest due first, no due date last.
        const keys = items.map((a) => a.dueAt ?? '9999');
        expect([...keys].sort()).toEqual(keys);
      });
    }
  }

  it('approval_pending: people with approvals:decide and reach, never the proposer or a key', async () => {
    const acme = await w.rest('unboundKey', 'projects.create', { clientId: ACME, name: 'wv proposal acme' });
    const globex = await w.rest('unboundKey', 'projects.create', { clientId: GLOBEX, name: 'wv proposal globex' });
    expect([acme.status, globex.status]).toEqual([202, 202]);
    const pending = async (caller: CallerName) =>
      ((await w.rest(caller, 'actions.list', { kind: 'approval_pending', pageSize: 200 })).body.items as { subjectId: string }[]).map((a) => a.subjectId);
    expect(await pending('opScoped')).toContain(acme.body.approval.id);
    expect(await pending('opScoped')).not.toContain(globex.body.approval.id);
    for (const caller of ['opAll', 'clientAdmin', 'boundKey', 'unboundKey'] as const) {
      const ids = await pending(caller);
      expect(ids, caller).not.toContain(acme.body.approval.id); // proposer (owner), no approvals:decide, or a key
      expect(ids, caller).not.toContain(globex.body.approval.id);
    }
  });

  it('filters: kind, assigneeId, clientId (404 outside the scope); review_ready and follow_up come from their records', async () => {
    const overdue = await w.rest('opScoped', 'actions.list', { kind: 'task_overdue' });
    expect(overdue.body.items.length).toBeGreaterThan(0);
    expect(overdue.body.items.every((a: { kind: string }) => a.kind === 'task_overdue')).toBe(true);
    const other = await w.rest('opScoped', 'actions.list', { assigneeId: U.owner });
    expect(other.body.items).toEqual([]);
    expect((await w.rest('clientAdmin', 'actions.list', { clientId: GLOBEX })).status).toBe(404);
    expect((await w.mcp('boundKey', 'actions.list', { clientId: GLOBEX })).status).toBe(404);
    const acmeOnly = await w.rest('opAll', 'actions.list', { clientId: ACME, pageSize: 200 });
    expect(acmeOnly.body.items.every((a: { clientId: string }) => a.clientId === ACME)).toBe(true);
    // Seeded ready reviews: Acme's for the bound key (reviews:release), never for the client admin.
    const reviewsOf = async (caller: CallerName) =>
      ((await w.rest(caller, 'actions.list', { kind: 'review_ready', pageSize: 200 })).body.items as { subjectId: string }[]).map((a) => a.subjectId);
    expect(await reviewsOf('boundKey')).toContain('rev_demo_acme_design');
    expect(await reviewsOf('boundKey')).not.toContain('rev_demo_globex_faq');
    expect(await reviewsOf('opAll')).toEqual(expect.arrayContaining(['rev_demo_acme_design', 'rev_demo_globex_faq']));
    expect(await reviewsOf('clientAdmin')).toEqual([]);
    // Paging over computed actions.
    const p1 = await w.rest('opAll', 'actions.list', { pageSize: 1 });
    const p2 = await w.rest('opAll', 'actions.list', { pageSize: 1, cursor: p1.body.nextCursor });
    expect(p2.status).toBe(200);
    expect(p2.body.items[0].id).not.toBe(p1.body.items[0].id);
  });

  it('follow_up (failed runs no rerun replaced) and intake_incomplete (required fields empty) by caller, REST and MCP', async () => {
    const run = (
      id: string,
      clientId: string | null,
      status: (typeof pipelineRuns.$inferInsert)['status'] = 'failed',
      parentRunId: string | null = null,
    ): typeof pipelineRuns.$inferInsert => ({
      id,
      clientId,
      pipeline: 'wv-pipeline',
      status,
      trigger: parentRunId ? 'rerun' : 'manual',
      parentRunId,
      requestedByKind: 'operator',
      requestedById: U.staff,
      requestedByCredentialId: 'grt_demo_operator',
    });
    await w.s.database.db.insert(pipelineRuns).values([
      run('run_wv_acme', ACME),
      run('run_wv_globex', GLOBEX),
      run('run_wv_internal', null),
      run('run_wv_replaced', ACME),
      run('run_wv_rerun', ACME, 'succeeded', 'run_wv_replaced'),
    ]);
    const field = (value: unknown) => ({ key: 'name', label: 'Name', type: 'text', required: true, value, status: value === null ? 'empty' : 'draft', source: 'manual', updatedAt: null, updatedBy: null });
    const record = (id: string, createdById: string, value: unknown): typeof intakeRecords.$inferInsert => ({
      id,
      clientId: ACME,
      title: id,
      template: 'wv',
      status: 'draft',
      fields: [field(value)],
      createdByKind: 'operator',
      createdById,
    });
    await w.s.database.db.insert(intakeRecords).values([
      record('int_wv_owner', U.owner, null),
      record('int_wv_staff', U.staff, null),
      record('int_wv_filled', U.owner, 'Ada'),
    ]);
    const RUNS: Record<(typeof CALLERS)[number], string[]> = {
      opAll: ['run_wv_acme', 'run_wv_globex', 'run_wv_internal'],
      opScoped: ['run_wv_acme', 'run_wv_internal'],
      clientAdmin: ['run_wv_acme'], // holds pipeline:read on Acme (the demo seed), never internal runs
      boundKey: ['run_wv_acme'],
      unboundKey: ['run_wv_acme', 'run_wv_globex'],
    };
    const INTAKE: Record<(typeof CALLERS)[number], string[]> = {
      opAll: ['int_wv_owner'],
      opScoped: [],
      clientAdmin: ['int_wv_owner', 'int_wv_staff'],
      boundKey: ['int_wv_owner'],
      unboundKey: ['int_wv_owner'],
    };
    for (const transport of TRANSPORTS) {
      for (const caller of CALLERS) {
        const of = async (kind: string) => {
          const res = await call(transport, caller, 'actions.list', { kind, pageSize: 200 });
          expect(res.status).toBe(200);
          return (res.body.items as { subjectId: string }[]).map((a) => a.subjectId).filter((id) => id.includes('_wv_')).sort();
        };
        expect(await of('follow_up'), `${caller} ${transport}`).toEqual([...RUNS[caller]].sort());
        expect(await of('intake_incomplete'), `${caller} ${transport}`).toEqual([...INTAKE[caller]].sort());
      }
    }
  });

  it('tasks.create and tasks.update refuse a client admin as assignee of an internal task (validation_failed, nothing written)', async () => {
    const before = (await w.s.database.db.select({ id: tasks.id }).from(tasks)).length;
    const res = await w.rest('opAll', 'tasks.create', { title: 'wv refused', assigneeIds: [U.staff, U.clientAdmin] });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('validation_failed');
    expect(res.body.errors).toEqual([expect.objectContaining({ pointer: '/assigneeIds/1' })]);
    expect((await w.s.database.db.select({ id: tasks.id }).from(tasks)).length).toBe(before);
    const owner = await w.mcp('opAll', 'tasks.create', { title: 'wv refused owner', ownerId: U.clientAdmin });
    expect(owner.status).toBe(422);
    expect(owner.body.errors[0].pointer).toBe('/ownerId');
    const current = await w.rest('opAll', 'tasks.get', { task_id: made.internalDue });
    const upd = await w.rest('opAll', 'tasks.update', { task_id: made.internalDue, assigneeIds: [U.clientAdmin] }, { 'if-match': current.body.etag });
    expect(upd.status).toBe(422);
    expect(upd.body.errors[0].pointer).toBe('/assigneeIds/0');
    // A client-bound task takes a client admin.
    expect((await w.rest('opAll', 'tasks.create', { clientId: ACME, title: 'wv ok', assigneeIds: [U.clientAdmin] })).status).toBe(201);
  });
});

describe('notifications', () => {
  it('each person reads only its own; an unbound key reads its owner\'s; a service account is outside the audience', async () => {
    // The scoped operator assigns the owner, the client admin and itself to an Acme task.
    const id = await createTask('opScoped', { clientId: ACME, title: 'wv notify', assigneeIds: [U.owner, U.clientAdmin, U.scoped] });
    const rows = (await allNotifications()).filter((n) => n.subjectId === id);
    expect(rows.map((n) => n.userId).sort()).toEqual([U.clientAdmin, U.owner].sort()); // never the actor
    const ownerNote = rows.find((n) => n.userId === U.owner)!.id;
    const adminNote = rows.find((n) => n.userId === U.clientAdmin)!.id;
    const expected: Record<(typeof CALLERS)[number], string | null> = {
      opAll: ownerNote,
      unboundKey: ownerNote,
      clientAdmin: adminNote,
      opScoped: null,
      boundKey: null,
    };
    for (const transport of TRANSPORTS) {
      for (const caller of CALLERS) {
        const res = await call(transport, caller, 'notifications.list', { pageSize: 200 });
        if (caller === 'boundKey') {
          expect(res.status, `${transport}`).toBe(404);
          continue;
        }
        expect(res.status, `${caller} ${transport}`).toBe(200);
        const items = res.body.items as { id: string; subjectId: string; kind: string; link: string }[];
        const mine = items.filter((n) => n.subjectId === id);
        expect(mine.map((n) => n.id), `${caller} ${transport}`).toEqual(expected[caller] ? [expected[caller]] : []);
        if (mine[0]) {
          expect(mine[0].kind).toBe('task_assigned');
          expect(mine[0].link).toMatch(new RegExp(`/v1/tasks/${id}$`));
        }
        const owners = await notificationsOf(caller === 'clientAdmin' ? U.clientAdmin : caller === 'opScoped' ? U.scoped : U.owner);
        expect(new Set(items.map((n) => n.id))).toEqual(new Set(owners.map((n) => n.id)));
      }
    }
  });

  it('notifications.read over every caller: its own (or its owner\'s) marks, anyone else\'s is 404 (not an MCP tool)', async () => {
    const id = await createTask('opAll', { clientId: ACME, title: 'wv read table', assigneeIds: [U.scoped, U.clientAdmin, U.staff] });
    const other = await createTask('opScoped', { clientId: ACME, title: 'wv read table owner', assigneeIds: [U.owner] });
    const all = await allNotifications();
    const of = (user: string, subject: string) => all.find((n) => n.userId === user && n.subjectId === subject)!.id;
    const own: Record<(typeof CALLERS)[number], string | null> = {
      opAll: of(U.owner, other),
      unboundKey: of(U.owner, other),
      opScoped: of(U.scoped, id),
      clientAdmin: of(U.clientAdmin, id),
      boundKey: null,
    };
    const foreign = of(U.staff, id);
    for (const caller of CALLERS) {
      const refused = await w.rest(caller, 'notifications.read', { notificationIds: [foreign] });
      expect(refused.status, caller).toBe(404);
      if (own[caller]) {
        const res = await w.rest(caller, 'notifications.read', { notificationIds: [own[caller]] });
        expect(res.status, caller).toBe(200);
        expect(res.body.result.items[0].readAt).toBeTruthy();
      } else {
        expect((await w.rest(caller, 'notifications.read', { notificationIds: [of(U.owner, other)] })).status).toBe(404);
      }
    }
    expect((await allNotifications()).find((n) => n.id === foreign)!.readAt).toBeNull();
  });

  it('notifications.read is all or nothing and keeps the first readAt', async () => {
    const id = await createTask('opAll', { clientId: ACME, title: 'wv read', assigneeIds: [U.scoped, U.clientAdmin] });
    const rows = (await allNotifications()).filter((n) => n.subjectId === id);
    const scopedNote = rows.find((n) => n.userId === U.scoped)!.id;
    const adminNote = rows.find((n) => n.userId === U.clientAdmin)!.id;
    const other = await createTask('opAll', { clientId: ACME, title: 'wv read 2', assigneeIds: [U.scoped] });
    const scopedNote2 = (await allNotifications()).find((n) => n.subjectId === other)!.id;

    // Someone else's id, or an unknown one, among the caller's: 404, nothing marked.
    for (const ids of [[scopedNote, adminNote], [scopedNote, 'ntf_missing']]) {
      const res = await w.rest('opScoped', 'notifications.read', { notificationIds: ids });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    expect((await allNotifications()).filter((n) => [scopedNote, adminNote].includes(n.id)).every((n) => n.readAt === null)).toBe(true);
    expect((await w.rest('boundKey', 'notifications.read', { notificationIds: [scopedNote] })).status).toBe(404);

    const first = await w.rest('opScoped', 'notifications.read', { notificationIds: [scopedNote] });
    expect(first.status).toBe(200);
    const readAt = first.body.result.items[0].readAt as string;
    expect(readAt).toBeTruthy();
    await new Promise((r) => setTimeout(r, 20));
    const again = await w.rest('opScoped', 'notifications.read', { notificationIds: [scopedNote2, scopedNote] });
    expect(again.status).toBe(200);
    expect(again.body.result.items.map((n: { id: string }) => n.id)).toEqual([scopedNote2, scopedNote]);
    expect(again.body.result.items[1].readAt).toBe(readAt);
    expect(again.body.result.items[0].readAt).not.toBe(readAt);
    const unread = await w.rest('opScoped', 'notifications.list', { unread: true, pageSize: 200 });
    expect(unread.body.items.map((n: { id: string }) => n.id)).not.toContain(scopedNote);
    const read = await w.rest('opScoped', 'notifications.list', { unread: false, pageSize: 200 });
    expect(read.body.items.map((n: { id: string }) => n.id)).toEqual(expect.arrayContaining([scopedNote, scopedNote2]));
    // The client admin's is untouched.
    expect((await allNotifications()).find((n) => n.id === adminNote)!.readAt).toBeNull();
  });
});

describe('notification producers: exactly one per recipient, in the transaction of the cause', () => {
  const count = async () => (await allNotifications()).length;

  it('task_assigned: tasks.create (each assignee), tasks.update (new assignees only); a dry run writes none', async () => {
    const n0 = await count();
    const dry = await w.rest('opAll', 'tasks.create', { clientId: ACME, title: 'wv dry', assigneeIds: [U.staff] }, { prefer: 'dry-run' });
    expect(dry.status).toBe(200);
    expect(await count()).toBe(n0);
    const id = await createTask('opAll', { clientId: ACME, title: 'wv assign', assigneeIds: [U.staff] });
    expect((await allNotifications()).filter((n) => n.subjectId === id).map((n) => [n.userId, n.kind])).toEqual([[U.staff, 'task_assigned']]);
    const current = await w.rest('opAll', 'tasks.get', { task_id: id });
    const upd = await w.rest('opAll', 'tasks.update', { task_id: id, assigneeIds: [U.staff, U.admin] }, { 'if-match': current.body.etag });
    expect(upd.status).toBe(200);
    const after = (await allNotifications()).filter((n) => n.subjectId === id);
    expect(after.map((n) => n.userId).sort()).toEqual([U.admin, U.staff].sort());
  });

  it('tasks.batch_create notifies each assignee of each task once; a dry-run comment or approve writes none', async () => {
    const res = await w.rest('opAll', 'tasks.batch_create', {
      tasks: [
        { clientId: ACME, title: 'wv batch 1', assigneeIds: [U.staff, U.admin] },
        { clientId: GLOBEX, title: 'wv batch 2', assigneeIds: [U.staff] },
      ],
    });
    expect(res.status).toBe(201);
    const [a, b] = res.body.result.items.map((t: { id: string }) => t.id);
    const all = await allNotifications();
    expect(all.filter((n) => n.subjectId === a).map((n) => n.userId).sort()).toEqual([U.admin, U.staff].sort());
    expect(all.filter((n) => n.subjectId === b).map((n) => n.userId)).toEqual([U.staff]);

    const n0 = await count();
    const dryComment = await w.rest('opAll', 'tasks.comment', { task_id: a, body: 'not really' }, { prefer: 'dry-run' });
    expect(dryComment.status).toBe(200);
    const proposed = await w.rest('unboundKey', 'reviews.release', { review_id: 'rev_demo_globex_faq' });
    expect(proposed.status).toBe(202);
    const afterProposal = await count(); // approval_requested to the deciders
    expect(afterProposal).toBeGreaterThan(n0);
    const admin = await w.idp.issueToken({ sub: w.c.adminSub, aud: `${w.s.config.baseUrl}/mcp`, scope: 'openid', client_id: w.c.oauthClientId });
    const dry = await fetch(`${w.s.url}/v1/approvals/${proposed.body.approval.id}:approve`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, prefer: 'dry-run' },
    });
    expect(dry.status).toBe(200);
    expect((await dry.json()).outcome).toBe('planned');
    expect(await count()).toBe(afterProposal); // neither approval_decided nor review_released
  });

  it('comment_added: to the task\'s assignees but the author', async () => {
    const id = await createTask('opAll', { clientId: ACME, title: 'wv comment', ownerId: U.owner, assigneeIds: [U.staff] });
    const n0 = (await allNotifications()).filter((n) => n.subjectId === id && n.kind === 'comment_added').length;
    expect((await w.rest('opAll', 'tasks.comment', { task_id: id, body: 'hello' })).status).toBe(201);
    const rows = (await allNotifications()).filter((n) => n.subjectId === id && n.kind === 'comment_added');
    expect(rows.length - n0).toBe(1);
    expect(rows[0]!.userId).toBe(U.staff);
  });

  it('approval_requested to each possible decider, approval_decided to the proposer, review_released to the client\'s admins', async () => {
    const proposed = await w.rest('unboundKey', 'reviews.release', { review_id: 'rev_demo_acme_design' });
    expect(proposed.status).toBe(202);
    const approvalId = proposed.body.approval.id as string;
    const requested = (await allNotifications()).filter((n) => n.subjectId === approvalId && n.kind === 'approval_requested');
    // Operators whose label allows approvals:decide and who reach Acme (the seeded ones and the world's extra
    // all-clients operator), but not the proposer (owner); the viewer holds nothing, the client admin has no such label.
    const deciders = requested.map((n) => n.userId);
    expect(new Set(deciders).size).toBe(deciders.length);
    expect(deciders).toEqual(expect.arrayContaining([U.admin, U.staff, U.scoped]));
    for (const none of [U.owner, U.viewer, U.clientAdmin]) expect(deciders).not.toContain(none);
    expect((await w.approve(approvalId)).status).toBe(200);
    const all = await allNotifications();
    expect(all.filter((n) => n.subjectId === approvalId && n.kind === 'approval_decided').map((n) => n.userId)).toEqual([U.owner]);
    expect(all.filter((n) => n.subjectId === 'rev_demo_acme_design' && n.kind === 'review_released').map((n) => n.userId)).toEqual([U.clientAdmin]);

    // On the timeline: the release for everyone reaching Acme; the decision for people with reach and
    // the proposing key only (approvals' visibility), with ids and the change, not the records.
    for (const caller of CALLERS) {
      const items = (await w.rest(caller, 'timeline.list', { clientId: ACME, since: t0, pageSize: 200 })).body.items as {
        kind: string;
        data: Record<string, unknown>;
      }[];
      const released = items.find((e) => e.kind === 'review_released' && e.data.reviewId === 'rev_demo_acme_design');
      expect(released?.data, caller).toEqual({ reviewId: 'rev_demo_acme_design', title: 'Portal design mock-ups', releasedAt: expect.any(String) });
      const decided = items.find((e) => e.kind === 'approval_decided' && e.data.approvalId === approvalId);
      if (caller === 'boundKey') expect(decided, caller).toBeUndefined();
      else expect(decided?.data, caller).toEqual({ approvalId, operationId: 'reviews.release', status: 'approved' });
    }

    const rejected = await w.rest('unboundKey', 'projects.create', { clientId: ACME, name: 'wv reject me' });
    const rid = rejected.body.approval.id as string;
    const res = await fetch(`${w.s.url}/v1/approvals/${rid}:reject`, { method: 'POST', headers: { authorization: `Bearer ${w.credentials.opScoped}` } });
    expect(res.status).toBe(200);
    expect((await allNotifications()).filter((n) => n.subjectId === rid && n.kind === 'approval_decided').map((n) => n.userId)).toEqual([U.owner]);
  });

  it('membership_invited: to an invitee who has an account, none for one without', async () => {
    const invite = async (email: string) => {
      const res = await w.rest('unboundKey', 'memberships.invite', { client_id: ACME, email, role: 'tasks:read' });
      expect(res.status).toBe(202);
      expect((await w.approve(res.body.approval.id)).status).toBe(200);
      const [approval] = await w.s.database.execute<{ result: { result?: { id: string }; id?: string } }>(`select result from approvals where id = '${res.body.approval.id}'`);
      return (approval!.result as { id: string }).id;
    };
    const withAccount = await invite('Viewer@demo.svc.example');
    expect((await allNotifications()).filter((n) => n.subjectId === withAccount).map((n) => [n.userId, n.kind])).toEqual([[U.viewer, 'membership_invited']]);
    const nobody = await invite('nobody-yet@acme.example');
    expect(nobody).toMatch(/^mem_/);
    expect((await allNotifications()).filter((n) => n.subjectId === nobody)).toEqual([]);
  });
});
