// tasks.* handler bodies on a real database (PGlite, or PostgreSQL with DATABASE_URL).
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../runtime/data/client.ts';
import { clients, users } from '../../runtime/data/schema.ts';
import { projects, tasks } from '../../handlers/data/schema.ts';
import { ProblemError } from '../../runtime/problem-error.ts';
import { tasksHandlers as h } from '../../handlers/tasks.ts';
import { freshDatabase } from '../support/db.ts';
import { caller, principal, problem, type Caller } from './context.ts';

const A = 'cli_a';
const B = 'cli_b';

describe('tasks handlers', () => {
  let database: Database;
  let opAll: Caller;
  let opEmpty: Caller;
  let opA: Caller;
  let adminA: Caller;
  let serviceA: Caller;

  beforeAll(async () => {
    database = await freshDatabase();
    await database.db.insert(clients).values([
      { id: A, name: 'Client A', status: 'active' },
      { id: B, name: 'Client B', status: 'active' },
    ]);
    await database.db.insert(users).values([
      { id: 'usr_op', kind: 'operator', name: 'Op', email: 'op@x', role: 'owner', allClients: true, oauthSubject: 'sub_op' },
      { id: 'usr_empty', kind: 'operator', name: 'Empty', email: 'e@x', role: 'operator', oauthSubject: 'sub_e' },
      { id: 'usr_opa', kind: 'operator', name: 'OpA', email: 'opa@x', role: 'operator', oauthSubject: 'sub_opa' },
      { id: 'usr_ca', kind: 'client_admin', name: 'Admin A', email: 'ca@x', role: 'tasks:write', oauthSubject: 'sub_ca' },
      { id: 'usr_co1', kind: 'operator', name: 'Co 1', email: 'c1@x', role: 'operator', oauthSubject: 'sub_c1' },
      { id: 'usr_co2', kind: 'operator', name: 'Co 2', email: 'c2@x', role: 'operator', oauthSubject: 'sub_c2' },
      { id: 'usr_pg', kind: 'operator', name: 'Pager', email: 'pg@x', role: 'operator', oauthSubject: 'sub_pg' },
    ]);
    await database.db.insert(projects).values([
      { id: 'prj_a', clientId: A, name: 'Project A', stage: 'discovery', status: 'active' },
      { id: 'prj_b', clientId: B, name: 'Project B', stage: 'discovery', status: 'active' },
    ]);
    opAll = caller(database, principal('operator', 'usr_op', { all: true, clientIds: [] }));
    opEmpty = caller(database, principal('operator', 'usr_empty', { all: false, clientIds: [] }));
    opA = caller(database, principal('operator', 'usr_opa', { all: false, clientIds: [A] }));
    adminA = caller(database, principal('client_admin', 'usr_ca', { all: false, clientIds: [A] }));
    serviceA = caller(database, principal('service_account', 'usr_op', { all: false, clientIds: [A] }));
  }, 60_000);

  afterAll(async () => {
    await database?.close();
  });

  describe('creation rules', () => {
    it('an operator with an empty scope creates an internal task with co-assignees, and reads it back', async () => {
      const task = await opEmpty.call(h['tasks.create'], {
        title: 'Team board item',
        ownerId: 'usr_co1',
        assigneeIds: ['usr_co2', 'usr_co1'],
      });
      expect(task.clientId).toBeNull();
      expect(task.projectId).toBeNull();
      expect(task.status).toBe('open');
      expect(task.priority).toBe('normal');
      expect(task.ownerId).toBe('usr_co1');
      expect(task.assigneeIds).toEqual(['usr_co1', 'usr_co2']);
      expect(task.etag).toBe(`"${task.id}.v1"`);
      expect(task.id).toMatch(/^tsk_[0-9a-z]{20}$/);
      expect(opEmpty.events.at(-1)).toMatchObject({ type: 'task.created', subject: { clientId: null, subjectId: task.id } });
      const got = await opEmpty.call(h['tasks.get'], { task_id: task.id });
      expect(got).toEqual(task);
    });

    it('client_admin and service_account get validation_failed naming /clientId for an internal task', async () => {
      for (const c of [adminA, serviceA]) {
        const p = await problem(c.call(h['tasks.create'], { title: 'no client' }));
        expect(p.code).toBe('validation_failed');
        expect(p.errors.map((e) => e.pointer)).toEqual(['/clientId']);
      }
    });

    it('with a projectId the task takes the project client', async () => {
      const task = await adminA.call(h['tasks.create'], { title: 'In project', projectId: 'prj_a' });
      expect(task.clientId).toBe(A);
      expect(task.projectId).toBe('prj_a');
      const mismatch = await problem(adminA.call(h['tasks.create'], { title: 'x', projectId: 'prj_a', clientId: B }));
      expect(mismatch.code).toBe('validation_failed');
      expect(mismatch.errors[0].pointer).toBe('/clientId');
    });

    it('a project or client outside the scope is not_found', async () => {
      expect((await problem(adminA.call(h['tasks.create'], { title: 'x', projectId: 'prj_b' }))).code).toBe('not_found');
      expect((await problem(serviceA.call(h['tasks.create'], { title: 'x', clientId: B }))).code).toBe('not_found');
      expect((await problem(opEmpty.call(h['tasks.create'], { title: 'x', clientId: A }))).code).toBe('not_found');
      expect((await problem(opAll.call(h['tasks.create'], { title: 'x', clientId: 'cli_missing' }))).code).toBe('not_found');
    });

    it('unknown assignees and impossible dates are validation_failed, never a 500', async () => {
      const p = await problem(
        opAll.call(h['tasks.create'], { title: 'x', clientId: A, assigneeIds: ['usr_nobody'], dueDate: '2026-02-30' }),
      );
      expect(p.code).toBe('validation_failed');
      expect(p.errors.map((e) => e.pointer).sort()).toEqual(['/assigneeIds/0', '/dueDate']);
    });
  });

  describe('visibility', () => {
    let internalId: string;
    let aId: string;
    let bId: string;
    beforeAll(async () => {
      internalId = (await opAll.call(h['tasks.create'], { title: 'vis internal', assigneeIds: ['usr_co1'] })).id;
      aId = (await opAll.call(h['tasks.create'], { title: 'vis A', clientId: A, ownerId: 'usr_co2', assigneeIds: ['usr_co1'] })).id;
      bId = (await opAll.call(h['tasks.create'], { title: 'vis B', clientId: B, ownerId: 'usr_co1' })).id;
    });

    async function listIds(c: Caller, input: Record<string, unknown> = {}): Promise<string[]> {
      const page = await c.call(h['tasks.list'], { pageSize: 200, ...input });
      return page.items.map((t) => t.id);
    }

    it('operator with an empty scope: internal tasks only (rule 1)', async () => {
      const ids = await listIds(opEmpty);
      expect(ids).toContain(internalId);
      expect(ids).not.toContain(aId);
      expect(ids).not.toContain(bId);
      expect((await opEmpty.call(h['tasks.get'], { task_id: internalId })).id).toBe(internalId);
      expect((await problem(opEmpty.call(h['tasks.get'], { task_id: aId }))).code).toBe('not_found');
      const comments = await opEmpty.call(h['tasks.comments.list'], { task_id: internalId });
      expect(comments.items).toEqual([]);
    });

    it('operator scoped to A: A tasks and internal tasks', async () => {
      const ids = await listIds(opA);
      expect(ids).toEqual(expect.arrayContaining([internalId, aId]));
      expect(ids).not.toContain(bId);
    });

    it('client_admin and service_account: their client only, internal invisible (rule 4)', async () => {
      for (const c of [adminA, serviceA]) {
        const ids = await listIds(c);
        expect(ids).toContain(aId);
        expect(ids).not.toContain(internalId);
        expect(ids).not.toContain(bId);
        for (const id of [internalId, bId]) {
          expect((await problem(c.call(h['tasks.get'], { task_id: id }))).code).toBe('not_found');
          expect((await problem(c.call(h['tasks.comments.list'], { task_id: id }))).code).toBe('not_found');
          expect((await problem(c.call(h['tasks.comment'], { task_id: id, body: 'hi' }))).code).toBe('not_found');
          expect((await problem(c.call(h['tasks.complete'], { task_id: id }))).code).toBe('not_found');
          expect(
            (await problem(c.call(h['tasks.update'], { task_id: id, title: 'x' }, { ifMatch: `"${id}.v1"` }))).code,
          ).toBe('not_found');
        }
      }
    });

    it('a clientId filter outside the scope is 404; inside it filters', async () => {
      expect((await problem(adminA.call(h['tasks.list'], { clientId: B }))).code).toBe('not_found');
      expect((await problem(opEmpty.call(h['tasks.list'], { clientId: A }))).code).toBe('not_found');
      const ids = await listIds(opAll, { clientId: B });
      expect(ids).toContain(bId);
      expect(ids.every((id) => id !== aId && id !== internalId)).toBe(true);
    });

    it('assigneeId matches the owner and co-assignees', async () => {
      const co1 = await listIds(opAll, { assigneeId: 'usr_co1' });
      expect(co1).toEqual(expect.arrayContaining([internalId, aId, bId]));
      const co2 = await listIds(opAll, { assigneeId: 'usr_co2' });
      expect(co2).toContain(aId);
      expect(co2).not.toContain(bId);
      // and still within visibility
      expect(await listIds(adminA, { assigneeId: 'usr_co1' })).not.toContain(internalId);
    });

    it('an operator comments on and completes an internal task whatever its scope (rule 2)', async () => {
      const c = await opEmpty.call(h['tasks.comment'], { task_id: internalId, body: 'on it' });
      expect(c).toMatchObject({ taskId: internalId, body: 'on it', author: { kind: 'operator', id: 'usr_empty', name: 'Empty' } });
      const list = await opEmpty.call(h['tasks.comments.list'], { task_id: internalId });
      expect(list.items.map((x) => x.id)).toEqual([c.id]);
      const done = await opEmpty.call(h['tasks.complete'], { task_id: internalId });
      expect(done.status).toBe('done');
      expect(done.completedAt).not.toBeNull();
    });
  });

  describe('update, complete and ETags', () => {
    it('updates with a matching If-Match, bumps the ETag and emits task.updated', async () => {
      const t = await opAll.call(h['tasks.create'], { title: 'u1', clientId: A, ownerId: 'usr_co1', assigneeIds: ['usr_co2'] });
      const u = await opAll.call(h['tasks.update'], { task_id: t.id, status: 'in_progress', ownerId: 'usr_co2' }, { ifMatch: t.etag });
      expect(u.status).toBe('in_progress');
      expect(u.ownerId).toBe('usr_co2');
      expect(u.assigneeIds).toEqual(['usr_co2']);
      expect(u.etag).toBe(`"${t.id}.v2"`);
      expect(opAll.events.at(-1)).toMatchObject({ type: 'task.updated', subject: { clientId: A, subjectId: t.id } });
      // Event data is the Task as tasks.get returns it.
      expect(opAll.events.at(-1)!.data).toEqual(await opAll.call(h['tasks.get'], { task_id: t.id }));
      const stale = await problem(opAll.call(h['tasks.update'], { task_id: t.id, title: 'again' }, { ifMatch: t.etag }));
      expect(stale.code).toBe('precondition_failed');
      expect((await problem(opAll.call(h['tasks.update'], { task_id: t.id, title: 'x' }, { ifMatch: `W/${u.etag}` }))).code).toBe(
        'precondition_failed',
      );
      expect((await problem(opAll.call(h['tasks.update'], { task_id: t.id, title: 'x' }))).code).toBe('precondition_required');
    });

    it('done only through complete; a done task cannot be updated; complete is idempotent', async () => {
      const t = await opAll.call(h['tasks.create'], { title: 'c1', clientId: A });
      const viaUpdate = await problem(
        opAll.call(h['tasks.update'], { task_id: t.id, status: 'done' as 'open' }, { ifMatch: t.etag }),
      );
      expect(viaUpdate.code).toBe('invalid_transition');
      const before = opAll.events.length;
      const done = await opAll.call(h['tasks.complete'], { task_id: t.id });
      expect(done.status).toBe('done');
      expect(opAll.events.slice(before).map((e) => e.type)).toEqual(['task.completed']);
      const again = await opAll.call(h['tasks.complete'], { task_id: t.id });
      expect(again).toEqual(done);
      expect(opAll.events.length).toBe(before + 1);
      const upd = await problem(opAll.call(h['tasks.update'], { task_id: t.id, title: 'x' }, { ifMatch: done.etag }));
      expect(upd.code).toBe('invalid_transition');
    });

    it('of 10 concurrent updates holding one ETag exactly one wins; the rest get 412', async () => {
      const t = await opAll.call(h['tasks.create'], { title: 'race', clientId: A });
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) => opAll.call(h['tasks.update'], { task_id: t.id, title: `race ${i}` }, { ifMatch: t.etag })),
      );
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(9);
      for (const r of lost) expect((r.reason as ProblemError).code).toBe('precondition_failed');
      const [row] = await database.db.select().from(tasks).where(eq(tasks.id, t.id));
      expect(row.version).toBe(2);
    }, 30_000);
  });

  describe('batch_create', () => {
    it('creates every task or none; errors point at /tasks/<i>/…', async () => {
      const count = async () => (await database.db.select({ id: tasks.id }).from(tasks)).length;
      const before = await count();
      const p = await problem(
        adminA.call(h['tasks.batch_create'], {
          tasks: [{ title: 'ok', clientId: A }, { title: 'internal not allowed' }, { title: 'bad date', clientId: A, dueDate: '2026-13-01' }],
        }),
      );
      expect(p.code).toBe('validation_failed');
      expect(p.errors.map((e) => e.pointer)).toEqual(['/tasks/1/clientId', '/tasks/2/dueDate']);
      expect(await count()).toBe(before);

      const out = await problem(adminA.call(h['tasks.batch_create'], { tasks: [{ title: 'ok', clientId: A }, { title: 'b', clientId: B }] }));
      expect(out.code).toBe('not_found');
      expect(await count()).toBe(before);

      const evBefore = opEmpty.events.length;
      const ok = await opEmpty.call(h['tasks.batch_create'], {
        tasks: [{ title: 'one' }, { title: 'two', assigneeIds: ['usr_co1'] }],
      });
      expect(ok.items.map((t) => t.title)).toEqual(['one', 'two']);
      expect(ok.items.every((t) => t.clientId === null)).toBe(true);
      expect(await count()).toBe(before + 2);
      expect(opEmpty.events.slice(evBefore).map((e) => e.type)).toEqual(['task.created', 'task.created']);
    });
  });

  describe('paging', () => {
    it('pages are stable under inserts, and a tampered or foreign cursor is validation_failed', async () => {
      const pager = caller(database, principal('operator', 'usr_op', { all: false, clientIds: [] }));
      // internal tasks only for this operator: create 7 with distinct times
      const created: string[] = [];
      for (let i = 0; i < 7; i++) {
        const t = await pager.call(h['tasks.create'], { title: `page ${i}`, ownerId: 'usr_pg' }, { now: new Date(Date.UTC(2030, 0, 1, 0, 0, i)) });
        created.push(t.id);
      }
      const filter = { assigneeId: 'usr_pg', status: 'open' as const };
      const p1 = await pager.call(h['tasks.list'], { ...filter, pageSize: 3 });
      expect(p1.items.map((t) => t.id)).toEqual(created.slice(-3).reverse());
      expect(p1.nextCursor).toBeTruthy();
      // a newer task arrives between pages: later pages do not shift
      await pager.call(h['tasks.create'], { title: 'newest', ownerId: 'usr_pg' }, { now: new Date(Date.UTC(2031, 0, 1)) });
      const p2 = await pager.call(h['tasks.list'], { ...filter, pageSize: 3, cursor: p1.nextCursor! });
      expect(p2.items.map((t) => t.id)).toEqual(created.slice(1, 4).reverse());
      const p3 = await pager.call(h['tasks.list'], { ...filter, pageSize: 3, cursor: p2.nextCursor! });
      expect(p3.items.map((t) => t.id)).toEqual([created[0]]);
      expect(p3.nextCursor).toBeNull();

      const [body, sig] = p1.nextCursor!.split('.');
      const decoded = JSON.parse(Buffer.from(body, 'base64url').toString());
      decoded.i = 'tsk_zzzzzzzzzzzzzzzzzzzz';
      const forged = `${Buffer.from(JSON.stringify(decoded)).toString('base64url')}.${sig}`;
      for (const cursor of [forged, `${body}.AAAA`, 'garbage', `${body}x.${sig}`]) {
        const p = await problem(pager.call(h['tasks.list'], { ...filter, cursor }));
        expect(p.code).toBe('validation_failed');
        expect(p.errors[0].pointer).toBe('/cursor');
      }
      // a cursor from other filters is refused
      const foreign = await problem(pager.call(h['tasks.list'], { status: 'open', cursor: p1.nextCursor! }));
      expect(foreign.code).toBe('validation_failed');
      expect((await problem(pager.call(h['tasks.list'], { pageSize: 500 }))).errors[0].pointer).toBe('/pageSize');
    });
  });
});
