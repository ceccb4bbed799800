// One real server with the demo seed and a test identity provider, and every kind of caller the
// visibility rules know, each reachable over REST (openapi-fetch) and MCP (the SDK Client):
//   opAll       person, operator over every client (OAuth), holds pii:read
//   opScoped    person, operator scoped to Acme (OAuth), holds pii:read
//   clientAdmin person, client admin of Acme (OAuth), no pii:read
//   boundKey    API key bound to Acme (service account), every scope
//   unboundKey  API key of the owner, not bound (operator kind, never widened), every scope
// plus callers without pii:read (opAllNoPii, boundKeyNoPii, unboundKeyNoPii), and opAll2, a
// second credential (API key, every scope) of the same owner as unboundKey.
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { operationsById, service } from '../../generated/registry.ts';
import { oauthGrants } from '../../runtime/data/schema.ts';
import type { SeedCredentials } from '../../demo/seed.ts';
import { addGrant, addKey, addUser } from '../auth/fixtures.ts';
import { api, type Api } from '../e2e/helpers.ts';
import { connectMcp, structured, type McpSession } from '../mcp/support.ts';
import { startIdp, type TestIdp } from './idp.ts';
import { startTestServer, type TestServer, type TestServerOptions } from './server.ts';

export const CALLERS = ['opAll', 'opScoped', 'clientAdmin', 'boundKey', 'unboundKey'] as const;
export type CallerName = (typeof CALLERS)[number] | 'opAllNoPii' | 'boundKeyNoPii' | 'unboundKeyNoPii' | 'opAll2';

export interface Answer {
  status: number;
  body: any;
}

export interface World {
  s: TestServer;
  idp: TestIdp;
  c: SeedCredentials;
  credentials: Record<CallerName, string>;
  api(caller: CallerName): Api;
  /** Calls an operation over REST (openapi-fetch), returning the status and parsed body. */
  rest(caller: CallerName, operationId: string, input?: Record<string, unknown>, headers?: Record<string, string>): Promise<Answer>;
  /** Calls the operation's MCP tool; the REST status it stands for (the problem's status on an error), and the same body REST gives. */
  mcp(caller: CallerName, operationId: string, input?: Record<string, unknown>): Promise<Answer>;
  /** Approves a pending proposal as another person (the admin operator over every client). */
  approve(approvalId: string, as?: string): Promise<Answer>;
  close(): Promise<void>;
}

const SIGN_IN = 'openid email profile';

export async function startServerWithIdp(options: TestServerOptions = {}): Promise<World> {
  const idp = await startIdp();
  const s = await startTestServer({ oauthIssuer: idp.issuer, oauthJwksUrl: idp.jwksUrl, app: { rateLimit: { limit: 100_000 } }, ...options });
  const c = s.credentials as unknown as SeedCredentials;
  const token = (sub: string) => idp.issueToken({ sub, aud: `${s.config.baseUrl}/mcp`, scope: SIGN_IN, client_id: c.oauthClientId });
  const noPii = service.scopes.filter((x) => x !== 'pii:read');

  // An all-clients operator whose grant lacks pii:read.
  const plain = await addUser(s.database, { kind: 'operator', role: 'operator', allClients: true });
  await addGrant(s.database, { userId: plain.id, oauthClientId: c.oauthClientId, scopes: noPii });

  const credentials: Record<CallerName, string> = {
    opAll: await token(c.operatorSub),
    opScoped: await token(c.scopedOperatorSub),
    clientAdmin: await token(c.clientAdminSub),
    boundKey: c.serviceKey,
    unboundKey: c.operatorKey,
    opAllNoPii: await token(plain.sub),
    boundKeyNoPii: (await addKey(s.database, { ownerUserId: c.operatorUserId, scopes: noPii, clientIds: [c.clientId], mode: 'test' })).secret,
    unboundKeyNoPii: (await addKey(s.database, { ownerUserId: c.operatorUserId, scopes: noPii, mode: 'test' })).secret,
    opAll2: (await addKey(s.database, { ownerUserId: c.operatorUserId, mode: 'test' })).secret,
  };
  // Sanity: the seeded grants give the demo people every scope.
  const [grant] = await s.database.db
    .select()
    .from(oauthGrants)
    .where(and(eq(oauthGrants.userId, c.operatorUserId), eq(oauthGrants.oauthClientId, c.oauthClientId)));
  if (!grant?.scopes.includes('pii:read')) throw new Error('world: the seeded owner grant lacks pii:read');

  const apis = new Map<CallerName, Api>();
  const apiOf = (caller: CallerName) => {
    if (!apis.has(caller)) apis.set(caller, api(s.url, credentials[caller]));
    return apis.get(caller)!;
  };
  const sessions = new Map<CallerName, Promise<McpSession>>();
  const sessionOf = (caller: CallerName) => {
    if (!sessions.has(caller)) sessions.set(caller, connectMcp(s.url, credentials[caller]));
    return sessions.get(caller)!;
  };

  async function rest(caller: CallerName, operationId: string, input: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<Answer> {
    const op = operationsById[operationId];
    if (!op) throw new Error(`no operation ${operationId}`);
    const path: Record<string, unknown> = {};
    const query: Record<string, unknown> = {};
    let body: Record<string, unknown> | undefined;
    for (const [k, v] of Object.entries(input)) {
      const at = op.params[k] ?? 'body';
      if (at === 'path') path[k] = v;
      else if (at === 'query') query[k] = v;
      else (body ??= {})[k] = v;
    }
    const h: Record<string, string> = { ...headers };
    if (op.kind === 'command' && op.idempotency !== 'none' && !('idempotency-key' in h)) h['idempotency-key'] = randomUUID();
    const client = apiOf(caller) as unknown as Record<string, (p: string, init: unknown) => Promise<{ data?: unknown; error?: unknown; response: Response }>>;
    const init = { params: { path, query }, headers: h, ...(op.method === 'GET' ? {} : { body: body ?? {} }) };
    const res = await client[op.method]!(op.path, init);
    return { status: res.response.status, body: res.data ?? res.error };
  }

  async function mcp(caller: CallerName, operationId: string, input: Record<string, unknown> = {}): Promise<Answer> {
    const op = operationsById[operationId];
    if (!op?.mcp) throw new Error(`${operationId} is not a tool`);
    const session = await sessionOf(caller);
    const args = { ...input };
    if (op.kind === 'command' && op.idempotency !== 'none' && !('idempotencyKey' in args)) args.idempotencyKey = randomUUID();
    const res = await session.call(op.mcp.name, args);
    const out = structured(res);
    if (res.isError) return { status: out.error.status, body: out.error };
    // A read answers its resource, as over REST; a command its envelope (outcome, result | approval).
    return { status: op.kind === 'read' ? 200 : out.outcome === 'proposed' ? 202 : op.successStatus, body: op.kind === 'read' ? out.result : out };
  }

  return {
    s,
    idp,
    c,
    credentials,
    api: apiOf,
    rest,
    mcp,
    async approve(approvalId, as) {
      const who = as ?? (await token(c.adminSub));
      const res = await fetch(`${s.url}/v1/approvals/${approvalId}:approve`, { method: 'POST', headers: { authorization: `Bearer ${who}` } });
      return { status: res.status, body: await res.json() };
    },
    async close() {
      await Promise.all([...sessions.values()].map(async (p) => (await p.catch(() => null))?.close().catch(() => undefined)));
      await s.close();
      await idp.close();
    },
  };
}
