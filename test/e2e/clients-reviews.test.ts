// clients.* and reviews.* end to end over REST (openapi-fetch) and MCP (SDK Client), on PGlite and
// on PostgreSQL when DATABASE_URL is set: the visibility matrix across callers and clients, the
// summary/health/readiness formulas on real rows, the review state machine with review.released,
// and hub publication (versioned by content hash).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerWithIdp, type CallerName, type World } from '../support/world.ts';

let w: World;
const ACME = 'cli_demo_acme';
const GLOBEX = 'cli_demo_globex';
const INITECH = 'cli_demo_initech';
const TRANSPORTS = ['rest', 'mcp'] as const;

beforeAll(async () => {
  w = await startServerWithIdp();
}, 60_000);
afterAll(async () => {
  await w?.close();
});

const call = (t: (typeof TRANSPORTS)[number], who: CallerName, op: string, input: Record<string, unknown> = {}) =>
  t === 'rest' ? w.rest(who, op, input) : w.mcp(who, op, input);

async function sql<T = Record<string, unknown>>(q: string): Promise<T[]> {
  return w.s.database.execute(q) as Promise<T[]>;
}

/** Proposes as the unbound operator key and approves as another person; returns the approval. */
async function proposeAndApprove(op: string, input: Record<string, unknown>): Promise<any> {
  const proposed = await w.rest('unboundKey', op, input);
  expect(proposed.status, JSON.stringify(proposed.body)).toBe(202);
  const decided = await w.approve(proposed.body.approval.id);
  expect(decided.status, JSON.stringify(decided.body)).toBe(200);
  return decided.body.result;
}

describe('clients: who sees which client', () => {
  const expected: Record<string, string[]> = {
    opAll: [ACME, GLOBEX, INITECH],
    opScoped: [ACME],
    clientAdmin: [ACME],
    boundKey: [ACME],
    unboundKey: [ACME, GLOBEX, INITECH],
    opAll2: [ACME, GLOBEX, INITECH], // another key of unboundKey's owner
    boundKeyNoPii: [ACME],
  };
  for (const t of TRANSPORTS) {
    for (const [who, ids] of Object.entries(expected)) {
      it(`${t}: ${who} lists ${ids.length} client(s) by name, and gets 404 on the others`, async () => {
        const list = await call(t, who as CallerName, 'clients.list', { pageSize: 200 });
        expect(list.status).toBe(200);
        const listed = (list.body.items as { id: string; name: string }[]).filter((c) => c.id.startsWith('cli_demo_'));
        expect(listed.map((c) => c.id)).toEqual(ids);
        for (const id of [ACME, GLOBEX, INITECH]) {
          for (const op of ['clients.get', 'clients.summary', 'clients.health', 'clients.launch_readiness']) {
            const res = await call(t, who as CallerName, op, { client_id: id });
            expect(res.status, `${op} ${id}`).toBe(ids.includes(id) ? 200 : 404);
            if (res.status === 404) expect(res.body.code).toBe('not_found');
          }
        }
      });
    }
  }

  it('pages by (name, id) with a signed cursor; a tampered cursor is validation_failed', async () => {
    const first = await w.rest('opAll', 'clients.list', { pageSize: 2 });
    expect(first.body.items.map((c: { id: string }) => c.id)).toEqual([ACME, GLOBEX]);
    const second = await w.rest('opAll', 'clients.list', { pageSize: 2, cursor: first.body.nextCursor });
    expect(second.body.items.map((c: { id: string }) => c.id)).toContain(INITECH);
    const bad = await w.rest('opAll', 'clients.list', { pageSize: 2, cursor: `${first.body.nextCursor}x` });
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe('validation_failed');
    const filtered = await w.rest('opAll', 'clients.list', { status: 'onboarding' });
    expect(filtered.body.items.map((c: { id: string }) => c.id)).toEqual([GLOBEX]);
  });

  it('a client id that does not exist is 404 for everyone', async () => {
    expect((await w.rest('opAll', 'clients.get', { client_id: 'cli_nobody' })).status).toBe(404);
  });
});

