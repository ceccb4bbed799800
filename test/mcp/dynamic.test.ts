// The dynamic MCP mode end to end: the real server (PGlite, or PostgreSQL with DATABASE_URL) with the
// demo seed and a test identity provider, the MCP SDK's own Client over Streamable HTTP on
// /mcp?mode=dynamic beside the static /mcp. It shows the budget of tools/list, that describe gives
// every tool's static definition byte for byte, that invoke (and read) answer exactly what the
// static tools/call answers for every tool, valid and invalid calls alike, idempotency through
// invoke, search and invoke bounded by what each caller may call (client admin, viewer, the write
// switch), the audit naming the real tool, the rate limit per call, and the resources.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { operationsById, service } from '../../generated/registry.ts';
import { mcpTools } from '../../generated/mcp-tools.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipelineDefinitions } from '../../handlers/pipelines.ts';
import { INTAKE_TEMPLATES } from '../../handlers/intake-templates.ts';
import { loadConfig } from '../../runtime/config.ts';
import { DEMO_CENSUS } from '../../demo/seed-activity.ts';
import { seedDemoWorkspace } from '../../demo/workspace.ts';
import { freshDatabase } from '../support/db.ts';
import { startServerWithIdp, type World } from '../support/world.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { connectMcp, probeAuthDiscovery, structured, type McpSession } from './support.ts';

const META = Object.fromEntries(service.mcpDynamicTools.map((t) => [t.role, t.name])) as Record<'search' | 'describe' | 'read' | 'invoke', string>;
/** The budget of discovery (issue 25). */
const MAX_TOOLS = 6;
const MAX_BYTES = 4096;

const started = Date.now();
const FRESH_ID = /\b[a-z]{2,4}_[0-9a-z]{20}\b/g;
const TIMESTAMP = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g;

/**
 * A tool result as two calls of one tool can share it: the request id of an error aside, and what
 * each call mints for itself (the ids and the "now" of a dry run's preview) replaced by a marker.
 */
function comparable(res: CallToolResult): unknown {
  const scrub = (v: unknown): unknown => {
    if (typeof v === 'string') return v.replace(FRESH_ID, '<new id>').replace(TIMESTAMP, (t) => (Date.parse(t) >= started - 1000 ? '<now>' : t));
    if (Array.isArray(v)) return v.map(scrub);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, scrub(x)]));
    return v;
  };
  structured(res); // the text content is the JSON of structuredContent
  const { 'svc/requestId': requestId, ...meta } = (res._meta ?? {}) as Record<string, unknown>;
  if (res.isError) expect(requestId).toMatch(/^req_/);
  return scrub({ isError: res.isError ?? false, structuredContent: res.structuredContent, _meta: meta });
}

/** One JSON-RPC exchange over plain HTTP, to see the bytes a client receives. */
async function rpc(base: string, path: string, credential: string, body: unknown): Promise<{ status: number; text: string; json: any; headers: Headers }> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${credential}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, json: JSON.parse(text), headers: res.headers };
}

