// Pipeline runs, their operations and execution requests, end to end over REST and MCP (PGlite, and
// PostgreSQL when DATABASE_URL is set). The server runs with SVC_WORKERS=false; the test drives a
// pipeline worker of its own (handlers/workers/pipeline-runs.ts) so that each run executes when the test says so.
//
// Runs: an Acme run and a Globex run proposed by the unbound operator key (Tier 2, approved by an
// admin), and an internal run proposed by an operator signed in with OAuth.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startIdp, type TestIdp } from '../support/idp.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { operationsById } from '../../generated/registry.ts';
import { startPipelineWorker, type Worker } from '../../handlers/workers/pipeline-runs.ts';
import { pipelineDefinitions } from '../../handlers/pipelines.ts';
import { acceptExecutionRequest } from '../../handlers/execution.ts';
import { connectMcp, ok, toolError, type McpSession } from '../mcp/support.ts';

let s: TestServer;
let idp: TestIdp;
let worker: Worker;
const sessions: McpSession[] = [];
const tokens: Record<string, string> = {};
let acmeRun: any;
let globexRun: any;
let internalRun: any;

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
  // A command that ran answers { outcome: 'ran', result }: the tests read the result.
  return { status: res.status, body: parsed?.outcome === 'ran' ? parsed.result : parsed };
}

/** pipeline.run.start is Tier 2: propose, then an admin (another person) approves; the run is the approved write's result. */
async function startRun(proposer: string, body: Record<string, unknown>): Promise<any> {
  const proposed = await call(proposer, 'POST', '/v1/pipeline-runs', body);
  expect(proposed.status, JSON.stringify(proposed.body)).toBe(202);
  const approver = await token(s.credentials.adminSub as string);
  const approved = await call(approver, 'POST', `/v1/approvals/${proposed.body.approval.id}:approve`);
  expect(approved.status, JSON.stringify(approved.body)).toBe(200);
  expect(approved.body.status).toBe('approved');
  const run = approved.body.result;
  expect(run.status).toBe('queued');
  return run;
}

async function runOf(id: string): Promise<any> {
  const [row] = await s.database.execute<any>(`select status from pipeline_runs where id = '${id}'`);
  return row;
}