describe('clients.summary, health and launch_readiness from real rows', () => {
  it("summary counts the client's own rows; internal tasks never count", async () => {
    const before = (await w.rest('opAll', 'clients.summary', { client_id: ACME })).body;
    expect(before).toMatchObject({ clientId: ACME, activeProjects: 2, openTasks: 3, overdueTasks: 0, openReviews: 2, openIntakeRecords: 0 });
    expect(before.lastActivityAt).not.toBeNull();
    // An overdue internal task changes nothing; an overdue Acme task counts once in open and overdue.
    await sql(`insert into tasks (id, client_id, title, status, priority, due_date, created_by) values
      ('tsk_sum_internal', null, 'internal overdue', 'open', 'normal', '2020-01-01', 'usr_demo_owner'),
      ('tsk_sum_acme', '${ACME}', 'acme overdue', 'open', 'normal', '2020-01-01', 'usr_demo_owner')`);
    const after = (await w.rest('opAll', 'clients.summary', { client_id: ACME })).body;
    expect(after.openTasks).toBe(before.openTasks + 1);
    expect(after.overdueTasks).toBe(1);
    await sql(`delete from tasks where id in ('tsk_sum_internal', 'tsk_sum_acme')`);
  });

  it('pendingApprovals counts proposals by their subject client', async () => {
    const before = (await w.rest('opAll', 'clients.summary', { client_id: GLOBEX })).body.pendingApprovals;
    const proposed = await w.rest('unboundKey', 'reviews.release', { review_id: 'rev_demo_globex_faq' });
    expect(proposed.status).toBe(202);
    expect((await w.rest('opAll', 'clients.summary', { client_id: GLOBEX })).body.pendingApprovals).toBe(before + 1);
    expect((await w.rest('opAll', 'clients.summary', { client_id: ACME })).body.pendingApprovals).toBe(0);
  });

  it('health: the recorded formula on a client built for it', async () => {
    await sql(`insert into clients (id, name, status) values ('cli_health', 'Health Test', 'active')`);
    const quiet = (await w.rest('opAll', 'clients.health', { client_id: 'cli_health' })).body;
    expect(quiet).toMatchObject({ clientId: 'cli_health', score: 80, status: 'healthy' });
    expect(quiet.signals.map((s: { code: string }) => s.code)).toEqual(['no_recent_activity']);

    await sql(`insert into tasks (id, client_id, title, status, priority, due_date, created_by) values
      ('tsk_h1', 'cli_health', 'a', 'open', 'normal', '2020-01-01', 'usr_demo_owner'),
      ('tsk_h2', 'cli_health', 'b', 'open', 'normal', '2020-01-01', 'usr_demo_owner')`);
    const two = (await w.rest('opAll', 'clients.health', { client_id: 'cli_health' })).body;
    expect(two).toMatchObject({ score: 80, status: 'healthy' });
    expect(two.signals).toEqual([{ code: 'overdue_tasks', severity: 'warning', message: expect.any(String) }]);

    await sql(`insert into tasks (id, client_id, title, status, priority, due_date, created_by) values
      ('tsk_h3', 'cli_health', 'c', 'open', 'normal', '2020-01-01', 'usr_demo_owner')`);
    await sql(`insert into projects (id, client_id, name, stage, status, created_at, updated_at) values
      ('prj_h1', 'cli_health', 'Old', 'build', 'active', now() - interval '40 days', now() - interval '40 days')`);
    const three = (await w.rest('opAll', 'clients.health', { client_id: 'cli_health' })).body;
    expect(three).toMatchObject({ score: 55, status: 'at_risk' });
    expect(three.signals.map((s: { code: string; severity: string }) => `${s.code}:${s.severity}`)).toEqual([
      'overdue_tasks:critical',
      'stalled_stage:warning',
    ]);

    await sql(`insert into tasks (id, client_id, title, status, priority, due_date, created_by, updated_at) values
      ('tsk_h4', 'cli_health', 'd', 'open', 'normal', '2020-01-01', 'usr_demo_owner', now()),
      ('tsk_h5', 'cli_health', 'e', 'open', 'normal', '2020-01-01', 'usr_demo_owner', now())`);
    await sql(`insert into projects (id, client_id, name, stage, status, created_at, updated_at) values
      ('prj_h2', 'cli_health', 'Older', 'review', 'active', now() - interval '90 days', now() - interval '90 days'),
      ('prj_h3', 'cli_health', 'Oldest', 'review', 'active', now() - interval '99 days', now() - interval '99 days')`);
    await sql(`update tasks set updated_at = now() - interval '20 days' where client_id = 'cli_health'`);
    const worst = (await w.rest('opAll', 'clients.health', { client_id: 'cli_health' })).body;
    // 100 - 40 (overdue, capped) - 30 (stalled, capped) - 20 (quiet) = 10
    expect(worst).toMatchObject({ score: 10, status: 'critical' });
    expect(worst.signals.map((s: { code: string }) => s.code)).toEqual(['overdue_tasks', 'stalled_stage', 'no_recent_activity']);
    // The same over MCP.
    expect((await w.mcp('opAll', 'clients.health', { client_id: 'cli_health' })).body).toMatchObject({ score: 10, status: 'critical' });
  });

  it('launch_readiness: ready only when every check passed; blockingCount counts the others', async () => {
    const acme = (await w.rest('opAll', 'clients.launch_readiness', { client_id: ACME })).body;
    expect(acme.checks.map((c: { id: string }) => c.id)).toEqual(['intake_finalized', 'reviews_released', 'hub_published', 'project_stage']);
    expect(acme.ready).toBe(false);
    expect(acme.blockingCount).toBe(acme.checks.filter((c: { status: string }) => c.status !== 'passed').length);
    expect(acme.checks.find((c: { id: string }) => c.id === 'reviews_released').status).toBe('failed');

    await sql(`insert into clients (id, name, status) values ('cli_ready', 'Ready Test', 'active')`);
    await sql(`insert into projects (id, client_id, name, stage, status) values ('prj_ready', 'cli_ready', 'Go', 'launch', 'active')`);
    await sql(`insert into reviews (id, client_id, title, kind, status) values ('rev_ready', 'cli_ready', 'Final', 'report', 'ready')`);
    const status = async () =>
      Object.fromEntries(
        ((await w.rest('opAll', 'clients.launch_readiness', { client_id: 'cli_ready' })).body.checks as { id: string; status: string }[]).map((c) => [c.id, c.status]),
      );
    expect(await status()).toMatchObject({ reviews_released: 'failed', hub_published: 'pending', project_stage: 'passed' });
    await proposeAndApprove('reviews.release', { review_id: 'rev_ready' });
    await proposeAndApprove('clients.publish_hub', { client_id: 'cli_ready' });
    expect(await status()).toMatchObject({ reviews_released: 'passed', hub_published: 'passed', project_stage: 'passed' });
    await sql(`insert into reviews (id, client_id, title, kind, status, released_at) values ('rev_ready2', 'cli_ready', 'Extra', 'report', 'released', now())`);
    expect(await status()).toMatchObject({ hub_published: 'failed' });
  });
});

