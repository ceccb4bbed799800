// REST/MCP parity: every proven operation (meta.get, the tasks family, projects.create, approvals
// list/get) sent with the same input over REST and over MCP gives the same outcome, the same problem
// code (and failing fields) and the same database effect. REST requests are built from the
// registry's HTTP binding (path, query, body; controls as headers); MCP goes through the SDK Client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { startTestServer, type TestServer } from '../support/server.ts';
import { operationsById } from '../../generated/registry.ts';
import { connectMcp, structured, type McpSession } from './support.ts';

const TABLES = ['tasks', 'task_comments', 'projects', 'approvals', 'events'] as const;

interface Controls {
  idempotencyKey?: string;
  ifMatch?: string;
  dryRun?: boolean;
}

/** What a call amounts to, transport-independent. */
interface Outcome {
  outcome: string;
  /** Problem code, for errors. */
  code?: string;
  /** Failing field pointers, sorted, for errors. */
  pointers?: string[];
  /** The envelope without its outcome, for successes. */
  body?: unknown;
}

// Values that differ by construction between two separate writes.
const VOLATILE = new Set(['id', 'etag', 'createdAt', 'updatedAt', 'completedAt', 'expiresAt', 'decidedAt', 'requestId', 'approvalId', 'pollUrl', 'href', 'location', 'idempotencyKey']);

// Generated identifiers (tsk_… of 20 characters) inside other values, e.g. a plan's effects.
const GENERATED_ID = /\b[a-z]{3}_[0-9a-z]{20}\b/g;

function scrub(v: unknown): unknown {
  if (typeof v === 'string') return v.replace(GENERATED_ID, '<id>');
  if (Array.isArray(v)) return v.map(scrub);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k]) => !VOLATILE.has(k))
        .map(([k, x]) => [k, scrub(x)]),
    );
  }
  return v;
}

function fromEnvelope(env: Record<string, any>): Outcome {
  if (env.outcome === 'error') {
    return { outcome: 'error', code: env.error.code, pointers: (env.error.errors ?? []).map((e: { pointer: string }) => e.pointer).sort() };
  }
  const { outcome, ...rest } = env;
  return { outcome, body: rest };
}

