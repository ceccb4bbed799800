// projects.*, meta.get and the handlers map on a real database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { service } from '../../generated/registry.ts';
import { handlers } from '../../handlers/index.ts';
import { metaHandlers } from '../../handlers/meta.ts';
import { projectsHandlers as h } from '../../handlers/projects.ts';
import type { Database } from '../../runtime/data/client.ts';
import { clients } from '../../runtime/data/schema.ts';
import { isNotImplemented, unimplementedOperations } from '../../runtime/pipeline/not-implemented.ts';
import { ProblemError } from '../../runtime/problem-error.ts';
import { freshDatabase } from '../support/db.ts';
import { caller, principal, problem, type Caller } from './context.ts';

const A = 'cli_a';
const B = 'cli_b';

describe('projects handlers', () => {
  let database: Database;
  let opAll: Caller;
  let opEmpty: Caller;
  let serviceA: Caller;
  let adminA: Caller;

  beforeAll(async () => {
    database = await freshDatabase();
    await database.db.insert(clients).values([
      { id: A, name: 'A', status: 'active' },
      { id: B, name: 'B', status: 'active' },
    ]);
    opAll = caller(database, principal('operator', 'usr_op', { all: true, clientIds: [] }));
    opEmpty = caller(database, principal('operator', 'usr_e', { all: false, clientIds: [] }));
    serviceA = caller(database, principal('service_account', 'usr_op', { all: false, clientIds: [A] }));
    adminA = caller(database, principal('client_admin', 'usr_ca', { all: false, clientIds: [A] }));
  }, 60_000);
  afterAll(async () => {
    await database?.close();
  });

  it('creates in the client scope (discovery, active); outside it is 404', async () => {
    const p = await serviceA.call(h['projects.create'], { clientId: A, name: 'Portal', startDate: '2026-01-01', targetDate: '2026-06-01' });
    expect(p).toMatchObject({ clientId: A, stage: 'discovery', status: 'active', description: '', etag: `"${p.id}.v1"` });
    expect((await problem(serviceA.call(h['projects.create'], { clientId: B, name: 'x' }))).code).toBe('not_found');
    expect((await problem(opEmpty.call(h['projects.create'], { clientId: A, name: 'x' }))).code).toBe('not_found');
    const dates = await problem(opAll.call(h['projects.create'], { clientId: A, name: 'x', startDate: '2026-05-01', targetDate: '2026-01-01' }));
    expect(dates.code).toBe('validation_failed');
    expect(dates.errors[0].pointer).toBe('/targetDate');
  });

  it('get and list keep the client scope (rule 5, operators included)', async () => {
    const pb = await opAll.call(h['projects.create'], { clientId: B, name: 'B project' });
    expect((await problem(adminA.call(h['projects.get'], { project_id: pb.id }))).code).toBe('not_found');
    expect((await problem(opEmpty.call(h['projects.get'], { project_id: pb.id }))).code).toBe('not_found');
    expect((await opAll.call(h['projects.get'], { project_id: pb.id })).id).toBe(pb.id);
    const listA = await adminA.call(h['projects.list'], {});
    expect(listA.items.every((p) => p.clientId === A)).toBe(true);
    expect((await opEmpty.call(h['projects.list'], {})).items).toEqual([]);
    expect((await problem(adminA.call(h['projects.list'], { clientId: B }))).code).toBe('not_found');
    expect((await opAll.call(h['projects.list'], { clientId: B })).items.map((p) => p.id)).toEqual([pb.id]);
  });

  it('update needs the current ETag; archived is final', async () => {
    const p = await opAll.call(h['projects.create'], { clientId: A, name: 'Up' });
    const u = await opAll.call(h['projects.update'], { project_id: p.id, status: 'on_hold', name: 'Up 2' }, { ifMatch: p.etag });
    expect(u).toMatchObject({ status: 'on_hold', name: 'Up 2', etag: `"${p.id}.v2"` });
    expect((await problem(opAll.call(h['projects.update'], { project_id: p.id, name: 'x' }, { ifMatch: p.etag }))).code).toBe(
      'precondition_failed',
    );
    const archived = await opAll.call(h['projects.update'], { project_id: p.id, status: 'archived' }, { ifMatch: u.etag });
    const again = await problem(opAll.call(h['projects.update'], { project_id: p.id, status: 'active' }, { ifMatch: archived.etag }));
    expect(again.code).toBe('invalid_transition');
  });

  it('stage.advance walks discovery -> live, emits, and live is final', async () => {
    const p = await opAll.call(h['projects.create'], { clientId: A, name: 'Stages' });
    const seen = [p.stage];
    const before = opAll.events.length;
    let cur = p;
    for (let i = 0; i < 5; i++) {
      cur = await opAll.call(h['projects.stage.advance'], { project_id: p.id });
      seen.push(cur.stage);
    }
    expect(seen).toEqual(['discovery', 'onboarding', 'build', 'review', 'launch', 'live']);
    expect(opAll.events.slice(before).map((e) => e.type)).toEqual(Array(5).fill('project.stage_advanced'));
    // Event data is the Project as projects.get returns it, plus previousStage.
    expect(opAll.events.at(-1)!.data).toEqual({ ...cur, previousStage: 'launch' });
    expect((await problem(opAll.call(h['projects.stage.advance'], { project_id: p.id }))).code).toBe('invalid_transition');
    const q = await opAll.call(h['projects.create'], { clientId: A, name: 'Expect' });
    expect((await problem(opAll.call(h['projects.stage.advance'], { project_id: q.id, expectedStage: 'build' }))).code).toBe('conflict');
    expect((await opAll.call(h['projects.stage.advance'], { project_id: q.id, expectedStage: 'discovery' })).stage).toBe('onboarding');
    expect((await problem(adminA.call(h['projects.stage.advance'], { project_id: 'prj_missing' }))).code).toBe('not_found');
  });
});