describe('reviews: visibility', () => {
  const ALL = ['rev_demo_acme_design', 'rev_demo_acme_guide', 'rev_demo_acme_plan', 'rev_demo_globex_deck', 'rev_demo_globex_faq', 'rev_demo_globex_notes'];
  const ACME_ALL = ALL.filter((id) => id.includes('acme'));
  const expected: Record<string, string[]> = {
    opAll: ALL,
    opScoped: ACME_ALL,
    clientAdmin: ['rev_demo_acme_plan'],
    boundKey: ACME_ALL,
    unboundKey: ALL,
    opAll2: ALL,
  };
  for (const t of TRANSPORTS) {
    for (const [who, ids] of Object.entries(expected)) {
      it(`${t}: ${who} lists and gets exactly ${ids.length} of the demo reviews`, async () => {
        const list = await call(t, who as CallerName, 'reviews.list', { pageSize: 200 });
        expect(list.status).toBe(200);
        const listed = (list.body.items as { id: string }[]).map((r) => r.id).filter((id) => ALL.includes(id));
        expect([...listed].sort()).toEqual([...ids].sort());
        for (const id of ALL) {
          const res = await call(t, who as CallerName, 'reviews.get', { review_id: id });
          expect(res.status, id).toBe(ids.includes(id) ? 200 : 404);
        }
      });
    }
  }

  it('a clientId filter outside the scope is 404; a client admin filtering by status draft gets nothing', async () => {
    expect((await w.rest('opScoped', 'reviews.list', { clientId: GLOBEX })).status).toBe(404);
    expect((await w.rest('boundKey', 'reviews.list', { clientId: GLOBEX })).status).toBe(404);
    const drafts = await w.rest('clientAdmin', 'reviews.list', { status: 'draft' });
    expect(drafts.status).toBe(200);
    expect(drafts.body.items).toEqual([]);
  });
});