describe('REST/MCP parity of the proven operations', () => {
  let s: TestServer;
  const mcp: Record<string, McpSession> = {};
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    s = await startTestServer({ app: { rateLimit: { limit: 100_000 } } });
    keys.operator = s.credentials.operatorKey;
    keys.service = s.credentials.serviceKey;
    mcp.operator = await connectMcp(s.url, keys.operator);
    mcp.service = await connectMcp(s.url, keys.service);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(Object.values(mcp).map((m) => m.close().catch(() => undefined)));
    await s?.close();
  });

  async function counts(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const t of TABLES) {
      const rows = await s.database.execute<{ n: number | string }>(`select count(*) as n from ${t}`);
      out[t] = Number(rows[0]?.n ?? 0);
    }
    return out;
  }
  function delta(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
    return Object.fromEntries(TABLES.map((t) => [t, b[t]! - a[t]!]));
  }

  async function viaRest(who: string, opId: string, input: Record<string, unknown>, controls: Controls): Promise<Outcome> {
    const op = operationsById[opId]!;
    let path = op.path;
    const query = new URLSearchParams();
    const body: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(input)) {
      const where = op.params[name] ?? 'body';
      if (where === 'path') path = path.replace(`{${name}}`, encodeURIComponent(String(value)));
      else if (where === 'query') query.set(name, String(value));
      else body[name] = value;
    }
    const headers: Record<string, string> = { Authorization: `Bearer ${keys[who]}` };
    if (controls.idempotencyKey) headers['Idempotency-Key'] = controls.idempotencyKey;
    if (controls.ifMatch) headers['If-Match'] = controls.ifMatch;
    if (controls.dryRun) headers.Prefer = 'dry-run';
    const hasBody = op.method !== 'GET' && op.method !== 'DELETE';
    if (hasBody) headers['Content-Type'] = 'application/json';
    const qs = query.toString();
    const res = await fetch(`${s.url}${path}${qs ? `?${qs}` : ''}`, {
      method: op.method,
      headers,
      body: hasBody ? JSON.stringify(body) : undefined,
    });
    const json = (await res.json()) as Record<string, any>;
    if (res.status >= 400) {
      return { outcome: 'error', code: json.code, pointers: (json.errors ?? []).map((e: { pointer: string }) => e.pointer).sort() };
    }
    if (op.kind === 'read') return { outcome: 'ran', body: { result: json } };
    return fromEnvelope(json);
  }

  async function viaMcp(who: string, opId: string, input: Record<string, unknown>, controls: Controls): Promise<Outcome> {
    const res = await mcp[who]!.call(`svc.${opId}`, { ...input, ...controls });
    return fromEnvelope(structured(res));
  }

  interface Case {
    name: string;
    who?: 'operator' | 'service';
    op: string;
    /** Fresh input per transport (a write needs its own resource on each side). */
    prepare?: () => Promise<{ input: Record<string, unknown>; controls?: Controls }>;
    input?: Record<string, unknown>;
    controls?: () => Controls;
    expect: { outcome: string; code?: string };
    /** Compare bodies after removing values that differ between two writes (default: exact). */
    scrubbed?: boolean;
  }

  async function restTask(extra: Record<string, unknown> = {}): Promise<Record<string, any>> {
    const res = await fetch(`${s.url}/v1/tasks`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${keys.operator}`, 'Content-Type': 'application/json', 'Idempotency-Key': randomUUID() },
      body: JSON.stringify({ title: 'fixture', clientId: s.credentials.clientId, ...extra }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { result: Record<string, any> }).result;
  }

  const key = () => ({ idempotencyKey: randomUUID() });
  const cases: Case[] = [
    { name: 'meta.get', op: 'meta.get', input: {}, expect: { outcome: 'ran' } },
    { name: 'meta.get as the service key', who: 'service', op: 'meta.get', input: {}, expect: { outcome: 'ran' } },
    { name: 'tasks.list', op: 'tasks.list', input: { pageSize: 5 }, expect: { outcome: 'ran' } },
    { name: 'tasks.list by client', who: 'service', op: 'tasks.list', prepare: async () => ({ input: { clientId: s.credentials.clientId } }), expect: { outcome: 'ran' } },
    { name: 'tasks.list outside the client scope', who: 'service', op: 'tasks.list', prepare: async () => ({ input: { clientId: s.credentials.otherClientId } }), expect: { outcome: 'error', code: 'not_found' } },
    { name: 'tasks.list invalid pageSize', op: 'tasks.list', input: { pageSize: 1000 }, expect: { outcome: 'error', code: 'validation_failed' } },
    { name: 'tasks.get', op: 'tasks.get', prepare: async () => ({ input: { task_id: s.credentials.taskId } }), expect: { outcome: 'ran' } },
    { name: 'tasks.get internal task as the service key', who: 'service', op: 'tasks.get', prepare: async () => ({ input: { task_id: s.credentials.internalTaskId } }), expect: { outcome: 'error', code: 'not_found' } },
    { name: 'tasks.get missing', op: 'tasks.get', input: { task_id: 'tsk_missing' }, expect: { outcome: 'error', code: 'not_found' } },
    { name: 'tasks.comments.list', op: 'tasks.comments.list', prepare: async () => ({ input: { task_id: s.credentials.taskId } }), expect: { outcome: 'ran' } },
    {
      name: 'tasks.create',
      op: 'tasks.create',
      prepare: async () => ({ input: { title: 'parity', clientId: s.credentials.clientId, priority: 'high' }, controls: key() }),
      expect: { outcome: 'ran' },
      scrubbed: true,
    },
    // An API key is never widened (rule 2): even the unbound operator key cannot file an internal task.
    { name: 'tasks.create internal (operator key)', op: 'tasks.create', input: { title: 'internal parity' }, controls: key, expect: { outcome: 'error', code: 'validation_failed' } },
    { name: 'tasks.get internal task as the operator key', op: 'tasks.get', prepare: async () => ({ input: { task_id: s.credentials.internalTaskId } }), expect: { outcome: 'error', code: 'not_found' } },
    { name: 'tasks.create without projectId and clientId (service key)', who: 'service', op: 'tasks.create', input: { title: 'x' }, controls: key, expect: { outcome: 'error', code: 'validation_failed' } },
    { name: 'tasks.create without an idempotency key', op: 'tasks.create', prepare: async () => ({ input: { title: 'x', clientId: s.credentials.clientId } }), expect: { outcome: 'error', code: 'idempotency_key_required' } },
    { name: 'tasks.create invalid', op: 'tasks.create', input: { title: '', priority: 'someday', extra: true }, controls: key, expect: { outcome: 'error', code: 'validation_failed' } },
    {
      name: 'tasks.create dry run',
      op: 'tasks.create',
      prepare: async () => ({ input: { title: 'planned', clientId: s.credentials.clientId }, controls: { ...key(), dryRun: true } }),
      expect: { outcome: 'planned' },
      scrubbed: true,
    },
    {
      name: 'tasks.batch_create',
      op: 'tasks.batch_create',
      prepare: async () => ({ input: { tasks: [{ title: 'b1', clientId: s.credentials.clientId }, { title: 'b2', clientId: s.credentials.clientId }] }, controls: key() }),
      expect: { outcome: 'ran' },
      scrubbed: true,
    },
    {
      name: 'tasks.update',
      op: 'tasks.update',
      prepare: async () => {
        const t = await restTask();
        return { input: { task_id: t.id, title: 'renamed', status: 'in_progress' }, controls: { ifMatch: t.etag } };
      },
      expect: { outcome: 'ran' },
      scrubbed: true,
    },
    {
      name: 'tasks.update without If-Match',
      op: 'tasks.update',
      prepare: async () => ({ input: { task_id: (await restTask()).id, title: 'renamed' } }),
      expect: { outcome: 'error', code: 'precondition_required' },
    },
    {
      name: 'tasks.update with a stale ETag',
      op: 'tasks.update',
      prepare: async () => ({ input: { task_id: (await restTask()).id, title: 'renamed' }, controls: { ifMatch: '"stale"' } }),
      expect: { outcome: 'error', code: 'precondition_failed' },
    },
    {
      name: 'tasks.update dry run',
      op: 'tasks.update',
      prepare: async () => {
        const t = await restTask();
        return { input: { task_id: t.id, title: 'planned' }, controls: { ifMatch: t.etag, dryRun: true } };
      },
      expect: { outcome: 'planned' },
      scrubbed: true,
    },
    {
      name: 'tasks.complete',
      op: 'tasks.complete',
      prepare: async () => ({ input: { task_id: (await restTask()).id } }),
      expect: { outcome: 'ran' },
      scrubbed: true,
    },
    {
      name: 'tasks.comment',
      op: 'tasks.comment',
      prepare: async () => ({ input: { task_id: (await restTask()).id, body: 'a comment' }, controls: key() }),
      expect: { outcome: 'ran' },
      scrubbed: true,
    },
    {
      name: 'projects.create (Tier 2)',
      op: 'projects.create',
      prepare: async () => ({ input: { clientId: s.credentials.clientId, name: 'Parity project' }, controls: key() }),
      expect: { outcome: 'proposed' },
      scrubbed: true,
    },
    { name: 'projects.create invalid', op: 'projects.create', input: { name: '' }, controls: key, expect: { outcome: 'error', code: 'validation_failed' } },
    { name: 'approvals.list', op: 'approvals.list', input: {}, expect: { outcome: 'ran' } },
    {
      name: 'approvals.get',
      op: 'approvals.get',
      prepare: async () => {
        const res = await fetch(`${s.url}/v1/projects`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${keys.operator}`, 'Content-Type': 'application/json', 'Idempotency-Key': randomUUID() },
          body: JSON.stringify({ clientId: s.credentials.clientId, name: 'To approve' }),
        });
        expect(res.status).toBe(202);
        const { approval } = (await res.json()) as { approval: { id: string } };
        return { input: { approval_id: approval.id } };
      },
      expect: { outcome: 'ran' },
      // One approval read twice: identical.
    },
    { name: 'approvals.get missing', op: 'approvals.get', input: { approval_id: 'apr_missing' }, expect: { outcome: 'error', code: 'not_found' } },
  ];

  for (const c of cases) {
    it(`${c.name}: same outcome, problem and database effect`, async () => {
      const who = c.who ?? 'operator';
      // approvals.get reads one approval both ways; every other case prepares per transport.
      const shared = c.op === 'approvals.get' && c.prepare ? await c.prepare() : null;
      const prep = async () => shared ?? (c.prepare ? await c.prepare() : { input: c.input ?? {}, controls: c.controls?.() ?? {} });

      const restPrep = await prep();
      const r0 = await counts();
      const rest = await viaRest(who, c.op, restPrep.input, restPrep.controls ?? {});
      const r1 = await counts();

      const mcpPrep = await prep();
      const m0 = await counts();
      const viaM = await viaMcp(who, c.op, mcpPrep.input, mcpPrep.controls ?? {});
      const m1 = await counts();

      expect(rest.outcome, JSON.stringify(rest)).toBe(c.expect.outcome);
      if (c.expect.code) expect(rest.code).toBe(c.expect.code);
      expect(viaM.outcome).toBe(rest.outcome);
      expect(viaM.code).toBe(rest.code);
      expect(viaM.pointers).toEqual(rest.pointers);
      if (c.scrubbed) expect(scrub(viaM.body)).toEqual(scrub(rest.body));
      else expect(viaM.body).toEqual(rest.body);
      expect(delta(m0, m1)).toEqual(delta(r0, r1));
    });
  }

  it('an idempotency key used over REST replays over MCP (one store), and the reverse', async () => {
    const k = randomUUID();
    const input = { title: 'shared key', clientId: s.credentials.clientId };
    const before = await counts();
    const rest = await viaRest('operator', 'tasks.create', input, { idempotencyKey: k });
    const viaM = await viaMcp('operator', 'tasks.create', input, { idempotencyKey: k });
    expect(rest.outcome).toBe('ran');
    expect(viaM).toEqual(rest);
    expect((await counts()).tasks).toBe(before.tasks + 1);
  });
});
