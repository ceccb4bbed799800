// A self-contained /mcp server for transport tests: the real mountMcp on a real Hono app on a free
// port, with a scripted executor, authenticator and tool table. It tests the MCP layer alone; the
// end-to-end suites (e2e.test.ts) run against the real server from test/support/server.ts.
import { Hono } from 'hono';
import { serve, type ServerType } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadConfig, type Config } from '../../runtime/config.ts';
import type { McpToolDef, OperationDef, PrincipalKind } from '../../runtime/contract-types.ts';
import type { Principal } from '../../runtime/handler-types.ts';
import type { Call, CallResult } from '../../runtime/pipeline/types.ts';
import { ProblemError } from '../../runtime/problem-error.ts';
import { mountMcp } from '../../runtime/mcp/index.ts';
import { service } from '../../generated/registry.ts';

const errorSchema = {
  type: 'object',
  required: ['code', 'status', 'title', 'detail', 'retryable', 'errors'],
  additionalProperties: false,
  properties: {
    code: { type: 'string' },
    status: { type: 'integer' },
    title: { type: 'string' },
    detail: { type: 'string' },
    retryable: { type: 'boolean' },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['pointer', 'message'],
        properties: { pointer: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
};

/** The outcome envelope as the generator describes it (McpToolDef.outputSchema), strict. */
export function envelopeSchema(result: Record<string, unknown>): Record<string, unknown> {
  return {
    type: 'object',
    required: ['outcome'],
    additionalProperties: false,
    properties: {
      outcome: { type: 'string', enum: ['ran', 'planned', 'proposed', 'error'] },
      result,
      plan: { type: 'object' },
      approval: { type: 'object' },
      error: errorSchema,
    },
  };
}

const controls = {
  idempotencyKey: { type: 'string', format: 'uuid' },
  dryRun: { type: 'boolean' },
};

function op(
  id: string,
  kind: 'read' | 'command',
  scope: string | null,
  audience: PrincipalKind[],
  inputProps: Record<string, unknown>,
  annotations: Partial<McpToolDef['annotations']> = {},
): OperationDef {
  const name = `svc.${id}`;
  const properties = kind === 'command' ? { ...inputProps, ...controls } : inputProps;
  const mcp: McpToolDef = {
    name,
    title: id,
    description: `Tool ${id}`,
    inputSchema: { type: 'object', properties, additionalProperties: false },
    outputSchema: envelopeSchema({ type: 'object' }),
    annotations: {
      readOnlyHint: kind === 'read',
      destructiveHint: false,
      idempotentHint: kind === 'read',
      openWorldHint: false,
      ...annotations,
    },
  };
  return {
    id,
    family: id.split('.')[0],
    kind,
    tier: kind === 'command' ? 1 : null,
    subject: null,
    scope,
    audience,
    summary: id,
    method: kind === 'read' ? 'GET' : 'POST',
    path: `/v1/${id}`,
    params: {},
    paramTypes: {},
    successStatus: 200,
    paged: false,
    stream: null,
    idempotency: kind === 'command' ? 'required' : 'none',
    ifMatch: 'none',
    emits: [],
    problems: [],
    mcp,
    mcpReason: null,
    deprecated: null,
  };
}

export const fakeOperations: Record<string, OperationDef> = Object.fromEntries(
  [
    op('meta.get', 'read', null, ['operator', 'client_admin', 'service_account'], {}),
    op('tasks.create', 'command', 'tasks:write', ['operator', 'client_admin', 'service_account'], {
      title: { type: 'string' },
    }),
    op('tasks.get', 'read', 'tasks:read', ['operator', 'client_admin', 'service_account'], { task_id: { type: 'string' } }),
    op('keys.secret_thing', 'read', 'keys:manage', ['operator'], {}),
  ].map((o) => [o.id, o]),
);

export const fakeTools: McpToolDef[] = Object.values(fakeOperations)
  .map((o) => o.mcp!)
  .sort((a, b) => a.name.localeCompare(b.name));

export function principal(kind: PrincipalKind, scopes: string[]): Principal {
  return {
    kind,
    id: `${kind}-1`,
    loginMethod: 'api_key',
    credentialId: `key-${kind}`,
    role: kind === 'operator' ? 'owner' : 'admin',
    scopes: new Set(scopes),
    clientScope: { all: kind === 'operator', clientIds: [] },
    oauthClientId: null,
  };
}

/** Bearer tokens the fake authenticator knows. */
export const tokens: Record<string, Principal> = {
  operator: principal('operator', ['tasks:read', 'tasks:write', 'keys:manage']),
  reader: principal('service_account', ['tasks:read']),
  admin: principal('client_admin', ['tasks:read', 'tasks:write', 'keys:manage']),
};

/** Executes like a tiny pipeline: audience/scope checks, then a scripted answer. */
export type Script = (call: Call) => Promise<CallResult>;

export interface Harness {
  url: string;
  calls: Call[];
  config: Config;
  /** What mountMcp logged. */
  logs: string[];
  setScript(s: Script): void;
  client(token?: string, opts?: { fetch?: typeof fetch; mode?: 'static' | 'dynamic' }): Promise<Client>;
  close(): Promise<void>;
}

export const defaultScript: Script = async (call) => {
  if (!call.op.audience.includes(call.principal.kind)) throw new ProblemError('not_found', 'no such operation');
  if (call.op.scope && !call.principal.scopes.has(call.op.scope)) {
    throw new ProblemError('insufficient_scope', `needs ${call.op.scope}`, { extra: { requiredScope: call.op.scope } });
  }
  if (call.op.kind === 'read') return { status: 200, body: { echo: call.input }, outcome: 'read', headers: {} };
  if (!call.controls.idempotencyKey) throw new ProblemError('idempotency_key_required', 'send idempotencyKey');
  if (call.controls.dryRun) {
    return { status: 200, body: { outcome: 'planned', plan: { operationId: call.op.id } }, outcome: 'planned', headers: {} };
  }
  return { status: 201, body: { outcome: 'ran', result: { ...call.input } }, outcome: 'ran', headers: {} };
};

async function fakeAuthenticate(authorization: string | undefined, limited: boolean): Promise<Principal> {
  if (!authorization) throw new ProblemError('unauthorized', 'Send a bearer credential.');
  const token = authorization.replace(/^Bearer\s+/i, '');
  if (token === 'no-keys') throw new ProblemError('not_configured', 'No key set.');
  if (limited && token === 'limited') {
    throw new ProblemError('rate_limited', 'Slow down.', { headers: { 'Retry-After': '7' } });
  }
  const p = tokens[token];
  if (!p) throw new ProblemError('invalid_token', 'The credential was refused.');
  return p;
}

export async function startHarness(
  overrides: Partial<Config> = {},
  options: { requestAuthenticator?: boolean; spent?: number[]; dynamic?: boolean } = {},
): Promise<Harness> {
  const calls: Call[] = [];
  const logs: string[] = [];
  let script: Script = defaultScript;
  const app = new Hono();
  let port = 0;
  const config = loadConfig({}, { baseUrl: 'http://127.0.0.1:0', ...overrides });
  let seq = 0;
  app.use('*', async (c, next) => {
    c.set('requestId' as never, `req-${++seq}` as never);
    await next();
    c.header('X-Request-Id', c.get('requestId' as never) as string);
  });
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => {
      port = info.port;
      resolve(s);
    });
  });
  config.baseUrl = `http://127.0.0.1:${port}`;
  mountMcp(app, {
    executor: {
      execute: async (call) => {
        calls.push(call);
        return script(call);
      },
    },
    config,
    tools: fakeTools,
    operationsById: fakeOperations,
    maxJsonDepth: service.limits.maxJsonDepth,
    maxBodyBytes: service.limits.requestBodyMaxBytes,
    protocolVersions: service.mcpProtocolVersions,
    serverVersion: service.contractVersion,
    log: (m) => logs.push(m),
    // The contract's meta-tools over the fake tool table: the dynamic mode as the real server mounts it.
    ...(options.dynamic === false ? {} : { dynamic: { tools: service.mcpDynamicTools, searchMaxResults: service.limits.mcpSearchMaxResults } }),
    ...(options.spent ? { spendRateLimit: (_c: unknown, _p: unknown, units: number) => void options.spent!.push(units) } : {}),
    authenticateRequest: async (c) => {
      const principal = await fakeAuthenticate(c.req.header('authorization'), options.requestAuthenticator ?? false);
      c.set('principal', principal);
      return principal;
    },
  });
  const url = `${config.baseUrl}/mcp`;
  const clients: Client[] = [];
  return {
    url,
    calls,
    config,
    logs,
    setScript(s) {
      script = s;
    },
    async client(token = 'operator', opts = {}) {
      const client = new Client({ name: 'test', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(new URL(opts.mode ? `${url}?mode=${opts.mode}` : url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
        ...(opts.fetch ? { fetch: opts.fetch } : {}),
      });
      await client.connect(transport);
      clients.push(client);
      return client;
    },
    async close() {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
