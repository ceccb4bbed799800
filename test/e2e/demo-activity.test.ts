// The demo activity of the seed (demo/seed-activity.ts): intake records, the census file in the
// store with its extraction, and pipeline runs executed by the registered steps, read back through
// the API (the suite checks every result against the contract's schemas); seeding again adds nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { operationsById } from '../../generated/registry.ts';
import { pipelineDefinitions } from '../../handlers/pipelines.ts';
import { INTAKE_TEMPLATES } from '../../handlers/intake-templates.ts';
import { loadConfig } from '../../runtime/config.ts';
import { DEMO_CENSUS } from '../../demo/seed-activity.ts';
import { seedDemoWorkspace } from '../../demo/workspace.ts';
import { freshDatabase } from '../support/db.ts';
import { startIdp, type TestIdp } from '../support/idp.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let s: TestServer;
let idp: TestIdp;
let dataDir: string;
const tokens: Record<string, string> = {};
const TABLES = ['intake_records', 'files', 'uploads', 'extractions', 'pipeline_runs', 'pipeline_steps', 'pipeline_events', 'operations'];

async function counts(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of TABLES) {
    const [row] = await s.database.execute<{ n: number }>(sql.raw(`select count(*)::int as n from ${t}`));
    out[t] = row!.n;
  }
  return out;
}

async function token(sub: string): Promise<string> {
  if (tokens[sub]) return tokens[sub]!;
  const scope = [...new Set(Object.values(operationsById).map((o) => o.scope).filter((x): x is string => !!x))].join(' ');
  tokens[sub] = await idp.issueToken({ sub, aud: `${s.config.baseUrl}/mcp`, scope, client_id: s.credentials.oauthClientId });
  return tokens[sub]!;
}

async function get(credential: string, path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${s.url}${path}`, { headers: { authorization: `Bearer ${credential}` } });
  return { status: res.status, body: await res.json() };
}

beforeAll(async () => {
  idp = await startIdp();
  dataDir = mkdtempSync(join(tmpdir(), 'svc-demo-activity-'));
  const database = await freshDatabase();
  await seedDemoWorkspace(database, loadConfig({}, { dataDir, port: 0 }), { pipelines: pipelineDefinitions, intakeTemplates: INTAKE_TEMPLATES }, 'http://svc.test');
  s = await startTestServer({ database, dataDir, oauthIssuer: idp.issuer, oauthJwksUrl: idp.jwksUrl, workersEnabled: false });
}, 60_000);
afterAll(async () => {
  await s?.close();
  await idp?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('demo activity', () => {
  it('intake records of two clients, one finalized, each within its client scope', async () => {
    const all = await get(s.credentials.operatorKey, '/v1/intake-records?pageSize=100');
    expect(all.status).toBe(200);
    const ids = all.body.items.map((r: any) => r.id);
    expect(ids).toEqual(expect.arrayContaining(['int_demo_acme_benefits', 'int_demo_acme_profile', 'int_demo_globex_benefits']));
    const bound = await get(s.credentials.serviceKey, '/v1/intake-records?pageSize=100');
    expect(bound.body.items.every((r: any) => r.clientId === s.credentials.clientId)).toBe(true);
    const profile = await get(s.credentials.operatorKey, '/v1/intake-records/int_demo_acme_profile');
    expect(profile.body).toMatchObject({ status: 'finalized', template: 'company_profile' });
    expect(profile.body.fields.find((f: any) => f.key === 'legal_name')).toMatchObject({ status: 'final', value: 'Acme Benefits Company LLC' });
  });

  it('the census file is in the store with its sha256, downloadable, and its extraction read the values', async () => {
    const stored = readFileSync(join(dataDir, 'files', 'uploads', DEMO_CENSUS.uploadId));
    expect(stored).toEqual(DEMO_CENSUS.bytes);
    const [file] = await s.database.execute<{ sha256: string; status: string }>(`select sha256, status from files where id = '${DEMO_CENSUS.fileId}'`);
    expect(file).toEqual({ sha256: createHash('sha256').update(stored).digest('hex'), status: 'available' });
    const dl = await get(s.credentials.serviceKey, `/v1/files/${DEMO_CENSUS.fileId}/download-url`);
    expect(dl.status).toBe(200);
    expect(Buffer.from(await (await fetch(dl.body.url)).arrayBuffer())).toEqual(DEMO_CENSUS.bytes);
    const extraction = await get(s.credentials.serviceKey, `/v1/extractions/${DEMO_CENSUS.extractionId}`);
    expect(extraction.body.status).toBe('succeeded');
    const values = Object.fromEntries(extraction.body.fields.map((f: any) => [f.key, f.value]));
    expect(values).toEqual({ company_name: 'Acme Benefits Co', employee_count: 1250, plan_start_date: '2027-01-01', plan_type: 'ppo', dental_included: true });
  });

  it('pipeline runs executed by the registered steps: Acme succeeded, the internal one failed; the owner sees their operations', async () => {
    const owner = await token(s.credentials.operatorSub as string);
    const acme = await get(owner, '/v1/pipeline-runs/run_demo_acme_digest');
    expect(acme.body).toMatchObject({ status: 'succeeded', clientId: s.credentials.clientId });
    expect(acme.body.steps.map((x: any) => x.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    const [tasks] = await s.database.execute<{ n: number }>(`select count(*)::int as n from tasks where client_id = '${s.credentials.clientId}'`);
    const [summary] = await s.database.execute<{ output: any }>(`select output from pipeline_steps where run_id = 'run_demo_acme_digest' and name = 'summarize'`);
    expect(summary!.output.total).toBe(tasks!.n);
    const internal = await get(owner, '/v1/pipeline-runs/run_demo_internal_digest');
    expect(internal.body).toMatchObject({ status: 'failed', clientId: null });
    expect(internal.body.steps.map((x: any) => x.status)).toEqual(['succeeded', 'failed', 'skipped']);
    const events = await get(owner, '/v1/pipeline-events?runId=run_demo_acme_digest&pageSize=100');
    expect(events.body.items[0].type).toBe('run_queued');
    expect(events.body.items.at(-1).type).toBe('run_succeeded');
    const ops = await get(owner, '/v1/operations?pageSize=100');
    expect(ops.body.items.map((o: any) => o.id)).toEqual(expect.arrayContaining(['op_demo_run_acme_digest', 'op_demo_run_internal_digest', DEMO_CENSUS.operationId]));
    // The client admin reads Acme's run (pipeline:read), not the internal one.
    const admin = await token(s.credentials.clientAdminSub as string);
    expect((await get(admin, '/v1/pipeline-runs/run_demo_acme_digest')).status).toBe(200);
    expect((await get(admin, '/v1/pipeline-runs/run_demo_internal_digest')).status).toBe(404);
  });

  it('seeding again adds nothing', async () => {
    const before = await counts();
    await seedDemoWorkspace(s.database, loadConfig({}, { dataDir, port: 0 }), { pipelines: pipelineDefinitions, intakeTemplates: INTAKE_TEMPLATES }, 'http://svc.test');
    expect(await counts()).toEqual(before);
  });
});
