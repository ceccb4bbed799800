// intake.*: records from templates, the field state machine (empty -> draft -> final, reopen), the
// record state machine (draft -> finalized -> draft), Tier 2 proposals approved by another person,
// intake.finalized emitted once per finalization, and visibility across clients and credentials,
// over REST and MCP, on PGlite (and PostgreSQL when DATABASE_URL is set).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startIdp, type TestIdp } from '../support/idp.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { operationsById } from '../../generated/registry.ts';
import { connectMcp, ok, toolError, type McpSession } from '../mcp/support.ts';
import { expectSchema } from '../support/schemas.ts';

let s: TestServer;
let idp: TestIdp;
let acmeId: string;
let globexId: string;
const sessions: McpSession[] = [];
const tokens: Record<string, string> = {};

async function token(sub: string): Promise<string> {
  if (tokens[sub]) return tokens[sub]!;
  const scope = [...new Set(Object.values(operationsById).map((o) => o.scope).filter((x): x is string => !!x))].join(' ');
  tokens[sub] = await idp.issueToken({ sub, aud: `${s.config.baseUrl}/mcp`, scope, client_id: s.credentials.oauthClientId });
  return tokens[sub]!;
}

async function call(method: string, path: string, credential: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${s.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${credential}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** A Tier 2 call by `credential`, approved by the admin; returns the approved write's result (or its problem). */
async function proposeAndApprove(method: string, path: string, credential: string, body?: unknown): Promise<{ result: any; error: any }> {
  const proposed = await call(method, path, credential, body, method === 'POST' && path === '/v1/intake-records' ? { 'idempotency-key': randomUUID() } : {});
  expect(proposed.status, JSON.stringify(proposed.body)).toBe(202);
  const id = proposed.body.approval.id as string;
  const approved = await call('POST', `/v1/approvals/${id}:approve`, await token(s.credentials.adminSub as string), {});
  expect(approved.status, JSON.stringify(approved.body)).toBe(200);
  const polled = await call('GET', `/v1/approvals/${id}`, credential);
  if (polled.body.result) expectSchema('IntakeRecord', polled.body.result);
  return { result: polled.body.result, error: polled.body.error };
}

async function createRecord(clientId: string, title: string, values?: Record<string, unknown>): Promise<any> {
  const { result, error } = await proposeAndApprove('POST', '/v1/intake-records', s.credentials.operatorKey, { clientId, template: 'benefits_onboarding', title, values });
  expect(error).toBeNull();
  return result;
}

function unwrap(x: any): any {
  return x.result ?? x;
}

function field(record: any, key: string): any {
  // A command answers { outcome, result }; a read answers the record.
  const r = record.result ?? record;
  expectSchema('IntakeRecord', r);
  return r.fields.find((f: any) => f.key === key);
}

async function finalizedEvents(id: string): Promise<number> {
  const [row] = await s.database.execute<{ n: number | string }>(`select count(*) as n from events where type = 'intake.finalized' and subject_id = '${id}'`);
  return Number(row!.n);
}

beforeAll(async () => {
  idp = await startIdp();
  s = await startTestServer({ oauthIssuer: idp.issuer, oauthJwksUrl: idp.jwksUrl });
  acmeId = (await createRecord(s.credentials.clientId, 'Acme benefits', { company_name: 'Acme Corp' })).id;
  globexId = (await createRecord(s.credentials.otherClientId, 'Globex benefits')).id;
}, 60_000);
afterAll(async () => {
  await Promise.all(sessions.map((m) => m.close().catch(() => undefined)));
  await s?.close();
  await idp?.close();
});

describe('intake.create', () => {
  it('makes a draft record from the template, with initial values as draft fields', async () => {
    const { status, body } = await call('GET', `/v1/intake-records/${acmeId}`, s.credentials.operatorKey);
    expect(status).toBe(200);
    expect(body).toMatchObject({ id: acmeId, clientId: s.credentials.clientId, template: 'benefits_onboarding', status: 'draft', finalizedAt: null, projectId: null });
    expect(field(body, 'company_name')).toMatchObject({ value: 'Acme Corp', status: 'draft', source: 'manual', required: true, type: 'text', updatedBy: { kind: 'operator' } });
    expect(field(body, 'employee_count')).toMatchObject({ value: null, status: 'empty', updatedAt: null, updatedBy: null });
    expect(field(body, 'plan_type')).toMatchObject({ type: 'choice', choices: ['ppo', 'hmo', 'hdhp'] });
  });

  it('refuses an unknown template, an unknown key and a mistyped value (validation_failed) at proposal time', async () => {
    const h = { 'idempotency-key': randomUUID() };
    const bad = await call('POST', '/v1/intake-records', s.credentials.operatorKey, { clientId: s.credentials.clientId, template: 'nope', title: 'x' }, h);
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].pointer).toBe('/template');
    const values = await call(
      'POST',
      '/v1/intake-records',
      s.credentials.operatorKey,
      { clientId: s.credentials.clientId, template: 'benefits_onboarding', title: 'x', values: { nope: 'a', employee_count: 'many', plan_start_date: '2026-02-30' } },
      { 'idempotency-key': randomUUID() },
    );
    expect(values.status).toBe(422);
    expect(values.body.errors.map((e: any) => e.pointer).sort()).toEqual(['/values/employee_count', '/values/nope', '/values/plan_start_date']);
    const [row] = await s.database.execute<{ n: number | string }>(`select count(*) as n from approvals where operation_id = 'intake.create' and status = 'pending'`);
    expect(Number(row!.n)).toBe(0);
  });

  it('a key bound to Acme cannot create for Globex (404), a client admin of Acme can propose for Acme', async () => {
    const globex = await call('POST', '/v1/intake-records', s.credentials.serviceKey, { clientId: s.credentials.otherClientId, template: 'company_profile', title: 'x' }, { 'idempotency-key': randomUUID() });
    expect(globex.status).toBe(404);
    const admin = await token(s.credentials.clientAdminSub as string);
    const acme = await call('POST', '/v1/intake-records', admin, { clientId: s.credentials.clientId, template: 'company_profile', title: 'Profile' }, { 'idempotency-key': randomUUID() });
    expect(acme.status).toBe(202);
    const globexByAdmin = await call('POST', '/v1/intake-records', admin, { clientId: s.credentials.otherClientId, template: 'company_profile', title: 'x' }, { 'idempotency-key': randomUUID() });
    expect(globexByAdmin.status).toBe(404);
  });
});

