// A dry-run approve (`Prefer: dry-run`; approvals.approve is not an MCP tool) writes nothing: the proposed write
// runs in dry-run mode inside the approve's rolled-back transaction, the plan lists its events, and
// both the approve and the approved write are audited as `planned`. Every table is dumped before and
// after and compared (audit_log aside, which gains exactly the `planned` rows). PGlite, and
// PostgreSQL when DATABASE_URL is set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startIdp, type TestIdp } from '../support/idp.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { operationsById } from '../../generated/registry.ts';

let s: TestServer;
let idp: TestIdp;

beforeAll(async () => {
  idp = await startIdp();
  // No webhook worker: woken by the proposals' events, its first fan-out writes its high-water mark
  // (settings.webhooks_fanout_position) whenever it runs, possibly between the two dumps. A dry run that
  // leaked an event would still show, in the events table itself.
  s = await startTestServer({ oauthIssuer: idp.issuer, oauthJwksUrl: idp.jwksUrl, webhookWorker: false });
}, 60_000);
afterAll(async () => {
  await s?.close();
  await idp?.close();
});

function token(sub: string): Promise<string> {
  const scope = [...new Set(Object.values(operationsById).map((o) => o.scope).filter((x): x is string => !!x))].join(' ');
  return idp.issueToken({ sub, aud: `${s.config.baseUrl}/mcp`, scope, client_id: s.credentials.oauthClientId });
}

/** Every row of every table but audit_log, as text, table by table. */
async function dumpTables(): Promise<Record<string, string[]>> {
  const tables = await s.database.execute<{ name: string }>(
    `select table_name as name from information_schema.tables
      where table_schema = current_schema() and table_type = 'BASE TABLE' and table_name <> 'audit_log' order by 1`,
  );
  const out: Record<string, string[]> = {};
  for (const { name } of tables) {
    const rows = await s.database.execute<{ r: string }>(`select t::text as r from "${name}" t`);
    out[name] = rows.map((x) => x.r).sort();
  }
  return out;
}

async function auditOf(requestId: string): Promise<{ operation_id: string; outcome: string }[]> {
  await s.flushAudit();
  return s.database.execute<{ operation_id: string; outcome: string }>(
    `select operation_id, outcome from audit_log where request_id = '${requestId}' order by id`,
  );
}

async function propose(name: string): Promise<string> {
  const res = await fetch(`${s.url}/v1/projects`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.credentials.operatorKey}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify({ clientId: s.credentials.clientId, name }),
  });
  expect(res.status).toBe(202);
  return (await res.json()).approval.id as string;
}

describe('dry-run approve', () => {
  it('REST Prefer: dry-run: every table unchanged, plan lists the approved write, audited planned', async () => {
    const id = await propose('Dry-run approve zq7');
    const approver = await token(s.credentials.adminSub as string);
    // A token's first use records its grant's lastUsedAt (at most once a minute): use it once first.
    await (await fetch(`${s.url}/v1/meta`, { headers: { authorization: `Bearer ${approver}` } })).arrayBuffer();
    await new Promise((r) => setTimeout(r, 100));
    const before = await dumpTables();
    const res = await fetch(`${s.url}/v1/approvals/${id}:approve`, {
      method: 'POST',
      headers: { authorization: `Bearer ${approver}`, 'content-type': 'application/json', prefer: 'dry-run' },
      body: JSON.stringify({ comment: 'looks fine' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('preference-applied')).toBe('dry-run');
    const body = await res.json();
    expect(body.outcome).toBe('planned');
    expect(body.plan.operationId).toBe('approvals.approve');
    expect(body.plan.events).toContain('approval.approved');
    expect(body.plan.preview).toMatchObject({ id, status: 'approved', result: { name: 'Dry-run approve zq7' } });
    expect(await dumpTables()).toEqual(before);

    const audit = await auditOf(res.headers.get('x-request-id')!);
    expect(audit).toEqual(
      expect.arrayContaining([
        { operation_id: 'projects.create', outcome: 'planned' },
        { operation_id: 'approvals.approve', outcome: 'planned' },
      ]),
    );
    expect(audit.map((a) => a.outcome)).not.toContain('ran');

    // The proposal is still pending and can be approved for real afterwards.
    const real = await fetch(`${s.url}/v1/approvals/${id}:approve`, { method: 'POST', headers: { authorization: `Bearer ${approver}` } });
    expect((await real.json()).result.status).toBe('approved');
  });
});