describe('reviews.release: the state machine and review.released', () => {
  it('draft -> release is refused at proposal time (409 invalid_transition) and files nothing', async () => {
    const [{ n: before }] = await sql<{ n: string }>(`select count(*)::text as n from approvals`);
    for (const t of TRANSPORTS) {
      const res = await call(t, 'unboundKey', 'reviews.release', { review_id: 'rev_demo_acme_guide' });
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('invalid_transition');
    }
    const [{ n: after }] = await sql<{ n: string }>(`select count(*)::text as n from approvals`);
    expect(after).toBe(before);
  });

  it('ready -> released once approved, emitting review.released with the Review; releasing again changes nothing and emits nothing', async () => {
    const approval = await proposeAndApprove('reviews.release', { review_id: 'rev_demo_acme_design', note: 'Looks good' });
    expect(approval.status).toBe('approved');
    const review = approval.result;
    expect(review).toMatchObject({ id: 'rev_demo_acme_design', status: 'released', clientId: ACME });
    expect(review.releasedAt).not.toBeNull();
    expect(review.releasedBy).toMatchObject({ kind: 'operator', id: w.c.operatorUserId });
    const events = await sql<{ data: unknown; client_id: string }>(`select data, client_id from events where type = 'review.released' and subject_id = 'rev_demo_acme_design'`);
    expect(events).toHaveLength(1);
    expect(events[0]!.client_id).toBe(ACME);
    expect(events[0]!.data).toEqual((await w.rest('opAll', 'reviews.get', { review_id: 'rev_demo_acme_design' })).body);
    // The client admin sees it now.
    expect((await w.rest('clientAdmin', 'reviews.get', { review_id: 'rev_demo_acme_design' })).status).toBe(200);

    const again = await proposeAndApprove('reviews.release', { review_id: 'rev_demo_acme_design' });
    expect(again.status).toBe('approved');
    expect(again.result).toEqual(review);
    const after = await sql(`select 1 from events where type = 'review.released' and subject_id = 'rev_demo_acme_design'`);
    expect(after).toHaveLength(1);
  });

  it('over MCP the proposal is made the same way; a client admin may not release (404), nor a caller outside the client', async () => {
    const proposed = await w.mcp('boundKey', 'reviews.release', { review_id: 'rev_demo_acme_plan' });
    expect(proposed.status).toBe(202);
    expect(proposed.body.outcome).toBe('proposed');
    expect((await w.rest('clientAdmin', 'reviews.release', { review_id: 'rev_demo_acme_plan' })).status).toBe(404);
    expect((await w.rest('boundKey', 'reviews.release', { review_id: 'rev_demo_globex_faq' })).status).toBe(404);
    expect((await w.mcp('opScoped', 'reviews.release', { review_id: 'rev_demo_globex_faq' })).body.code).toBe('not_found');
  });
});

describe('clients.publish_hub', () => {
  it('publishes version 1, returns it unchanged while nothing changed, and version 2 after a release', async () => {
    await sql(`insert into clients (id, name, status) values ('cli_hub', 'Hub Test', 'active')`);
    await sql(`insert into reviews (id, client_id, title, kind, status) values ('rev_hub1', 'cli_hub', 'One', 'report', 'released'), ('rev_hub2', 'cli_hub', 'Two', 'report', 'ready')`);
    const v1 = (await proposeAndApprove('clients.publish_hub', { client_id: 'cli_hub', note: 'first' })).result;
    expect(v1).toMatchObject({ clientId: 'cli_hub', version: 1, publishedBy: { kind: 'operator', id: w.c.operatorUserId } });
    expect(v1.url).toMatch(/\/hub\/cli_hub\/1$/);
    const same = (await proposeAndApprove('clients.publish_hub', { client_id: 'cli_hub' })).result;
    expect(same).toEqual(v1);
    expect(await sql(`select version from hub_publications where client_id = 'cli_hub'`)).toHaveLength(1);
    await proposeAndApprove('reviews.release', { review_id: 'rev_hub2' });
    const v2 = (await proposeAndApprove('clients.publish_hub', { client_id: 'cli_hub' })).result;
    expect(v2.version).toBe(2);
    const hashes = await sql<{ content_hash: string }>(`select content_hash from hub_publications where client_id = 'cli_hub' order by version`);
    expect(hashes[0]!.content_hash).not.toBe(hashes[1]!.content_hash);
  });

  it('an offboarded client is invalid_transition; client admins may not publish; others get 404 outside their reach', async () => {
    await sql(`insert into clients (id, name, status) values ('cli_gone', 'Gone', 'offboarded')`);
    for (const t of TRANSPORTS) {
      const res = await call(t, 'unboundKey', 'clients.publish_hub', { client_id: 'cli_gone' });
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('invalid_transition');
    }
    expect((await w.rest('clientAdmin', 'clients.publish_hub', { client_id: ACME })).status).toBe(404);
    expect((await w.rest('boundKey', 'clients.publish_hub', { client_id: GLOBEX })).status).toBe(404);
    expect((await w.rest('boundKey', 'clients.publish_hub', { client_id: ACME })).status).toBe(202);
  });

  it('a dry run plans the publication and writes nothing', async () => {
    const before = await sql(`select * from hub_publications`);
    const res = await w.rest('unboundKey', 'clients.publish_hub', { client_id: ACME }, { prefer: 'dry-run' });
    expect(res.status).toBe(200);
    expect(res.body.outcome).toBe('planned');
    expect(await sql(`select * from hub_publications`)).toEqual(before);
  });
});