describe('the field and record state machine', () => {
  it('set_field: empty -> draft, draft -> draft, draft -> empty with null; type checks; unknown field 404', async () => {
    const r = await createRecord(s.credentials.clientId, 'Field moves');
    const put = (key: string, value: unknown, source?: string) => call('PUT', `/v1/intake-records/${r.id}/fields/${key}`, s.credentials.operatorKey, { value, ...(source ? { source } : {}) });
    let res = await put('employee_count', 40);
    expect(res.status).toBe(200);
    expect(res.body.outcome).toBe('ran');
    expect(field(res.body, 'employee_count')).toMatchObject({ value: 40, status: 'draft', source: 'manual' });
    res = await put('employee_count', 41, 'extraction');
    expect(field(res.body, 'employee_count')).toMatchObject({ value: 41, status: 'draft', source: 'extraction' });
    res = await put('employee_count', null);
    expect(field(res.body, 'employee_count')).toMatchObject({ value: null, status: 'empty' });
    for (const [key, value] of [
      ['employee_count', 'forty'],
      ['plan_type', 'gold'],
      ['plan_start_date', '2026-13-01'],
      ['dental_included', 'yes'],
      ['census_file', 'fil_doesnotexist'],
    ] as const) {
      res = await put(key, value);
      expect(res.status, key).toBe(422);
      expect(res.body).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/value' }] });
    }
    res = await put('no_such_field', 'x');
    expect(res.status).toBe(404);
    expect((await put('plan_type', 'hmo')).status).toBe(200);
    expect((await put('plan_start_date', '2027-01-01')).status).toBe(200);
    expect((await put('dental_included', true)).status).toBe(200);
    const again = await call('GET', `/v1/intake-records/${r.id}`, s.credentials.operatorKey);
    expect(field(again.body, 'dental_included')).toMatchObject({ value: true, status: 'draft' });
  });

  it('finalize: refused naming the missing required fields; then finalizes, locks the fields, emits once; finalizing again changes nothing', async () => {
    const r = await createRecord(s.credentials.clientId, 'To finalize', { company_name: 'Acme', plan_type: 'ppo' });
    const refused = await call('POST', `/v1/intake-records/${r.id}:finalize`, s.credentials.operatorKey);
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('invalid_transition');
    expect(refused.body.missingFields).toEqual(['employee_count', 'plan_start_date']);
    expect(refused.body.detail).toContain('employee_count');

    await call('PUT', `/v1/intake-records/${r.id}/fields/employee_count`, s.credentials.operatorKey, { value: 12 });
    await call('PUT', `/v1/intake-records/${r.id}/fields/plan_start_date`, s.credentials.operatorKey, { value: '2027-01-01' });
    const done = await proposeAndApprove('POST', `/v1/intake-records/${r.id}:finalize`, s.credentials.operatorKey);
    expect(done.error).toBeNull();
    expect(done.result).toMatchObject({ status: 'finalized' });
    expect(done.result.finalizedAt).not.toBeNull();
    expect(field(done.result, 'company_name').status).toBe('final');
    expect(field(done.result, 'dental_included').status).toBe('empty'); // an empty optional field stays empty
    expect(await finalizedEvents(r.id)).toBe(1);
    const [evt] = await s.database.execute<{ data: any; client_id: string }>(`select data, client_id from events where type = 'intake.finalized' and subject_id = '${r.id}'`);
    expect(evt!.client_id).toBe(s.credentials.clientId);
    expect(evt!.data).toMatchObject({ id: r.id, status: 'finalized' });

    // A final field, or any field of a finalized record, cannot be set.
    const setFinal = await call('PUT', `/v1/intake-records/${r.id}/fields/company_name`, s.credentials.operatorKey, { value: 'Other' });
    expect(setFinal.status).toBe(409);
    const setEmpty = await call('PUT', `/v1/intake-records/${r.id}/fields/dental_included`, s.credentials.operatorKey, { value: true });
    expect(setEmpty.status).toBe(409);

    // Finalizing again: no change, no event.
    const twice = await proposeAndApprove('POST', `/v1/intake-records/${r.id}:finalize`, s.credentials.operatorKey);
    expect(twice.result).toMatchObject({ status: 'finalized', finalizedAt: done.result.finalizedAt, updatedAt: done.result.updatedAt });
    expect(await finalizedEvents(r.id)).toBe(1);

    // Reopen: only a final field; the record returns to draft; setting works; finalizing emits again.
    const notFinal = await call('POST', `/v1/intake-records/${r.id}/fields/dental_included:reopen`, s.credentials.operatorKey, { reason: 'x' });
    expect(notFinal.status).toBe(409);
    const reopened = await proposeAndApprove('POST', `/v1/intake-records/${r.id}/fields/employee_count:reopen`, s.credentials.operatorKey, { reason: 'miscounted' });
    expect(reopened.result).toMatchObject({ status: 'draft', finalizedAt: null });
    expect(field(reopened.result, 'employee_count').status).toBe('draft');
    expect(field(reopened.result, 'company_name').status).toBe('final');
    expect((await call('PUT', `/v1/intake-records/${r.id}/fields/company_name`, s.credentials.operatorKey, { value: 'x' })).status).toBe(409);
    const set = await call('PUT', `/v1/intake-records/${r.id}/fields/employee_count`, s.credentials.operatorKey, { value: 13 });
    expect(set.status).toBe(200);
    const again = await proposeAndApprove('POST', `/v1/intake-records/${r.id}:finalize`, s.credentials.operatorKey);
    expect(again.result.status).toBe('finalized');
    expect(await finalizedEvents(r.id)).toBe(2);
  });

  it('a proposal whose subject changed is re-checked at approval: finalize proposed, a required field cleared, approval fails', async () => {
    const r = await createRecord(s.credentials.clientId, 'Race', { company_name: 'A', employee_count: 1, plan_start_date: '2027-01-01', plan_type: 'hmo' });
    const proposed = await call('POST', `/v1/intake-records/${r.id}:finalize`, s.credentials.operatorKey);
    expect(proposed.status).toBe(202);
    await call('PUT', `/v1/intake-records/${r.id}/fields/plan_type`, s.credentials.operatorKey, { value: null });
    await call('POST', `/v1/approvals/${proposed.body.approval.id}:approve`, await token(s.credentials.adminSub as string), {});
    const polled = await call('GET', `/v1/approvals/${proposed.body.approval.id}`, s.credentials.operatorKey);
    expect(polled.body.status).toBe('failed');
    expect(polled.body.error).toMatchObject({ code: 'invalid_transition' });
    expect(await finalizedEvents(r.id)).toBe(0);
  });

  it('set_field and finalize racing: the locked row serialises them (finalize wins or the field is set before it)', async () => {
    const r = await createRecord(s.credentials.clientId, 'Lock', { company_name: 'A', employee_count: 1, plan_start_date: '2027-01-01', plan_type: 'hmo' });
    const proposed = await call('POST', `/v1/intake-records/${r.id}:finalize`, s.credentials.operatorKey);
    const admin = await token(s.credentials.adminSub as string);
    const [approve, set] = await Promise.all([
      call('POST', `/v1/approvals/${proposed.body.approval.id}:approve`, admin, {}),
      call('PUT', `/v1/intake-records/${r.id}/fields/contact_email`, s.credentials.operatorKey, { value: 'a@example.com' }),
    ]);
    expect(approve.status).toBe(200);
    const after = (await call('GET', `/v1/intake-records/${r.id}`, s.credentials.operatorKey)).body;
    expect(after.status).toBe('finalized');
    if (set.status === 200) expect(field(after, 'contact_email')).toMatchObject({ value: 'a@example.com', status: 'final' });
    else {
      expect(set.status).toBe(409);
      expect(field(after, 'contact_email')).toMatchObject({ value: null, status: 'empty' });
    }
  });
});