describe('meta.get', () => {
  it('describes the service and the caller', async () => {
    const p = principal('service_account', 'usr_op', { all: false, clientIds: ['cli_b', 'cli_a'] }, ['tasks:write', 'tasks:read', 'clients:read']);
    const meta = await metaHandlers['meta.get']({}, { principal: p } as never);
    expect(meta.contractVersion).toBe(service.contractVersion);
    expect(meta.apiVersion).toBe(service.apiVersion);
    expect(meta.deprecations).toEqual([]);
    expect(meta.versions[0]).toHaveProperty('sunset');
    expect(meta.mcpProtocolVersions).toEqual(service.mcpProtocolVersions);
    expect(meta.principal).toEqual({ kind: 'service_account', id: 'usr_op', loginMethod: 'api_key', credentialId: 'cred_usr_op' });
    expect(meta.effectiveScopes).toEqual(['clients:read', 'tasks:read', 'tasks:write']);
    expect(meta.clientScope).toEqual({ all: false, clientIds: ['cli_a', 'cli_b'] });
  });
});

describe('handlers map', () => {
  it('has a handler for every operation; the unimplemented ones are marked', async () => {
    const { operations } = await import('../../generated/registry.ts');
    const map = handlers as unknown as Record<string, unknown>;
    for (const op of operations) expect(typeof map[op.id], op.id).toBe('function');
    const missing = unimplementedOperations(map);
    expect(missing).not.toContain('tasks.create');
    expect(missing).not.toContain('meta.get');
    expect(missing).not.toContain('clients.list');
    // Whichever operation is still unimplemented answers not_implemented (none, once all are built).
    for (const id of missing.slice(0, 1)) {
      expect(isNotImplemented(map[id])).toBe(true);
      const p = await problem((map[id] as (i: unknown, c: unknown) => Promise<unknown>)({}, {}));
      expect(p.code).toBe('not_implemented');
    }
  });
});
