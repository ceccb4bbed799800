// Nothing private in the logs (issue 17 item 3): a write whose database call fails with its bound
// values in the driver's message, and one whose own error quotes the input, are logged as one JSON
// object a line with the request id, operation, class and SQLSTATE, never the values. REST and MCP.
// A marker string travels in every write of this file; no log line may hold it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { AnyHandler } from '../../runtime/pipeline/executor.ts';
import { svcRegistry } from '../../bin/wiring.ts';
import { blankQuoted, errorSummary, logLine } from '../../runtime/observability/log.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const MARKER = `password=hunter2-${randomUUID()}`;

// The title goes into a query as a bound value that PostgreSQL cannot cast: its error message
// quotes the value (invalid input syntax for type integer: "password=hunter2-…").
const castsTitle: AnyHandler = async (input: { title: string }, ctx) => {
  await ctx.db.execute(sql`select ${input.title}::int as n`);
  return {};
};
// A handler bug whose message quotes the input.
const quotesTitle: AnyHandler = async (input: { title: string; description?: string }) => {
  throw new TypeError(`cannot use "${input.title}" \u0007 here`);
};

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({
    app: { registry: { ...svcRegistry(), handlers: { ...svcRegistry().handlers, 'tasks.create': castsTitle, 'tasks.batch_create': quotesTitle } } },
  });
}, 60_000);
afterAll(async () => {
  await s?.close();
});

function post(path: string, body: unknown) {
  return fetch(`${s.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.credentials.operatorKey}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify(body),
  });
}

function parsed(): Record<string, unknown>[] {
  return s.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('log lines', () => {
  it('a database error bound to the input: 500 for the caller, code and ids in the log, never the value', async () => {
    const res = await post('/v1/tasks', { title: MARKER, clientId: s.credentials.clientId, description: MARKER });
    expect(res.status).toBe(500);
    const requestId = res.headers.get('x-request-id');
    const line = parsed().find((l) => l.requestId === requestId);
    expect(line).toMatchObject({ level: 'error', event: 'unexpected_error', operationId: 'tasks.create', transport: 'rest' });
    expect(line!.error).toMatchObject({ sqlState: '22P02' });
    expect(JSON.stringify(line)).not.toContain('hunter2');
  });

  it('an error message quoting the input is blanked; control characters stay escaped', async () => {
    const res = await post('/v1/tasks:batch', { tasks: [{ title: MARKER, clientId: s.credentials.clientId }] });
    expect(res.status).toBe(500);
    const line = parsed().find((l) => l.requestId === res.headers.get('x-request-id'));
    expect(line!.error).toMatchObject({ name: 'TypeError', message: 'cannot use "…" \u0007 here' });
    expect(s.logs.every((l) => !/[\u0000-\u001f]/.test(l))).toBe(true);
  });

  it('the same over MCP', async () => {
    const client = new Client({ name: 'log-privacy', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${s.credentials.operatorKey}` } } }),
    );
    const res = await client.callTool({
      name: 'svc.tasks.create',
      arguments: { title: MARKER, clientId: s.credentials.clientId, idempotencyKey: randomUUID() },
    });
    await client.close();
    expect(res.isError).toBe(true);
    expect(parsed().some((l) => l.transport === 'mcp' && l.operationId === 'tasks.create')).toBe(true);
  });

  it('no log line of this file holds the marker, and every line is one JSON object with time, level and event', () => {
    expect(s.logs.length).toBeGreaterThanOrEqual(3);
    for (const line of s.logs) {
      expect(line).not.toContain('hunter2');
      expect(JSON.parse(line)).toMatchObject({ time: expect.any(String), level: expect.any(String), event: expect.any(String) });
    }
  });
});

describe('runtime/observability/log.ts', () => {
  it('redacts fields named like secrets, blanks quoted text, keeps SQLSTATE and names of a wrapped database error', () => {
    const line = JSON.parse(logLine('warn', 'x', { secret: 'whsec_abc', authorization: 'Bearer k', requestId: 'req_1' }));
    expect(line).toMatchObject({ level: 'warn', event: 'x', secret: '[redacted]', authorization: '[redacted]', requestId: 'req_1' });
    expect(blankQuoted(`a "b" 'c' \`d\` e`)).toBe(`a "…" '…' \`…\` e`);
    const wrapped = Object.assign(new Error('Failed query: insert … params: hunter2'), {
      cause: Object.assign(new Error('duplicate key value violates unique constraint "tasks_pkey"'), { code: '23505', constraint: 'tasks_pkey', table: 'tasks' }),
    });
    const summary = errorSummary(wrapped);
    expect(summary).toMatchObject({ sqlState: '23505', constraint: 'tasks_pkey', table: 'tasks' });
    expect(JSON.stringify(summary)).not.toContain('hunter2');
  });
});