describe('visibility across clients and credentials', () => {
  const cases: { who: string; credential: () => Promise<string>; acme: boolean; globex: boolean }[] = [
    { who: 'unbound operator key (all clients)', credential: async () => s.credentials.operatorKey, acme: true, globex: true },
    { who: 'operator with all clients (OAuth)', credential: () => token(s.credentials.operatorSub as string), acme: true, globex: true },
    { who: 'operator scoped to Acme', credential: () => token(s.credentials.scopedOperatorSub as string), acme: true, globex: false },
    { who: 'client admin of Acme', credential: () => token(s.credentials.clientAdminSub as string), acme: true, globex: false },
    { who: 'key bound to Acme', credential: async () => s.credentials.serviceKey, acme: true, globex: false },
  ];
  for (const c of cases) {
    it(`${c.who}: get, list and set_field reach Acme ${c.acme}, Globex ${c.globex}`, async () => {
      const cred = await c.credential();
      expect((await call('GET', `/v1/intake-records/${acmeId}`, cred)).status).toBe(c.acme ? 200 : 404);
      expect((await call('GET', `/v1/intake-records/${globexId}`, cred)).status).toBe(c.globex ? 200 : 404);
      const listed = await call('GET', '/v1/intake-records?pageSize=200', cred);
      expect(listed.status).toBe(200);
      for (const item of listed.body.items) expectSchema('IntakeRecord', item);
      const ids = listed.body.items.map((r: any) => r.id);
      expect(ids.includes(acmeId)).toBe(c.acme);
      expect(ids.includes(globexId)).toBe(c.globex);
      const filtered = await call('GET', `/v1/intake-records?clientId=${s.credentials.otherClientId}`, cred);
      expect(filtered.status).toBe(c.globex ? 200 : 404);
      const set = await call('PUT', `/v1/intake-records/${globexId}/fields/contact_email`, cred, { value: 'x@globex.example' });
      expect(set.status).toBe(c.globex ? 200 : 404);
      const fin = await call('POST', `/v1/intake-records/${globexId}:finalize`, cred);
      expect(fin.status).toBe(c.globex ? 409 : 404); // required fields are empty: the pre-flight refuses
    });
  }

  it('two credentials of one owner: the unbound key reaches Globex, the bound key of the same owner does not', async () => {
    expect((await call('GET', `/v1/intake-records/${globexId}`, s.credentials.operatorKey)).status).toBe(200);
    expect((await call('GET', `/v1/intake-records/${globexId}`, s.credentials.serviceKey)).status).toBe(404);
  });

  it('list filters by status and project, and pages', async () => {
    const drafts = await call('GET', `/v1/intake-records?status=finalized&clientId=${s.credentials.clientId}`, s.credentials.operatorKey);
    expect(drafts.body.items.every((r: any) => r.status === 'finalized' && r.clientId === s.credentials.clientId)).toBe(true);
    const first = await call('GET', '/v1/intake-records?pageSize=1', s.credentials.operatorKey);
    expect(first.body.items).toHaveLength(1);
    expect(first.body.nextCursor).toBeTruthy();
    const second = await call('GET', `/v1/intake-records?pageSize=1&cursor=${encodeURIComponent(first.body.nextCursor)}`, s.credentials.operatorKey);
    expect(second.body.items[0].id).not.toBe(first.body.items[0].id);
  });
});

