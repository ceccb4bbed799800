// Issue 12's Tier 2 tools over MCP with the SDK's own client (pipeline.run.start, intake.create,
// intake.finalize, intake.reopen_field: proposed by the tool, approved by another person, the
// approved write's result read back through the tool), and the state machines as tables: every
// intake field state (empty, draft, final) in a draft and in a finalized record against set_field,
// clearing and reopen_field; every pipeline-run state (queued, running, succeeded, failed, cancelled)
// against rerun_partial and operations.cancel of its operation. PGlite, and PostgreSQL with DATABASE_URL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { operationsById } from '../../generated/registry.ts';
import { pipelineDefinitions } from '../../handlers/pipelines.ts';
import { startPipelineWorker, type Worker } from '../../handlers/workers/pipeline-runs.ts';
import { connectMcp, ok, toolError, type McpSession } from '../mcp/support.ts';
import { startIdp, type TestIdp } from '../support/idp.ts';
import { expectSchema } from '../support/schemas.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let s: TestServer;
let idp: TestIdp;
let worker: Worker;
const sessions: McpSession[] = [];
const tokens: Record<string, string> = {};

async function token(sub: string): Promise<string> {
  if (tokens[sub]) return tokens[sub]!;
  const scope = [...new Set(Object.values(operationsById).map((o) => o.scope).filter((x): x is string => !!x))].join(' ');
  tokens[sub] = await idp.issueToken({ sub, aud: `${s.config.baseUrl}/mcp`, scope, client_id: s.credentials.oauthClientId });
  return tokens[sub]!;
}