async function waitFor(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

beforeAll(async () => {
  idp = await startIdp();
  s = await startTestServer({ oauthIssuer: idp.issuer, oauthJwksUrl: idp.jwksUrl, workersEnabled: false });
  // The demo client admin holds pipeline:read (a membership role is a permission; demo/seed.ts).
  worker = startPipelineWorker({ database: s.database, definitions: pipelineDefinitions, pollMs: 3_600_000, leaseSeconds: 30, baseUrl: s.config.baseUrl });
  acmeRun = await startRun(s.credentials.operatorKey, { pipeline: 'task_digest', clientId: s.credentials.clientId });
  globexRun = await startRun(s.credentials.operatorKey, { pipeline: 'task_digest', clientId: s.credentials.otherClientId });
  internalRun = await startRun(await token(s.credentials.staffOperatorSub as string), { pipeline: 'task_digest', parameters: { maxOpenTasks: 0 } });
  expect(await worker.drain()).toBe(3);
}, 60_000);
afterAll(async () => {
  await Promise.all(sessions.map((m) => m.close().catch(() => undefined)));
  await worker?.stop();
  await s?.close();
  await idp?.close();
});

describe('a pipeline run executes its steps in the worker', () => {
  it('the approved start queued the run with its operation; the worker ran every step', async () => {
    expect(acmeRun).toMatchObject({ clientId: s.credentials.clientId, pipeline: 'task_digest', trigger: 'manual', parentRunId: null });
    expect(acmeRun.operationId).toMatch(/^op_/);
    expect(acmeRun.steps.map((x: any) => [x.name, x.status])).toEqual([
      ['collect', 'pending'],
      ['summarize', 'pending'],
      ['report', 'pending'],
    ]);
    const got = await call(s.credentials.operatorKey, 'GET', `/v1/pipeline-runs/${acmeRun.id}`);
    expect(got.status).toBe(200);
    expect(got.body.status).toBe('succeeded');
    expect(got.body.startedAt).not.toBeNull();
    expect(got.body.finishedAt).not.toBeNull();
    expect(got.body.steps.map((x: any) => x.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    const [counts] = await s.database.execute<{ n: number }>(
      `select count(*)::int as n from tasks where client_id = '${s.credentials.clientId}'`,
    );
    const [step] = await s.database.execute<{ output: any }>(`select output from pipeline_steps where run_id = '${acmeRun.id}' and name = 'summarize'`);
    expect(step!.output.total).toBe(Number(counts!.n));
  });

  it("the run's operation succeeded with progress 100 and the run's id", async () => {
    const op = await call(s.credentials.operatorKey, 'GET', `/v1/operations/${acmeRun.operationId}`);
    expect(op.status).toBe(200);
    expect(op.body).toMatchObject({ id: acmeRun.operationId, kind: 'pipeline_run', status: 'succeeded', progress: 100, error: null });
    expect(op.body.result.runId).toBe(acmeRun.id);
    expect(op.body.requestedBy.id).toBe(s.credentials.operatorUserId);
  });

  it('a failing step fails the run and its operation, and the later steps are skipped', async () => {
    const got = await call(await token(s.credentials.staffOperatorSub as string), 'GET', `/v1/pipeline-runs/${internalRun.id}`);
    expect(got.body.status).toBe('failed');
    expect(got.body.steps.map((x: any) => x.status)).toEqual(['succeeded', 'failed', 'skipped']);
    expect(got.body.error.code).toBe('internal_error');
    expect(got.body.steps[1].error.detail).toMatch(/exceed maxOpenTasks 0/);
    const op = await call(await token(s.credentials.staffOperatorSub as string), 'GET', `/v1/operations/${internalRun.operationId}`);
    expect(op.body).toMatchObject({ status: 'failed', result: null });
    expect(op.body.error.code).toBe('internal_error');
    expect(op.body.error.type).toBe(`${s.config.baseUrl}/problems/internal_error`);
    // A failed operation cannot be cancelled.
    const cancel = await call(await token(s.credentials.staffOperatorSub as string), 'POST', `/v1/operations/${internalRun.operationId}:cancel`, {});
    expect(cancel.status).toBe(409);
    expect(cancel.body.code).toBe('invalid_transition');
  });

  it('events are oldest first; level means this level and above', async () => {
    const all = await call(s.credentials.operatorKey, 'GET', `/v1/pipeline-events?runId=${acmeRun.id}&pageSize=100`);
    expect(all.status).toBe(200);
    const types = all.body.items.map((e: any) => e.type);
    expect(types[0]).toBe('run_queued');
    expect(types[1]).toBe('run_started');
    expect(types.at(-1)).toBe('run_succeeded');
    expect(types.filter((t: string) => t === 'step_succeeded')).toHaveLength(3);
    const times = all.body.items.map((e: any) => Date.parse(e.occurredAt));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    const levels = (q: string) =>
      call(s.credentials.operatorKey, 'GET', `/v1/pipeline-events?runId=${acmeRun.id}&pageSize=100&level=${q}`).then((r) => r.body.items.map((e: any) => e.level));
    expect(new Set(await levels('debug'))).toEqual(new Set(all.body.items.map((e: any) => e.level)));
    expect(await levels('info')).not.toContain('debug');
    expect((await levels('info')).length).toBeGreaterThan(0);
    for (const l of await levels('warning')) expect(['warning', 'error']).toContain(l);
    const bad = await call(s.credentials.operatorKey, 'GET', `/v1/pipeline-events?level=loud`);
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe('validation_failed');
  });

  it('events page by cursor without gaps or repeats', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r: { status: number; body: any } = await call(
        s.credentials.operatorKey,
        'GET',
        `/v1/pipeline-events?runId=${acmeRun.id}&pageSize=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(r.status).toBe(200);
      seen.push(...r.body.items.map((e: any) => e.id));
      cursor = r.body.nextCursor;
    } while (cursor);
    const all = await call(s.credentials.operatorKey, 'GET', `/v1/pipeline-events?runId=${acmeRun.id}&pageSize=100`);
    expect(seen).toEqual(all.body.items.map((e: any) => e.id));
  });

  it('an unknown pipeline or a bad parameter is validation_failed and files nothing', async () => {
    const before = await s.database.execute('select count(*)::int as n from approvals');
    const unknown = await call(s.credentials.operatorKey, 'POST', '/v1/pipeline-runs', { pipeline: 'no_such_pipeline', clientId: s.credentials.clientId });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors[0].pointer).toBe('/pipeline');
    const param = await call(s.credentials.operatorKey, 'POST', '/v1/pipeline-runs', { pipeline: 'task_digest', clientId: s.credentials.clientId, parameters: { pauseMs: -1 } });
    expect(param.status).toBe(422);
    expect(param.body.errors[0].pointer).toBe('/parameters/pauseMs');
    expect(await s.database.execute('select count(*)::int as n from approvals')).toEqual(before);
  });
});

describe('visibility (rule 3: operators read every pipeline row; writes keep the client scope)', () => {
  // who -> which of [acme, globex, internal] it reads
  const matrix: [string, () => Promise<string>, [boolean, boolean, boolean]][] = [
    ['operator over all clients (OAuth)', () => token(s.credentials.adminSub as string), [true, true, true]],
    ['operator scoped to Acme (OAuth)', () => token(s.credentials.scopedOperatorSub as string), [true, true, true]],
    ['client admin of Acme', () => token(s.credentials.clientAdminSub as string), [true, false, false]],
    ['key bound to Acme', async () => s.credentials.serviceKey, [true, false, false]],
    ['unbound operator key (never widened)', async () => s.credentials.operatorKey, [true, true, false]],
  ];
  for (const [who, credential, expected] of matrix) {
    it(`${who}: runs.get, runs.list and events.list`, async () => {
      const cred = await credential();
      const runs = [acmeRun, globexRun, internalRun];
      const listed = await call(cred, 'GET', '/v1/pipeline-runs?pageSize=100');
      expect(listed.status).toBe(200);
      const listedIds = listed.body.items.map((r: any) => r.id);
      const events = await call(cred, 'GET', '/v1/pipeline-events?pageSize=100');
      const eventRuns = new Set(events.body.items.map((e: any) => e.runId));
      for (let i = 0; i < 3; i++) {
        const got = await call(cred, 'GET', `/v1/pipeline-runs/${runs[i].id}`);
        expect(got.status, `${who} get ${i}`).toBe(expected[i] ? 200 : 404);
        expect(listedIds.includes(runs[i].id), `${who} list ${i}`).toBe(expected[i]);
        expect(eventRuns.has(runs[i].id), `${who} events ${i}`).toBe(expected[i]);
        const byRun = await call(cred, 'GET', `/v1/pipeline-events?runId=${runs[i].id}`);
        expect(byRun.status).toBe(expected[i] ? 200 : 404);
      }
      const globexFilter = await call(cred, 'GET', `/v1/pipeline-runs?clientId=${s.credentials.otherClientId}`);
      expect(globexFilter.status).toBe(expected[1] ? 200 : 404);
      if (expected[1]) expect(globexFilter.body.items.map((r: any) => r.clientId)).toEqual(globexFilter.body.items.map(() => s.credentials.otherClientId));
    });
  }

  it('an Acme-scoped operator reads the Globex run but may not re-run it (404); its Acme run it may', async () => {
    const scoped = await token(s.credentials.scopedOperatorSub as string);
    const globex = await call(scoped, 'POST', `/v1/pipeline-runs/${globexRun.id}:rerun-partial`, { fromStep: 'summarize' });
    expect(globex.status).toBe(404);
    expect(globex.body.code).toBe('not_found');
    const acme = await call(scoped, 'POST', `/v1/pipeline-runs/${acmeRun.id}:rerun-partial`, { fromStep: 'report' });
    expect(acme.status).toBe(201);
  });

  it('the Acme-scoped operator may not start a Globex run; a key may not start an internal one', async () => {
    const scoped = await token(s.credentials.scopedOperatorSub as string);
    const globex = await call(scoped, 'POST', '/v1/pipeline-runs', { pipeline: 'task_digest', clientId: s.credentials.otherClientId });
    expect(globex.status).toBe(404);
    const internal = await call(s.credentials.operatorKey, 'POST', '/v1/pipeline-runs', { pipeline: 'task_digest' });
    expect(internal.status).toBe(422);
    expect(internal.body.errors[0].pointer).toBe('/clientId');
    const bound = await call(s.credentials.serviceKey, 'POST', '/v1/pipeline-runs', { pipeline: 'task_digest' });
    expect(bound.status).toBe(422);
  });

  it('a key bound to Acme re-runs the Acme run but gets 404 on Globex and internal runs; a client admin cannot write', async () => {
    const globex = await call(s.credentials.serviceKey, 'POST', `/v1/pipeline-runs/${globexRun.id}:rerun-partial`, { fromStep: 'collect' });
    expect(globex.status).toBe(404);
    const internal = await call(s.credentials.serviceKey, 'POST', `/v1/pipeline-runs/${internalRun.id}:rerun-partial`, { fromStep: 'collect' });
    expect(internal.status).toBe(404);
    const acme = await call(s.credentials.serviceKey, 'POST', `/v1/pipeline-runs/${acmeRun.id}:rerun-partial`, { fromStep: 'collect' });
    expect(acme.status).toBe(201);
    const admin = await call(await token(s.credentials.clientAdminSub as string), 'POST', `/v1/pipeline-runs/${acmeRun.id}:rerun-partial`, { fromStep: 'collect' });
    expect(admin.status).toBe(404);
    await worker.drain();
  });
});

describe('pipeline.run.rerun_partial', () => {
  it('creates a new run from the named step, reusing the parent outputs; the parent is unchanged', async () => {
    const parentBefore = await call(s.credentials.operatorKey, 'GET', `/v1/pipeline-runs/${acmeRun.id}`);
    const res = await call(s.credentials.operatorKey, 'POST', `/v1/pipeline-runs/${acmeRun.id}:rerun-partial`, { fromStep: 'summarize' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ trigger: 'rerun', parentRunId: acmeRun.id, clientId: s.credentials.clientId, status: 'queued' });
    expect(res.body.steps.map((x: any) => x.status)).toEqual(['skipped', 'pending', 'pending']);
    await worker.drain();
    const rerun = await call(s.credentials.operatorKey, 'GET', `/v1/pipeline-runs/${res.body.id}`);
    expect(rerun.body.status).toBe('succeeded');
    expect(rerun.body.steps.map((x: any) => x.status)).toEqual(['skipped', 'succeeded', 'succeeded']);
    const outputs = await s.database.execute<{ run_id: string; name: string; output: unknown; attempts: number }>(
      `select run_id, name, output, attempts from pipeline_steps where run_id in ('${acmeRun.id}', '${res.body.id}') and name = 'collect'`,
    );
    const parentCollect = outputs.find((o) => o.run_id === acmeRun.id)!;
    const childCollect = outputs.find((o) => o.run_id === res.body.id)!;
    expect(childCollect.output).toEqual(parentCollect.output);
    expect(childCollect.attempts).toBe(0); // reused, never executed
    const parentAfter = await call(s.credentials.operatorKey, 'GET', `/v1/pipeline-runs/${acmeRun.id}`);
    expect(parentAfter.body).toEqual(parentBefore.body);
  });

  it('an unknown step is validation_failed; a queued or running parent is invalid_transition', async () => {
    const unknown = await call(s.credentials.operatorKey, 'POST', `/v1/pipeline-runs/${acmeRun.id}:rerun-partial`, { fromStep: 'nope' });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors[0].pointer).toBe('/fromStep');
    const queued = await startRun(s.credentials.operatorKey, { pipeline: 'task_digest', clientId: s.credentials.clientId });
    const r1 = await call(s.credentials.operatorKey, 'POST', `/v1/pipeline-runs/${queued.id}:rerun-partial`, { fromStep: 'collect' });
    expect(r1.status).toBe(409);
    expect(r1.body.code).toBe('invalid_transition');
    await worker.drain();
    const missing = await call(s.credentials.operatorKey, 'POST', `/v1/pipeline-runs/run_missing_x1:rerun-partial`, { fromStep: 'collect' });
    expect(missing.status).toBe(404);
  });

  it('re-running a failed run from its failed step repeats it', async () => {
    const staff = await token(s.credentials.staffOperatorSub as string);
    const res = await call(staff, 'POST', `/v1/pipeline-runs/${internalRun.id}:rerun-partial`, { fromStep: 'summarize' });
    expect(res.status).toBe(201);
    expect(res.body.clientId).toBeNull();
    expect(res.body.parameters).toEqual({ maxOpenTasks: 0 });
    const unreachable = await call(staff, 'POST', `/v1/pipeline-runs/${internalRun.id}:rerun-partial`, { fromStep: 'report' });
    expect(unreachable.status).toBe(409); // the parent has no summarize output to reuse
    await worker.drain();
  });
});

describe('operations: visible to the requesting credential only; cancel', () => {
  it('the operation is visible to the proposing credential, not to its owner signed in otherwise, nor the approver, nor a bound key', async () => {
    const id = acmeRun.operationId;
    expect((await call(s.credentials.operatorKey, 'GET', `/v1/operations/${id}`)).status).toBe(200);
    for (const cred of [
      await token(s.credentials.operatorSub), // the key's owner, another credential
      await token(s.credentials.adminSub as string), // the approver
      s.credentials.serviceKey,
      await token(s.credentials.clientAdminSub as string),
    ]) {
      expect((await call(cred, 'GET', `/v1/operations/${id}`)).status).toBe(404);
      const listed = await call(cred, 'GET', '/v1/operations?pageSize=100');
      expect(listed.status).toBe(200);
      expect(listed.body.items.map((o: any) => o.id)).not.toContain(id);
      expect((await call(cred, 'POST', `/v1/operations/${id}:cancel`, {})).status).toBe(404);
    }
    const mine = await call(s.credentials.operatorKey, 'GET', '/v1/operations?pageSize=100&kind=pipeline_run&status=succeeded');
    expect(mine.body.items.map((o: any) => o.id)).toContain(id);
    expect(mine.body.items.every((o: any) => o.status === 'succeeded' && o.kind === 'pipeline_run')).toBe(true);
  });

  it('a finished operation is invalid_transition; cancelling a queued run cancels it at once; again returns it unchanged', async () => {
    const done = await call(s.credentials.operatorKey, 'POST', `/v1/operations/${acmeRun.operationId}:cancel`, {});
    expect(done.status).toBe(409);
    expect(done.body.code).toBe('invalid_transition');
    const run = await startRun(s.credentials.operatorKey, { pipeline: 'task_digest', clientId: s.credentials.clientId });
    const first = await call(s.credentials.operatorKey, 'POST', `/v1/operations/${run.operationId}:cancel`, {});
    expect(first.status).toBe(200);
    expect(first.body.status).toBe('cancelled');
    expect(first.body.finishedAt).not.toBeNull();
    const again = await call(s.credentials.operatorKey, 'POST', `/v1/operations/${run.operationId}:cancel`, {});
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const got = await call(s.credentials.operatorKey, 'GET', `/v1/pipeline-runs/${run.id}`);
    expect(got.body.status).toBe('cancelled');
    expect(got.body.steps.map((x: any) => x.status)).toEqual(['skipped', 'skipped', 'skipped']);
    expect(await worker.drain()).toBe(0);
  });

  it('cancelling a running run stops it at the next step boundary; what was done stays done', async () => {
    const run = await startRun(s.credentials.operatorKey, { pipeline: 'task_digest', clientId: s.credentials.clientId, parameters: { pauseMs: 400 } });
    const draining = worker.drain();
    await waitFor('the first step to start', async () => (await runOf(run.id))?.status === 'running');
    const op = await call(s.credentials.operatorKey, 'GET', `/v1/operations/${run.operationId}`);
    expect(op.body.status).toBe('running');
    const res = await call(s.credentials.operatorKey, 'POST', `/v1/operations/${run.operationId}:cancel`, {});
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('cancelled');
    await draining;
    const got = await call(s.credentials.operatorKey, 'GET', `/v1/pipeline-runs/${run.id}`);
    expect(got.body.status).toBe('cancelled');
    expect(got.body.steps[0].status).toBe('succeeded'); // the step in flight finished
    expect(got.body.steps.slice(1).map((x: any) => x.status)).toEqual(['skipped', 'skipped']);
    const events = await call(s.credentials.operatorKey, 'GET', `/v1/pipeline-events?runId=${run.id}&level=warning`);
    expect(events.body.items.map((e: any) => e.type)).toContain('run_cancelled');
    const after = await call(s.credentials.operatorKey, 'GET', `/v1/operations/${run.operationId}`);
    expect(after.body.status).toBe('cancelled');
  });
});

describe('over MCP', () => {
  it('runs, events and operations tools answer as REST, with the same visibility', async () => {
    const key = await connectMcp(s.url, s.credentials.operatorKey);
    const bound = await connectMcp(s.url, s.credentials.serviceKey);
    const scoped = await connectMcp(s.url, await token(s.credentials.scopedOperatorSub as string));
    sessions.push(key, bound, scoped);
    expect(ok(await key.call('svc.pipeline.runs.get', { run_id: acmeRun.id })).result.status).toBe('succeeded');
    expect(toolError(await bound.call('svc.pipeline.runs.get', { run_id: globexRun.id })).code).toBe('not_found');
    expect(ok(await scoped.call('svc.pipeline.runs.get', { run_id: internalRun.id })).result.id).toBe(internalRun.id);
    const scopedIds = ok(await scoped.call('svc.pipeline.runs.list', { pageSize: 100 })).result.items.map((r: any) => r.id);
    expect(scopedIds).toEqual(expect.arrayContaining([acmeRun.id, globexRun.id, internalRun.id]));
    const events = ok(await key.call('svc.pipeline.events.list', { runId: acmeRun.id, level: 'info' })).result.items;
    expect(events.length).toBeGreaterThan(0);
    expect(events.every((e: any) => e.level !== 'debug')).toBe(true);
    expect(ok(await key.call('svc.operations.get', { operation_id: acmeRun.operationId })).result.status).toBe('succeeded');
    expect(toolError(await bound.call('svc.operations.get', { operation_id: acmeRun.operationId })).code).toBe('not_found');
    expect(toolError(await key.call('svc.operations.cancel', { operation_id: acmeRun.operationId })).code).toBe('invalid_transition');
    const keyOps = ok(await key.call('svc.operations.list', { kind: 'pipeline_run' })).result.items;
    expect(keyOps.map((o: any) => o.id)).toContain(acmeRun.operationId);
    const rerun = await scoped.call('svc.pipeline.run.rerun_partial', { run_id: globexRun.id, fromStep: 'collect', idempotencyKey: randomUUID() });
    expect(toolError(rerun).code).toBe('not_found');
    const unknown = toolError(await key.call('svc.pipeline.run.rerun_partial', { run_id: acmeRun.id, fromStep: 'nope', idempotencyKey: randomUUID() }));
    expect(unknown.code).toBe('validation_failed');
    const tools = (await key.client.listTools()).tools;
    expect(tools.find((t) => t.name === 'svc.operations.cancel')?.annotations?.destructiveHint).toBe(true);
  });
});

describe('execution (operators only)', () => {
  it('requests.propose records a pending request; jobs.get reads its job once accepted', async () => {
    const res = await call(s.credentials.operatorKey, 'POST', '/v1/execution-requests', {
      kind: 'report',
      title: 'Quarterly export',
      instructions: 'Export the Acme tasks to CSV.',
      clientId: s.credentials.clientId,
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'pending', jobId: null, decidedAt: null, clientId: s.credentials.clientId, parameters: {} });
    expect(res.body.requestedBy.id).toBe(s.credentials.operatorUserId);
    const { job } = await s.database.transaction((tx) => acceptExecutionRequest(tx, res.body.id));
    const got = await call(s.credentials.operatorKey, 'GET', `/v1/execution-jobs/${job.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: job.id, requestId: res.body.id, status: 'queued', runner: null, result: null, error: null });
    // Outside the client scope: 404 for the Acme-scoped operator on a Globex job.
    const globex = await call(s.credentials.operatorKey, 'POST', '/v1/execution-requests', { kind: 'sync', title: 'Sync', instructions: 'Sync Globex.', clientId: s.credentials.otherClientId });
    const { job: globexJob } = await s.database.transaction((tx) => acceptExecutionRequest(tx, globex.body.id));
    const scoped = await token(s.credentials.scopedOperatorSub as string);
    expect((await call(scoped, 'GET', `/v1/execution-jobs/${globexJob.id}`)).status).toBe(404);
    expect((await call(scoped, 'GET', `/v1/execution-jobs/${job.id}`)).status).toBe(200);
    expect((await call(scoped, 'POST', '/v1/execution-requests', { kind: 'sync', title: 'x', instructions: 'y', clientId: s.credentials.otherClientId })).status).toBe(404);
    expect((await call(s.credentials.operatorKey, 'GET', '/v1/execution-jobs/job_missing_1')).status).toBe(404);
  });

  it('client admins and bound keys are refused (404); bad input is validation_failed', async () => {
    const body = { kind: 'script', title: 'T', instructions: 'I' };
    expect((await call(await token(s.credentials.clientAdminSub as string), 'POST', '/v1/execution-requests', body)).status).toBe(404);
    expect((await call(s.credentials.serviceKey, 'POST', '/v1/execution-requests', body)).status).toBe(404);
    const blank = await call(s.credentials.operatorKey, 'POST', '/v1/execution-requests', { ...body, title: '   ' });
    expect(blank.status).toBe(422);
    expect(blank.body.errors[0].pointer).toBe('/title');
  });
});