const call = (id: number, name: string, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

describe('the dynamic MCP mode, end to end', () => {
  let w: World;
  let operator: string;
  const sessions: McpSession[] = [];
  let stat: McpSession;
  let dyn: McpSession;
  /** Valid arguments for every tool (commands as dry runs, which write nothing). */
  let valid: Record<string, Record<string, unknown>>;

  async function session(credential: string, mode: 'static' | 'dynamic'): Promise<McpSession> {
    const m = await connectMcp(w.s.url, credential, { mode });
    sessions.push(m);
    return m;
  }
  const invoke = (m: McpSession, tool: string, args: Record<string, unknown>, role: 'invoke' | 'read' = 'invoke') => m.call(META[role], { tool, arguments: args });

  let dataDir: string;
  beforeAll(async () => {
    // The demo workspace with its activity (intake records, the census extraction, pipeline runs), so
    // that the valid calls below name records that exist; no workers, so nothing changes between the
    // static call and the dynamic one.
    dataDir = mkdtempSync(join(tmpdir(), 'svc-dynamic-'));
    const database = await freshDatabase();
    await seedDemoWorkspace(database, loadConfig({}, { dataDir, port: 0 }), { pipelines: pipelineDefinitions, intakeTemplates: INTAKE_TEMPLATES }, 'http://svc.test');
    w = await startServerWithIdp({ database, dataDir, workersEnabled: false });
    operator = w.credentials.unboundKey;
    stat = await session(operator, 'static');
    dyn = await session(operator, 'dynamic');
    // Ids of seeded records, read over REST, for calls that name one.
    const first = async (op: string, input: Record<string, unknown> = {}) => ((await w.rest('unboundKey', op, input)).body?.items ?? [])[0] ?? null;
    const intake = await first('intake.list');
    const intakeRecord = intake ? (await w.rest('unboundKey', 'intake.get', { intake_id: intake.id })).body : null;
    const run = await first('pipeline.runs.list');
    const runRecord = run ? (await w.rest('unboundKey', 'pipeline.runs.get', { run_id: run.id })).body : null;
    const operation = await first('operations.list');
    const task = (await w.rest('unboundKey', 'tasks.get', { task_id: w.c.taskId })).body;
    const project = (await w.rest('unboundKey', 'projects.get', { project_id: w.c.projectId })).body;
    const clientId = w.c.clientId;
    // A proposal, so that approvals.get has one to read.
    const proposed = await w.rest('unboundKey', 'projects.create', { clientId: w.c.clientId, name: 'Proposed for approvals.get' });
    expect(proposed.status).toBe(202);
    const ids = {
      intake: intake?.id ?? 'int_none',
      template: intake?.template ?? Object.keys(INTAKE_TEMPLATES)[0]!,
      fieldKey: intakeRecord?.fields?.[0]?.key ?? 'none',
      extraction: DEMO_CENSUS.extractionId,
      run: run?.id ?? 'run_none',
      pipeline: run?.pipeline ?? pipelineDefinitions[0]!.name,
      step: runRecord?.steps?.[0]?.name ?? 'none',
      approval: proposed.body.approval.id as string,
      operation: operation?.id ?? DEMO_CENSUS.operationId,
    };
    const dry = { dryRun: true };
    valid = {
      'svc.actions.list': {},
      'svc.approvals.get': { approval_id: ids.approval },
      'svc.approvals.list': {},
      'svc.campaigns.list': {},
      'svc.campaigns.propose_send': { campaign_id: 'cmp_demo_acme_oe', ...dry },
      'svc.clients.get': { client_id: clientId },
      'svc.clients.health': { client_id: clientId },
      'svc.clients.launch_readiness': { client_id: clientId },
      'svc.clients.list': {},
      'svc.clients.publish_hub': { client_id: clientId, ...dry },
      'svc.clients.summary': { client_id: clientId },
      'svc.crm.accounts.list': {},
      'svc.crm.contacts.list': {},
      'svc.crm.contacts.search': {},
      'svc.crm.lead.create': { title: 'Dynamic lead', company: 'Acme', ...dry },
      'svc.crm.leads.list': {},
      'svc.crm.opportunities.list': {},
      'svc.crm.opportunity.convert': { opportunity_id: 'opp_demo_acme_retiree', ...dry },
      'svc.crm.touchpoint.log': { channel: 'note', summary: 'Dynamic note', leadId: 'led_demo_acme_qualified', ...dry },
      'svc.extraction.get': { extraction_id: ids.extraction },
      'svc.intake.create': { clientId, template: ids.template, title: 'Dynamic intake', ...dry },
      'svc.intake.draft.set_field': { intake_id: ids.intake, field_key: ids.fieldKey, value: 'x', ...dry },
      'svc.intake.finalize': { intake_id: ids.intake, ...dry },
      'svc.intake.get': { intake_id: ids.intake },
      'svc.intake.list': {},
      'svc.intake.reopen_field': { intake_id: ids.intake, field_key: ids.fieldKey, ...dry },
      'svc.meta.get': {},
      'svc.notifications.list': {},
      'svc.operations.cancel': { operation_id: ids.operation, ...dry },
      'svc.operations.get': { operation_id: ids.operation },
      'svc.operations.list': {},
      'svc.pipeline.events.list': {},
      'svc.pipeline.run.rerun_partial': { run_id: ids.run, fromStep: ids.step, ...dry },
      'svc.pipeline.run.start': { pipeline: ids.pipeline, clientId, ...dry },
      'svc.pipeline.runs.get': { run_id: ids.run },
      'svc.pipeline.runs.list': {},
      'svc.projects.create': { clientId, name: 'Dynamic project', ...dry },
      'svc.projects.get': { project_id: w.c.projectId },
      'svc.projects.list': {},
      'svc.projects.stage.advance': { project_id: w.c.projectId, ...dry },
      'svc.projects.update': { project_id: w.c.projectId, name: 'Renamed', ifMatch: project.etag, ...dry },
      'svc.reviews.get': { review_id: 'rev_demo_acme_design' },
      'svc.reviews.list': {},
      'svc.reviews.release': { review_id: 'rev_demo_acme_design', ...dry },
      'svc.search.query': { query: 'acme' },
      'svc.tasks.batch_create': { tasks: [{ title: 'Dynamic batch', clientId }], ...dry },
      'svc.tasks.comment': { task_id: w.c.taskId, body: 'Dynamic comment', ...dry },
      'svc.tasks.comments.list': { task_id: w.c.taskId },
      'svc.tasks.complete': { task_id: w.c.taskId, ...dry },
      'svc.tasks.create': { title: 'Dynamic task', clientId, ...dry },
      'svc.tasks.get': { task_id: w.c.taskId },
      'svc.tasks.list': { pageSize: 5 },
      'svc.tasks.update': { task_id: w.c.taskId, title: 'Retitled', ifMatch: task.etag, ...dry },
      'svc.timeline.list': {},
    };
  }, 120_000);
  afterAll(async () => {
    await Promise.all(sessions.map((m) => m.close().catch(() => undefined)));
    await w?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  describe('tools/list', () => {
    it(`lists at most ${MAX_TOOLS} tools in at most ${MAX_BYTES} bytes, with the names and arguments DESIGN.md fixes`, async () => {
      const res = await rpc(w.s.url, '/mcp?mode=dynamic', operator, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
      expect(res.status).toBe(200);
      const bytes = Buffer.byteLength(res.text);
      console.log(`dynamic tools/list: ${res.json.result.tools.length} tools, ${bytes} bytes (static: ${Buffer.byteLength((await rpc(w.s.url, '/mcp', operator, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).text)} bytes)`);
      expect(bytes).toBeLessThanOrEqual(MAX_BYTES);
      const tools = res.json.result.tools as { name: string; inputSchema: { properties: Record<string, unknown>; required: string[] }; annotations: Record<string, boolean> }[];
      expect(tools.length).toBeLessThanOrEqual(MAX_TOOLS);
      const byName = new Map(tools.map((t) => [t.name, t]));
      const args = (name: string) => Object.keys(byName.get(name)!.inputSchema.properties).sort();
      expect(args('svc.api.search')).toEqual(['query']);
      expect(args('svc.api.describe')).toEqual(['tool']);
      expect(args('svc.api.invoke')).toEqual(['arguments', 'tool']);
      expect(byName.get('svc.api.search')!.inputSchema.required).toEqual(['query']);
      expect(byName.get('svc.api.invoke')!.inputSchema.required).toEqual(['tool']);
      // Reads may be approved once; invoke says the most any tool it reaches may do.
      for (const name of ['svc.api.search', 'svc.api.describe', META.read]) expect(byName.get(name)!.annotations.readOnlyHint, name).toBe(true);
      expect(byName.get('svc.api.invoke')!.annotations).toEqual({ readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true });
      // The same for the SDK client, and as the served OpenAPI document publishes them.
      expect((await dyn.client.listTools()).tools).toEqual(tools);
      const doc = (await (await fetch(`${w.s.url}/v1/openapi.json`, { headers: { Authorization: `Bearer ${operator}` } })).json()) as { 'x-svc-mcp-dynamic': { tools: Record<string, unknown>[] } };
      expect(doc['x-svc-mcp-dynamic'].tools.map(({ role: _r, ...t }) => t)).toEqual(JSON.parse(JSON.stringify(tools)));
    });

    it('leaves the static mode as it was: every tool the caller may call, with the tools capability', async () => {
      expect((await stat.client.listTools()).tools.map((t) => t.name)).toEqual(mcpTools.map((t) => t.name));
      expect(dyn.client.getInstructions()).toContain(META.search);
      expect(stat.client.getInstructions()).not.toContain(META.search);
    });

    it('sends an OAuth client on the dynamic URL to the same protected-resource metadata', async () => {
      const seen = await probeAuthDiscovery(`${w.s.url}/mcp?mode=dynamic`);
      expect(seen.some((u) => u.endsWith('/.well-known/oauth-protected-resource/mcp'))).toBe(true);
    });
  });

  describe('every tool', () => {
    it('has a valid call in this test for each of the 54 tools', () => {
      expect(Object.keys(valid).sort()).toEqual(mcpTools.map((t) => t.name).sort());
    });

    it('describe gives the definition byte for byte as the static tools/list, with tier, scope and idempotency', async () => {
      const listed = (await rpc(w.s.url, '/mcp', operator, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).json.result.tools as { name: string }[];
      const sdkListed = new Map((await stat.client.listTools()).tools.map((t) => [t.name, t]));
      expect(listed).toHaveLength(54);
      for (const tool of listed) {
        const raw = await rpc(w.s.url, '/mcp?mode=dynamic', operator, call(2, META.describe, { tool: tool.name }));
        const result = raw.json.result;
        expect(result.isError, tool.name).toBeUndefined();
        const staticBytes = JSON.stringify(tool);
        expect(JSON.stringify(result.structuredContent.result.tool), tool.name).toBe(staticBytes);
        expect(result.content[0].text, tool.name).toContain(staticBytes);
        const op = operationsById[tool.name.slice(4)]!;
        expect(result.structuredContent.result, tool.name).toMatchObject({ tier: op.tier, scope: op.scope, idempotency: op.idempotency });
        const viaSdk = structured(await dyn.call(META.describe, { tool: tool.name })).result.tool;
        expect(viaSdk, tool.name).toEqual(sdkListed.get(tool.name));
      }
    });

    it('invoke answers exactly what the static tools/call answers, for a valid and an invalid call; read too, for reads', async () => {
      const outcomes = new Map<string, number>();
      for (const t of mcpTools) {
        const args = valid[t.name]!;
        const isRead = t.annotations.readOnlyHint;
        for (const [label, input] of [
          ['valid', args],
          ['invalid', { ...args, notAnArgument: true }],
        ] as const) {
          const expected = comparable(await stat.call(t.name, input));
          expect(comparable(await invoke(dyn, t.name, input)), `${t.name} (${label}) through invoke`).toEqual(expected);
          if (isRead) expect(comparable(await invoke(dyn, t.name, input, 'read')), `${t.name} (${label}) through read`).toEqual(expected);
          const s = (expected as { structuredContent: { outcome: string; error?: { code: string } } }).structuredContent;
          outcomes.set(`${label} ${s.outcome}`, (outcomes.get(`${label} ${s.outcome}`) ?? 0) + 1);
        }
      }
      // Every invalid call is refused; the valid ones run or plan, but for a few domain answers (a record
      // whose state forbids the step: invalid_transition; operations of the owner's sign-in, not this key's: not_found).
      expect(outcomes.get('invalid error')).toBe(54);
      expect((outcomes.get('valid ran') ?? 0) + (outcomes.get('valid planned') ?? 0)).toBeGreaterThanOrEqual(45);
      console.log(`valid calls: ${[...outcomes].map(([k, n]) => `${k} ${n}`).join(', ')}`);
    });

    it('invoke keeps the batch limit and the nesting limit of the static call', async () => {
      const tasks = Array.from({ length: service.limits.batchCreateMaxItems + 1 }, (_, i) => ({ title: `t${i}`, clientId: w.c.clientId }));
      const over = { tasks, idempotencyKey: randomUUID() };
      const expected = comparable(await stat.call('svc.tasks.batch_create', over));
      expect((expected as { structuredContent: { error: { code: string } } }).structuredContent.error.code).toBe('validation_failed');
      expect(comparable(await invoke(dyn, 'svc.tasks.batch_create', over))).toEqual(expected);
      const nested = (depth: number): unknown => (depth <= 1 ? 'x' : { a: nested(depth - 1) });
      for (let depth = service.limits.maxJsonDepth - 2; depth <= service.limits.maxJsonDepth + 2; depth++) {
        const input = { title: 'Deep', clientId: w.c.clientId, dryRun: true, description: nested(depth) };
        const s = await rpc(w.s.url, '/mcp', operator, call(1, 'svc.tasks.create', input));
        const d = await rpc(w.s.url, '/mcp?mode=dynamic', operator, call(1, META.invoke, { tool: 'svc.tasks.create', arguments: input }));
        expect(d.status, `depth ${depth}`).toBe(s.status);
        if (s.status !== 200) expect(d.json.code, `depth ${depth}`).toBe(s.json.code);
        else expect(comparable(d.json.result), `depth ${depth}`).toEqual(comparable(s.json.result));
      }
    });
  });

  describe('idempotency and audit through invoke', () => {
    it('replays a create, refuses a reused key with another body and a missing key, as the static call does, and writes once', async () => {
      const count = async () => Number((await w.s.database.execute<{ n: string }>(`select count(*)::text as n from tasks`))[0]!.n);
      const audited = async (where: string) => {
        await w.s.flushAudit();
        return Number((await w.s.database.execute<{ n: string }>(`select count(*)::text as n from audit_log where ${where}`))[0]!.n);
      };
      const before = await count();
      const auditBefore = await audited(`transport = 'mcp' and tool_name = 'svc.tasks.create'`);
      const key = randomUUID();
      const input = { title: 'Once through invoke', clientId: w.c.clientId, idempotencyKey: key };
      const first = await invoke(dyn, 'svc.tasks.create', input);
      expect(structured(first).outcome).toBe('ran');
      expect(first._meta).toMatchObject({ 'svc/status': 201 });
      const again = await invoke(dyn, 'svc.tasks.create', input);
      expect(again._meta).toMatchObject({ 'svc/status': 201, 'svc/idempotencyReplayed': true });
      expect(structured(again)).toEqual(structured(first));
      // One store for both modes: the static call with the same key replays the same answer.
      const viaStatic = await stat.call('svc.tasks.create', input);
      expect(comparable(viaStatic)).toEqual(comparable(again));
      const reused = { ...input, title: 'Another body' };
      expect(comparable(await invoke(dyn, 'svc.tasks.create', reused))).toEqual(comparable(await stat.call('svc.tasks.create', reused)));
      expect(structured(await invoke(dyn, 'svc.tasks.create', reused)).error.code).toBe('idempotency_key_reused');
      const keyless = { title: 'No key', clientId: w.c.clientId };
      expect(comparable(await invoke(dyn, 'svc.tasks.create', keyless))).toEqual(comparable(await stat.call('svc.tasks.create', keyless)));
      expect(structured(await invoke(dyn, 'svc.tasks.create', keyless)).error.code).toBe('idempotency_key_required');
      expect(await count()).toBe(before + 1);
      // Nine calls of tasks.create (six through invoke), each audited under the real tool; no row names a meta-tool.
      expect(await audited(`transport = 'mcp' and tool_name = 'svc.tasks.create'`)).toBe(auditBefore + 9);
      expect(await audited(`tool_name like 'svc.api.%' or tool_name like 'svc_api_%'`)).toBe(0);
      const [row] = await w.s.database.execute<{ operation_id: string; outcome: string; status: number }>(
        `select operation_id, outcome, status from audit_log where tool_name = 'svc.tasks.create' and outcome = 'ran' order by at desc limit 1`,
      );
      expect(row).toMatchObject({ operation_id: 'tasks.create', outcome: 'ran', status: 201 });
    });

    it('spends one unit of the rate limit per tools/call of a batch', async () => {
      const key = w.credentials.opAll2;
      const firstRes = await rpc(w.s.url, '/mcp?mode=dynamic', key, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
      const remaining = Number(firstRes.headers.get('x-ratelimit-remaining'));
      const batch = [
        call(1, META.search, { query: 'tasks' }),
        call(2, META.describe, { tool: 'svc.tasks.get' }),
        ...Array.from({ length: 8 }, (_, i) => call(i + 3, META.read, { tool: 'svc.meta.get' })),
      ];
      const res = await rpc(w.s.url, '/mcp?mode=dynamic', key, batch);
      expect(res.status).toBe(200);
      expect(res.json).toHaveLength(10);
      expect(Number(res.headers.get('x-ratelimit-remaining'))).toBe(remaining - 10);
    });
  });

  describe('what each caller may call', () => {
    const unknownName = 'svc.nothing.here';
    const swap = (res: CallToolResult, name: string) => JSON.parse(JSON.stringify(comparable(res)).replaceAll(JSON.stringify(name).slice(1, -1), 'NAME'));

    async function checkCaller(credential: string, label: string): Promise<void> {
      const s = await session(credential, 'static');
      const d = await session(credential, 'dynamic');
      const allowed = new Set((await s.client.listTools()).tools.map((t) => t.name));
      expect(allowed.size, label).toBeLessThan(54);
      // Search over every family, every tool's summary and some plain words finds only listed tools,
      // and each listed tool by its own summary.
      const queries = [...new Set([...mcpTools.map((t) => t.title), ...Object.values(operationsById).map((o) => o.family), 'create', 'list', 'approve', 'secret', 'key', 'pipeline'])];
      const found = new Set<string>();
      for (const query of queries) {
        const names = (structured(await d.call(META.search, { query })).result.tools as { name: string }[]).map((t) => t.name);
        for (const n of names) expect(allowed.has(n), `${label}: search "${query}" found ${n}`).toBe(true);
        const own = mcpTools.find((t) => t.title === query);
        if (own && allowed.has(own.name)) expect(names, `${label}: search "${query}"`).toContain(own.name);
        names.forEach((n) => found.add(n));
      }
      expect([...allowed].filter((n) => !found.has(n)), label).toEqual([]);
      // Describe, read and invoke: a listed tool works; any other is the unknown tool's answer.
      const unknown = {
        describe: swap(await d.call(META.describe, { tool: unknownName }), unknownName),
        read: swap(await invoke(d, unknownName, {}, 'read'), unknownName),
        invoke: swap(await invoke(d, unknownName, {}), unknownName),
      };
      expect(unknown.invoke.structuredContent.error).toMatchObject({ code: 'not_found', status: 404, errors: [{ pointer: '/tool' }] });
      for (const t of mcpTools) {
        if (allowed.has(t.name)) {
          expect(structured(await d.call(META.describe, { tool: t.name })).result.tool.name, `${label} ${t.name}`).toBe(t.name);
          continue;
        }
        expect(swap(await d.call(META.describe, { tool: t.name }), t.name), `${label} describe ${t.name}`).toEqual(unknown.describe);
        expect(swap(await invoke(d, t.name, valid[t.name]!, 'read'), t.name), `${label} read ${t.name}`).toEqual(unknown.read);
        expect(swap(await invoke(d, t.name, valid[t.name]!), t.name), `${label} invoke ${t.name}`).toEqual(unknown.invoke);
      }
      expect(structured(await invoke(d, 'svc.meta.get', {}, 'read')).outcome, label).toBe('ran');
    }

    it("a client admin's search finds only its static list, and describe, read and invoke refuse the rest as unknown", async () => {
      await checkCaller(w.credentials.clientAdmin, 'client admin');
      // The refusal is audited under the tool asked for, as the static call's refusal would be.
      await w.s.flushAudit();
      const rows = await w.s.database.execute<{ tool_name: string; problem_code: string; principal_kind: string }>(
        `select tool_name, problem_code, principal_kind from audit_log where tool_name = 'svc.operations.list' and principal_kind = 'client_admin'`,
      );
      if (!operationsById['operations.list']!.audience.includes('client_admin')) expect(rows.length).toBeGreaterThan(0);
      for (const r of rows) expect(r.problem_code).toBe('not_found');
    });

    it("a viewer's search finds only the tools that need no scope, and the rest are refused as unknown", async () => {
      const viewer = await w.idp.issueToken({ sub: w.c.viewerSub, aud: `${w.s.config.baseUrl}/mcp`, scope: 'openid email profile', client_id: w.c.oauthClientId });
      await checkCaller(viewer, 'viewer');
    });
  });

  describe('resources', () => {
    it('both modes advertise resources and serve the agent guide and llms.txt as their addresses do', async () => {
      const guide = await (await fetch(`${w.s.url}/v1/agent-guide.md`, { headers: { Authorization: `Bearer ${operator}` } })).text();
      const llms = await (await fetch(`${w.s.url}/llms.txt`)).text();
      for (const m of [stat, dyn]) {
        expect(m.client.getServerCapabilities()?.resources).toBeDefined();
        const { resources } = await m.client.listResources();
        expect(resources.map((r) => [r.uri, r.mimeType])).toEqual([
          [`${w.s.config.baseUrl}/v1/agent-guide.md`, 'text/markdown'],
          [`${w.s.config.baseUrl}/llms.txt`, 'text/plain'],
        ]);
        const read = async (uri: string) => (await m.client.readResource({ uri })).contents[0] as { text: string };
        expect((await read(`${w.s.config.baseUrl}/v1/agent-guide.md`)).text).toBe(guide);
        expect((await read(`${w.s.config.baseUrl}/llms.txt`)).text).toBe(llms);
        await expect(m.client.readResource({ uri: `${w.s.config.baseUrl}/nothing.md` })).rejects.toMatchObject({ code: -32002 });
        expect((await m.client.listResourceTemplates()).resourceTemplates).toEqual([]);
      }
      expect(guide).toContain('?mode=dynamic');
      expect(llms).toContain('/mcp?mode=dynamic');
    });
  });
});

describe('the dynamic MCP mode with writes switched off', () => {
  let s: TestServer;
  let stat: McpSession;
  let dyn: McpSession;
  beforeAll(async () => {
    s = await startTestServer({ writesEnabled: false });
    stat = await connectMcp(s.url, s.credentials.operatorKey);
    dyn = await connectMcp(s.url, s.credentials.operatorKey, { mode: 'dynamic' });
  }, 60_000);
  afterAll(async () => {
    await stat?.close();
    await dyn?.close();
    await s?.close();
  });

  it('search finds no command, and invoke answers a command as the static call does (not_found), writing nothing', async () => {
    const commands = mcpTools.filter((t) => !t.annotations.readOnlyHint);
    const count = async () => Number((await s.database.execute<{ n: string }>(`select count(*)::text as n from tasks`))[0]!.n);
    const before = await count();
    for (const query of ['create', 'update', 'propose', ...commands.map((t) => t.title)]) {
      const found = structured(await dyn.call(META.search, { query })).result.tools as { name: string; kind: string }[];
      for (const f of found) expect(f.kind, `search "${query}" found ${f.name}`).toBe('read');
    }
    const unknown = structured(await dyn.call(META.invoke, { tool: 'svc.nothing.here', arguments: {} })).error;
    expect(unknown.detail).toContain('API_WRITES_ENABLED');
    for (const t of commands) {
      const args = { title: 'Off', idempotencyKey: randomUUID() };
      const viaStatic = structured(await stat.call(t.name, args)).error;
      const viaInvoke = structured(await dyn.call(META.invoke, { tool: t.name, arguments: args })).error;
      const pick = (e: Record<string, unknown>) => ({ code: e.code, status: e.status, title: e.title, retryable: e.retryable });
      expect(pick(viaInvoke), t.name).toEqual(pick(viaStatic));
      expect(viaStatic.code, t.name).toBe('not_found');
      // and nothing tells a switched-off tool from a name that is no tool
      expect(viaInvoke.detail.replace(t.name, 'NAME'), t.name).toBe(unknown.detail.replace('svc.nothing.here', 'NAME'));
    }
    expect(await count()).toBe(before);
    expect((await stat.client.listTools()).tools.every((t) => t.annotations?.readOnlyHint)).toBe(true);
    expect(structured(await dyn.call(META.read, { tool: 'svc.meta.get' })).outcome).toBe('ran');
  });
});