describe('over MCP', () => {
  it('get, list and set_field as tools; another client is not found', async () => {
    const m = await connectMcp(s.url, s.credentials.serviceKey);
    sessions.push(m);
    const got = unwrap(ok(await m.call('svc.intake.get', { intake_id: acmeId })));
    expect(got.id).toBe(acmeId);
    const listed = unwrap(ok(await m.call('svc.intake.list', {})));
    expect(listed.items.map((r: any) => r.id)).toContain(acmeId);
    expect(listed.items.map((r: any) => r.id)).not.toContain(globexId);
    expect(toolError(await m.call('svc.intake.get', { intake_id: globexId })).code).toBe('not_found');
    const set = (ok(await m.call('svc.intake.draft.set_field', { intake_id: acmeId, field_key: 'contact_email', value: 'hr@acme.example' })));
    expect(field(set, 'contact_email')).toMatchObject({ value: 'hr@acme.example', status: 'draft' });
    const bad = toolError(await m.call('svc.intake.draft.set_field', { intake_id: acmeId, field_key: 'employee_count', value: 'x' }));
    expect(bad).toMatchObject({ code: 'validation_failed' });
    const fin = toolError(await m.call('svc.intake.finalize', { intake_id: acmeId }));
    expect(fin.code).toBe('invalid_transition');
  });
});