async function call(credential: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { authorization: `Bearer ${credential}` };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['idempotency-key'] = randomUUID();
  }
  const res = await fetch(`${s.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  const parsed = text ? JSON.parse(text) : null;
  return { status: res.status, body: parsed?.outcome === 'ran' ? parsed.result : parsed };
}

async function session(credential: string): Promise<McpSession> {
  const m = await connectMcp(s.url, credential);
  sessions.push(m);
  return m;
}

async function approve(approvalId: string): Promise<void> {
  const res = await call(await token(s.credentials.adminSub as string), 'POST', `/v1/approvals/${approvalId}:approve`, {});
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** A Tier 2 tool call: proposed, approved by the admin, then the approved write's result read through the tool. */
async function toolTier2(m: McpSession, tool: string, args: Record<string, unknown>): Promise<{ result: any; error: any }> {
  const proposed = ok(await m.call(tool, { ...args, idempotencyKey: randomUUID() }));
  expect(proposed.outcome).toBe('proposed');
  expect(proposed.approval.status).toBe('pending');
  await approve(proposed.approval.id);
  const polled = ok(await m.call('svc.approvals.get', { approval_id: proposed.approval.id })).result;
  expect(polled.status === 'approved' || polled.status === 'failed').toBe(true);
  return { result: polled.result, error: polled.error };
}

async function count(table: string): Promise<number> {
  const [row] = await s.database.execute<{ n: number | string }>(`select count(*) as n from ${table}`);
  return Number(row!.n);
}

beforeAll(async () => {
  idp = await startIdp();
  s = await startTestServer({ oauthIssuer: idp.issuer, oauthJwksUrl: idp.jwksUrl, workersEnabled: false });
  worker = startPipelineWorker({ database: s.database, definitions: pipelineDefinitions, pollMs: 3_600_000, leaseSeconds: 30, baseUrl: s.config.baseUrl });
}, 60_000);
afterAll(async () => {
  await Promise.all(sessions.map((m) => m.close().catch(() => undefined)));
  await worker?.stop();
  await s?.close();
  await idp?.close();
});

describe('pipeline.run.start over MCP (Tier 2 through approval)', () => {
  it('the tool proposes and writes nothing; once approved the run is queued with its operation, the worker runs it, the tools read it', async () => {
    const staff = await session(await token(s.credentials.staffOperatorSub as string));
    const before = await count('pipeline_runs');
    const proposed = ok(await staff.call('svc.pipeline.run.start', { pipeline: 'task_digest', clientId: s.credentials.clientId, idempotencyKey: randomUUID() }));
    expect(proposed.outcome).toBe('proposed');
    expect(await count('pipeline_runs')).toBe(before);
    await approve(proposed.approval.id);
    const approval = ok(await staff.call('svc.approvals.get', { approval_id: proposed.approval.id })).result;
    expect(approval.status).toBe('approved');
    const run = approval.result;
    expectSchema('PipelineRun', run);
    expect(run).toMatchObject({ pipeline: 'task_digest', clientId: s.credentials.clientId, status: 'queued', trigger: 'manual' });
    expect(run.operationId).toMatch(/^op_/);

    // The operation belongs to the proposing credential: this session sees it, another credential of the same person does not.
    expect(ok(await staff.call('svc.operations.get', { operation_id: run.operationId })).result).toMatchObject({ kind: 'pipeline_run', status: 'queued' });
    const sameUserKey = await session(s.credentials.operatorKey);
    expect(toolError(await sameUserKey.call('svc.operations.get', { operation_id: run.operationId })).code).toBe('not_found');

    expect(await worker.drain()).toBe(1);
    const done = ok(await staff.call('svc.pipeline.runs.get', { run_id: run.id })).result;
    expect(done.status).toBe('succeeded');
    expect(done.steps.map((x: any) => x.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(ok(await staff.call('svc.operations.get', { operation_id: run.operationId })).result).toMatchObject({ status: 'succeeded', progress: 100, result: { runId: run.id } });
    const events = ok(await staff.call('svc.pipeline.events.list', { runId: run.id })).result.items.map((e: any) => e.type);
    expect(events[0]).toBe('run_queued');
  });

  it('an internal run is started by an OAuth operator; an API key gets validation_failed, a bound key not_found for another client, bad input files nothing', async () => {
    const staff = await session(await token(s.credentials.staffOperatorSub as string));
    const internal = await toolTier2(staff, 'svc.pipeline.run.start', { pipeline: 'task_digest' });
    expect(internal.error).toBeNull();
    expect(internal.result).toMatchObject({ clientId: null, status: 'queued' });
    await worker.drain();

    const approvals = await count('approvals');
    const key = await session(s.credentials.operatorKey);
    const noClient = toolError(await key.call('svc.pipeline.run.start', { pipeline: 'task_digest', idempotencyKey: randomUUID() }));
    expect(noClient).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/clientId' }] });
    const bound = await session(s.credentials.serviceKey);
    expect(toolError(await bound.call('svc.pipeline.run.start', { pipeline: 'task_digest', clientId: s.credentials.otherClientId, idempotencyKey: randomUUID() })).code).toBe('not_found');
    const unknown = toolError(await key.call('svc.pipeline.run.start', { pipeline: 'no_such_pipeline', clientId: s.credentials.clientId, idempotencyKey: randomUUID() }));
    expect(unknown).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/pipeline' }] });
    expect(await count('approvals')).toBe(approvals);
  });

  it('a client admin reads runs (pipeline:read, demo seed) but has no start tool', async () => {
    const admin = await session(await token(s.credentials.clientAdminSub as string));
    const tools = (await admin.client.listTools()).tools.map((t) => t.name);
    expect(tools).toContain('svc.pipeline.runs.list');
    expect(tools).not.toContain('svc.pipeline.run.start');
    const items = ok(await admin.call('svc.pipeline.runs.list', {})).result.items;
    expect(items.length).toBeGreaterThan(0);
    expect(items.every((r: any) => r.clientId === s.credentials.clientId)).toBe(true);
  });
});

describe('intake Tier 2 tools over MCP', () => {
  it('intake.create, finalize and reopen_field: proposed by the tool, approved, the result read through the tool', async () => {
    const bound = await session(s.credentials.serviceKey);
    const created = await toolTier2(bound, 'svc.intake.create', { clientId: s.credentials.clientId, template: 'company_profile', title: 'Via MCP' });
    expect(created.error).toBeNull();
    expectSchema('IntakeRecord', created.result);
    expect(created.result).toMatchObject({ status: 'draft', clientId: s.credentials.clientId, template: 'company_profile' });
    const id = created.result.id;
    const refused = toolError(await bound.call('svc.intake.finalize', { intake_id: id, idempotencyKey: randomUUID() }));
    expect(refused.code).toBe('invalid_transition');
    ok(await bound.call('svc.intake.draft.set_field', { intake_id: id, field_key: 'legal_name', value: 'Acme Holdings' }));
    const finalized = await toolTier2(bound, 'svc.intake.finalize', { intake_id: id });
    expect(finalized.result).toMatchObject({ status: 'finalized' });
    expect(toolError(await bound.call('svc.intake.reopen_field', { intake_id: id, field_key: 'website', reason: 'empty', idempotencyKey: randomUUID() })).code).toBe('invalid_transition');
    const reopened = await toolTier2(bound, 'svc.intake.reopen_field', { intake_id: id, field_key: 'legal_name', reason: 'typo' });
    expect(reopened.result).toMatchObject({ status: 'draft', finalizedAt: null });
    expect(reopened.result.fields.find((f: any) => f.key === 'legal_name').status).toBe('draft');
    expect(ok(await bound.call('svc.intake.get', { intake_id: id })).result.status).toBe('draft');
    // Another client's record is not found through the tools.
    expect(toolError(await bound.call('svc.intake.create', { clientId: s.credentials.otherClientId, template: 'company_profile', title: 'x', idempotencyKey: randomUUID() })).code).toBe('not_found');
  });
});

describe('intake state machine, as a table', () => {
  type Action = 'set' | 'clear' | 'reopen';
  // [record status, field state, action] -> the field's state after, or 409 invalid_transition.
  const table: [string, string, Action, string | 409][] = [
    ['draft', 'empty', 'set', 'draft'],
    ['draft', 'empty', 'clear', 'empty'],
    ['draft', 'empty', 'reopen', 409],
    ['draft', 'draft', 'set', 'draft'],
    ['draft', 'draft', 'clear', 'empty'],
    ['draft', 'draft', 'reopen', 409],
    ['draft', 'final', 'set', 409],
    ['draft', 'final', 'clear', 409],
    ['draft', 'final', 'reopen', 'draft'],
    ['finalized', 'empty', 'set', 409],
    ['finalized', 'empty', 'clear', 409],
    ['finalized', 'empty', 'reopen', 409],
    ['finalized', 'final', 'set', 409],
    ['finalized', 'final', 'clear', 409],
    ['finalized', 'final', 'reopen', 'draft'],
  ];
  const values: Record<string, unknown> = { company_name: 'Acme', employee_count: 10, plan_start_date: '2027-01-01', plan_type: 'hmo', dental_included: true };

  async function propose(path: string, body?: unknown): Promise<{ status: number; body: any }> {
    return call(s.credentials.operatorKey, 'POST', path, body ?? {});
  }

  /** A record in `recordStatus` whose field `key` is in `fieldState` (made through the API). */
  async function recordWith(recordStatus: string, fieldState: string, key: string): Promise<string> {
    const initial = { ...values };
    delete initial.dental_included;
    const created = await propose('/v1/intake-records', { clientId: s.credentials.clientId, template: 'benefits_onboarding', title: `${recordStatus}/${fieldState}`, values: initial });
    await approve(created.body.approval.id);
    const id = (await call(s.credentials.operatorKey, 'GET', `/v1/approvals/${created.body.approval.id}`)).body.result.id as string;
    const set = (k: string, v: unknown) => call(s.credentials.operatorKey, 'PUT', `/v1/intake-records/${id}/fields/${k}`, { value: v });
    if (fieldState === 'draft') expect((await set(key, values[key])).status).toBe(200);
    if (recordStatus === 'finalized' || fieldState === 'final') {
      const fin = await propose(`/v1/intake-records/${id}:finalize`);
      await approve(fin.body.approval.id);
    }
    if (recordStatus === 'draft' && fieldState === 'final') {
      // Back to a draft record with its other fields still final: reopen another field.
      const other = key === 'company_name' ? 'plan_type' : 'company_name';
      const re = await propose(`/v1/intake-records/${id}/fields/${other}:reopen`, { reason: 'set up' });
      await approve(re.body.approval.id);
    }
    const got = (await call(s.credentials.operatorKey, 'GET', `/v1/intake-records/${id}`)).body;
    expect(got.status).toBe(recordStatus);
    expect(got.fields.find((f: any) => f.key === key).status).toBe(fieldState);
    return id;
  }

  for (const [recordStatus, fieldState, action, expected] of table) {
    it(`${recordStatus} record, ${fieldState} field, ${action} -> ${expected}`, async () => {
      const key = fieldState === 'empty' ? 'dental_included' : 'employee_count';
      const id = await recordWith(recordStatus, fieldState, key);
      const path = `/v1/intake-records/${id}/fields/${key}`;
      const before = (await call(s.credentials.operatorKey, 'GET', `/v1/intake-records/${id}`)).body;
      let res: { status: number; body: any };
      if (action === 'reopen') {
        res = await propose(`${path}:reopen`, { reason: 'table' });
        if (res.status === 202) {
          await approve(res.body.approval.id);
          res = { status: 200, body: (await call(s.credentials.operatorKey, 'GET', `/v1/approvals/${res.body.approval.id}`)).body.result };
        }
      } else {
        res = await call(s.credentials.operatorKey, 'PUT', path, { value: action === 'set' ? values[key] : null });
      }
      if (expected === 409) {
        expect(res.status, JSON.stringify(res.body)).toBe(409);
        expect(res.body.code).toBe('invalid_transition');
        const after = (await call(s.credentials.operatorKey, 'GET', `/v1/intake-records/${id}`)).body;
        expect(after).toEqual(before); // a refused transition changes nothing
      } else {
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(res.body.fields.find((f: any) => f.key === key).status).toBe(expected);
        if (action === 'reopen') expect(res.body.status).toBe('draft');
      }
    });
  }
});

describe('pipeline run and operation state machine, as a table', () => {
  // [run status] -> rerun_partial from the first step, and operations.cancel of the run's operation.
  const table: { run: string; rerun: 201 | 409; cancel: 'cancelled' | 409; runAfterCancel: string }[] = [
    { run: 'queued', rerun: 409, cancel: 'cancelled', runAfterCancel: 'cancelled' },
    { run: 'running', rerun: 409, cancel: 'cancelled', runAfterCancel: 'running' }, // the worker ends it at the next step boundary
    { run: 'succeeded', rerun: 201, cancel: 409, runAfterCancel: 'succeeded' },
    { run: 'failed', rerun: 201, cancel: 409, runAfterCancel: 'failed' },
    { run: 'cancelled', rerun: 201, cancel: 'cancelled', runAfterCancel: 'cancelled' },
  ];

  async function runIn(status: string): Promise<any> {
    const proposed = await call(s.credentials.operatorKey, 'POST', '/v1/pipeline-runs', { pipeline: 'task_digest', clientId: s.credentials.clientId });
    await approve(proposed.body.approval.id);
    const run = (await call(s.credentials.operatorKey, 'GET', `/v1/approvals/${proposed.body.approval.id}`)).body.result;
    if (status === 'queued') return run;
    if (status === 'cancelled') {
      expect((await call(s.credentials.operatorKey, 'POST', `/v1/operations/${run.operationId}:cancel`, {})).status).toBe(200);
      return run;
    }
    if (status === 'succeeded') {
      await worker.drain();
      return run;
    }
    // running and failed: the states a worker leaves; set as a worker would (collect done, the run claimed or failed).
    const outcome = status === 'running' ? 'running' : 'failed';
    await s.database.execute(`update pipeline_steps set status = 'succeeded', output = '{"tasks":[]}'::jsonb where run_id = '${run.id}' and name = 'collect'`);
    await s.database.execute(`update pipeline_runs set status = '${outcome}', started_at = now()${outcome === 'failed' ? ', finished_at = now()' : ''} where id = '${run.id}'`);
    await s.database.execute(`update operations set status = '${outcome}'${outcome === 'failed' ? ', finished_at = now()' : ''} where id = '${run.operationId}'`);
    return run;
  }

  for (const row of table) {
    it(`${row.run} run: rerun_partial ${row.rerun}, cancel ${row.cancel}`, async () => {
      const run = await runIn(row.run);
      expect((await call(s.credentials.operatorKey, 'GET', `/v1/pipeline-runs/${run.id}`)).body.status).toBe(row.run);
      const rerun = await call(s.credentials.operatorKey, 'POST', `/v1/pipeline-runs/${run.id}:rerun-partial`, { fromStep: 'collect' });
      expect(rerun.status, JSON.stringify(rerun.body)).toBe(row.rerun);
      if (row.rerun === 409) expect(rerun.body.code).toBe('invalid_transition');
      else expect(rerun.body).toMatchObject({ parentRunId: run.id, trigger: 'rerun', status: 'queued' });

      const before = (await call(s.credentials.operatorKey, 'GET', `/v1/operations/${run.operationId}`)).body;
      const cancel = await call(s.credentials.operatorKey, 'POST', `/v1/operations/${run.operationId}:cancel`, {});
      if (row.cancel === 409) {
        expect(cancel.status).toBe(409);
        expect(cancel.body.code).toBe('invalid_transition');
        expect((await call(s.credentials.operatorKey, 'GET', `/v1/operations/${run.operationId}`)).body).toEqual(before);
      } else {
        expect(cancel.status).toBe(200);
        expect(cancel.body.status).toBe('cancelled');
        if (row.run === 'cancelled') expect(cancel.body).toEqual(before); // unchanged
      }
      expect((await call(s.credentials.operatorKey, 'GET', `/v1/pipeline-runs/${run.id}`)).body.status).toBe(row.runAfterCancel);
      // Leave no queued work behind for the next row.
      await worker.drain();
    });
  }
});
