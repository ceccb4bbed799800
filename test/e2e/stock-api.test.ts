// The second contract served end to end (issue 42): test/fixtures/stock-api (operators only, no
// client tenancy, no approvals, its own table and migration history) wired in-process
// (test/fixtures/stock-api/wiring.ts) and started by the runtime's startServer on a real port, on
// PGlite, or on PostgreSQL when DATABASE_URL is set. Called over REST (fetch) and over MCP (the MCP
// SDK's client), with a credential of each kind the contract's roles allow.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadConfig } from '../../runtime/config.ts';
import { openDatabase, type Database } from '../../runtime/data/client.ts';
import { startServer } from '../../runtime/server.ts';
import { createApp } from '../../runtime/app.ts';
import { readDatabaseGauges } from '../../runtime/observability/database-gauges.ts';
import { freshPostgresDatabase } from '../support/db.ts';
import { STOCK_MIGRATIONS, stockRegistry } from '../fixtures/stock-api/wiring.ts';
import { seedStock, type StockCredentials } from '../fixtures/stock-api/seed.ts';
import { apiKeys, events, users } from '../../runtime/data/schema.ts';
import { displayPrefix, generateApiKeySecret, hashSecret } from '../../runtime/auth/secrets.ts';
import { eq } from 'drizzle-orm';

let server: Awaited<ReturnType<typeof startServer>>;
let database: Database;
let dropDatabase: (() => Promise<void>) | null = null;
let keys: StockCredentials;
let base: string;
const clients: Client[] = [];
const logs: string[] = [];

beforeAll(async () => {
  const url = process.env.DATABASE_URL;
  if (url) {
    // An empty database: the stock API's own migration history runs from nothing.
    const fresh = await freshPostgresDatabase(url, { empty: true });
    dropDatabase = fresh.drop;
    database = await openDatabase({ databaseUrl: fresh.url, dataDir: '', migrationsFolder: STOCK_MIGRATIONS });
  } else {
    database = await openDatabase({ databaseUrl: null, dataDir: ':memory:', migrationsFolder: STOCK_MIGRATIONS });
  }
  const config = loadConfig({ SVC_VALIDATE_RESPONSES: 'true' }, { port: 0 });
  server = await startServer({ config, database, hostname: '127.0.0.1', registry: stockRegistry(), app: { log: (m) => logs.push(m) } });
  base = server.url;
  keys = await seedStock(database.db);
});

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await server?.close();
  await database?.close();
  await dropDatabase?.();
  // Nothing of the runtime failed on this contract: no unexpected error, no result off the contract,
  // no worker stopped (the webhook fan-out once refused this project's own migration history).
  const unexpected = logs.filter((l) => l.includes('"level":"error"') || l.includes('unexpected_error') || l.includes('does not match the contract'));
  expect(unexpected).toEqual([]);
});

function rest(method: string, path: string, key: string | null, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${base}${path}`, {
    method,
    headers: {
      ...(key ? { Authorization: `Bearer ${key}` } : {}),
      ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

const fresh = () => ({ 'Idempotency-Key': randomUUID() });

async function mcp(key: string): Promise<Client> {
  const client = new Client({ name: 'stock-api-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  clients.push(client);
  return client;
}

type Problem = { type: string; status: number; code?: string; errors?: { pointer: string; message: string }[] };

// The generated guides' examples, run as a reader would paste them (with the staff key): each built from
// this contract's own operations and input schemas, so each must be accepted as written.
describe("the stock API's generated guides, run as written", () => {
  const guide = (name: string) => readFileSync(`test/fixtures/stock-api/generated/docs/guides/${name}.md`, 'utf8');

  it('the REST guide: its page read answers 200, its write 201 with the body it shows', async () => {
    const text = guide('rest');
    const read = /curl -s "\{base_url\}(\/[^"]+)" -H/.exec(text);
    const write = /curl -s -X POST \{base_url\}(\S+) [\s\S]*?-d '([^']+)'/.exec(text);
    expect(read, 'a page read example').not.toBeNull();
    expect(write, 'a write example').not.toBeNull();
    const page = await rest('GET', read![1], keys.staff);
    expect(page.status).toBe(200);
    expect(Array.isArray(((await page.json()) as { items: unknown }).items)).toBe(true);
    const created = await rest('POST', write![1], keys.staff, JSON.parse(write![2]), fresh());
    expect(created.status, await created.clone().text()).toBe(201);
  });

  it("the MCP server's instructions and title speak of this contract, not the Platform API", async () => {
    const client = await mcp(keys.staff);
    expect(client.getServerVersion()?.title).toBe('Stock API');
    const text = client.getInstructions() ?? '';
    expect(text).toMatch(/^Tools of Stock API \(contract 0\.1\.0\)\. Commands take/);
    for (const word of ['Platform', 'meta.get', 'client scope', 'proposed']) expect(text).not.toContain(word);
  });

  it("the MCP guide: the tool call it shows succeeds", async () => {
    const call = /callTool\(\{ name: '([^']+)', arguments: (\{.*\}) \}\)/.exec(guide('mcp'));
    expect(call, 'a tool call example').not.toBeNull();
    const client = await mcp(keys.staff);
    const result = await client.callTool({ name: call![1], arguments: JSON.parse(call![2]) as Record<string, unknown> });
    expect(result.isError ?? false).toBe(false);
  });
});

describe('the stock API over REST', () => {
  it('creates an item, reads it back and lists it', async () => {
    const created = await rest('POST', '/v1/items', keys.staff, { sku: 'BOLT-M6', name: 'Bolt M6', quantity: 10 }, fresh());
    expect(created.status).toBe(201);
    const envelope = (await created.json()) as { outcome: string; result: { id: string; sku: string; quantity: number } };
    expect(envelope.outcome).toBe('ran');
    expect(envelope.result).toMatchObject({ sku: 'BOLT-M6', quantity: 10 });
    expect(envelope.result.id).toMatch(/^itm_/);

    const got = await rest('GET', `/v1/items/${envelope.result.id}`, keys.staff);
    expect(got.status).toBe(200);
    expect(await got.json()).toMatchObject({ id: envelope.result.id, name: 'Bolt M6' });

    const list = await rest('GET', '/v1/items?pageSize=5', keys.readOnly);
    expect(list.status).toBe(200);
    const page = (await list.json()) as { items: { id: string }[]; nextCursor: string | null };
    expect(page.items.map((i) => i.id)).toContain(envelope.result.id);
  });

  it('adjusts a quantity, and refuses one that would go below zero with its own problem', async () => {
    const created = (await (await rest('POST', '/v1/items', keys.staff, { sku: 'NUT-M6', name: 'Nut M6', quantity: 3 }, fresh())).json()) as { result: { id: string } };
    const id = created.result.id;
    const adjusted = await rest('POST', `/v1/items/${id}:adjust`, keys.staff, { delta: -2 }, fresh());
    expect(adjusted.status).toBe(200);
    expect(((await adjusted.json()) as { result: { quantity: number } }).result.quantity).toBe(1);

    const tooMuch = await rest('POST', `/v1/items/${id}:adjust`, keys.staff, { delta: -5 }, fresh());
    expect(tooMuch.status).toBe(409);
    expect(tooMuch.headers.get('content-type')).toContain('application/problem+json');
    expect(((await tooMuch.json()) as Problem).code ?? '').toBe('invalid_transition');
  });

  it("replays a retried command and plans a dry run, as the runtime does for every contract", async () => {
    const key = fresh();
    const first = (await (await rest('POST', '/v1/items', keys.staff, { sku: 'RETRY-1', name: 'Retried' }, key)).json()) as { result: { id: string } };
    const again = await rest('POST', '/v1/items', keys.staff, { sku: 'RETRY-1', name: 'Retried' }, key);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(((await again.json()) as { result: { id: string } }).result.id).toBe(first.result.id);

    const planned = await rest('POST', '/v1/items', keys.staff, { sku: 'DRY-1', name: 'Planned' }, { ...fresh(), Prefer: 'dry-run' });
    expect(planned.status).toBe(200);
    expect(((await planned.json()) as { outcome: string }).outcome).toBe('planned');
    const list = (await (await rest('GET', '/v1/items?pageSize=100', keys.staff)).json()) as { items: { sku: string }[] };
    expect(list.items.map((i) => i.sku)).not.toContain('DRY-1');
  });

  it('answers a contract-declared problem (sku_taken) for a duplicate SKU', async () => {
    await rest('POST', '/v1/items', keys.staff, { sku: 'WASHER-8', name: 'Washer' }, fresh());
    const again = await rest('POST', '/v1/items', keys.staff, { sku: 'WASHER-8', name: 'Washer again' }, fresh());
    expect(again.status).toBe(409);
    expect(((await again.json()) as Problem).code).toBe('sku_taken');
  });

  it('answers bad input with an RFC 9457 problem naming the failing field, never a 500', async () => {
    const bad = await rest('POST', '/v1/items', keys.staff, { sku: 'lower case', name: '' }, fresh());
    expect(bad.status).toBe(422);
    expect(bad.headers.get('content-type')).toContain('application/problem+json');
    const problem = (await bad.json()) as Problem;
    expect(problem.status).toBe(422);
    expect(problem.type).toEqual(expect.any(String));
    expect(problem.errors!.map((e) => e.pointer).sort()).toEqual(['/name', '/sku']);

    const badId = await rest('GET', '/v1/items/not-an-item', keys.staff);
    expect(badId.status).toBe(422);
    expect(((await badId.json()) as Problem).errors!.map((e) => e.pointer)).toEqual(['/item_id']);

    const missing = await rest('GET', '/v1/items/itm_nothing', keys.staff);
    expect(missing.status).toBe(404);

    const malformed = await fetch(`${base}/v1/items`, { method: 'POST', headers: { Authorization: `Bearer ${keys.staff}`, 'Content-Type': 'application/json', ...fresh() }, body: '{"sku":' });
    expect(malformed.status).toBe(400);
  });

  it('refuses a credential its scopes or role do not allow, and no credential at all', async () => {
    // The clerk's key asks for stock:write, but the clerk role allows stock:read only.
    const clerkWrite = await rest('POST', '/v1/items', keys.clerk, { sku: 'CLERK-1', name: 'No' }, fresh());
    expect(clerkWrite.status).toBe(403);
    expect(((await clerkWrite.json()) as Problem).code).toBe('insufficient_scope');
    const clerkRead = await rest('GET', '/v1/items', keys.clerk);
    expect(clerkRead.status).toBe(200);

    const readOnlyWrite = await rest('POST', '/v1/items', keys.readOnly, { sku: 'RO-1', name: 'No' }, fresh());
    expect(readOnlyWrite.status).toBe(403);

    expect((await rest('GET', '/v1/items', null)).status).toBe(401);
    expect((await rest('GET', '/v1/items', 'svc_sk_test_unknownkeyunknownkey')).status).toBe(401);
  });

  it('records the item.adjusted event of an adjustment in the outbox, with no client', async () => {
    const created = (await (await rest('POST', '/v1/items', keys.staff, { sku: 'EVENT-1', name: 'Evented', quantity: 1 }, fresh())).json()) as { result: { id: string } };
    expect((await rest('POST', `/v1/items/${created.result.id}:adjust`, keys.staff, { delta: 4 }, fresh())).status).toBe(200);
    const rows = await database.db.select().from(events).where(eq(events.subjectId, created.result.id));
    expect(rows.map((r) => [r.type, r.clientId])).toEqual([['item.adjusted', null]]);
    expect(rows[0]!.data).toMatchObject({ id: created.result.id, quantity: 5, delta: 4 });
  });

  it('has no client tenancy: a key bound to clients, or an owner without every client, is still an operator that reaches everything', async () => {
    // Copied from a database where tenancy was on: the binding and the narrow owner mean nothing here.
    const [owner] = await database.db.select().from(users).where(eq(users.role, 'owner')).limit(1);
    await database.db.update(users).set({ allClients: false }).where(eq(users.id, owner!.id));
    const secret = generateApiKeySecret('test');
    await database.db.insert(apiKeys).values({
      id: `key_bound_${Date.now()}`,
      ownerUserId: owner!.id,
      name: 'bound',
      mode: 'test',
      prefix: displayPrefix(secret),
      secretHash: hashSecret(secret),
      scopes: ['stock:read'],
      clientIds: ['cli_somewhere'],
      ipAllowlist: [],
      expiresAt: new Date(Date.now() + 86_400_000),
    });
    // Every operation's audience is [operator]: a service account would be answered 404.
    const list = await rest('GET', '/v1/items', secret);
    expect(list.status).toBe(200);
    expect(((await list.json()) as { items: unknown[] }).items.length).toBeGreaterThan(0);
  });

  it("serves this contract's own documents, not the Platform API's", async () => {
    const openapi = (await (await rest('GET', '/v1/openapi.json', keys.staff)).json()) as { info: { title: string }; paths: Record<string, unknown> };
    expect(openapi.info.title).toBe('Stock API');
    expect(Object.keys(openapi.paths).sort()).toEqual(['/v1/items', '/v1/items/{item_id}', '/v1/items/{item_id}:adjust']);
    const guide = await (await rest('GET', '/v1/agent-guide.md', keys.staff)).text();
    expect(guide).toContain('Stock API');
    expect(guide).not.toContain('tasks.create');
    // Its guide speaks of what it has: no meta.get to call first, no approvals, no client administrators.
    expect(guide).not.toContain('/v1/meta');
    expect(guide).not.toContain('proposed');
    expect(guide).not.toContain('client administrators');
  });
});

describe("the stock API's portal", () => {
  it("speaks of this contract only: its description, no client admins, no operation it lacks", async () => {
    const home = await (await fetch(`${base}/`)).text();
    expect(home).toContain('Stock API');
    expect(home).toContain('Items in a stock room and their quantities.');
    expect(home).not.toContain('client-services platform');
    expect(home).not.toContain('/client-admins');
    expect((await fetch(`${base}/client-admins`)).status).toBe(404);
    const operators = await (await fetch(`${base}/operators`)).text();
    expect(operators).not.toContain('keys.create');
    expect(operators).not.toContain('/v1/meta');
    expect(operators).not.toContain('Tier 2 and 3');
    const security = await (await fetch(`${base}/security`)).text();
    expect(security).not.toContain('Tier 2 and 3');
    expect(security).not.toContain('Webhooks are signed');
    expect(security).toContain('API keys are hashed at rest');
    // No OAuth or webhooks guide is generated for it, so none is linked or served.
    expect(operators).toContain('/docs/rest');
    expect(operators).not.toContain('/docs/webhooks');
    expect(operators).not.toContain('If-Match'); // no operation of it requires one
    expect((await fetch(`${base}/docs/rest`, { redirect: 'manual' })).status).not.toBe(404);
    for (const slug of ['oauth', 'webhooks']) expect((await fetch(`${base}/docs/${slug}`, { redirect: 'manual' })).status, slug).toBe(404);
  });
});

describe('the stock API over MCP (the MCP SDK client)', () => {
  it('lists the tools the credential may call', async () => {
    const staff = await mcp(keys.staff);
    const { tools } = await staff.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['svc.items.adjust', 'svc.items.create', 'svc.items.get', 'svc.items.list']);
    // The clerk's role allows reads only: its list holds no command.
    const clerk = await mcp(keys.clerk);
    expect((await clerk.listTools()).tools.map((t) => t.name).sort()).toEqual(['svc.items.get', 'svc.items.list']);
    // An owner's key granted stock:read only: the same two.
    const readOnly = await mcp(keys.readOnly);
    expect((await readOnly.listTools()).tools.map((t) => t.name).sort()).toEqual(['svc.items.get', 'svc.items.list']);
  });

  it('calls a command and a read', async () => {
    const staff = await mcp(keys.staff);
    const created = await staff.callTool({ name: 'svc.items.create', arguments: { sku: 'MCP-1', name: 'Made over MCP', quantity: 2, idempotencyKey: randomUUID() } });
    expect(created.isError).toBeFalsy();
    const item = (created.structuredContent as { outcome: string; result: { id: string } }).result;
    const read = await staff.callTool({ name: 'svc.items.get', arguments: { item_id: item.id } });
    expect(read.isError).toBeFalsy();
    expect((read.structuredContent as { result: unknown }).result).toMatchObject({ id: item.id, sku: 'MCP-1', quantity: 2 });
  });

  it('answers bad input with a tool error naming the field, never a protocol failure', async () => {
    const staff = await mcp(keys.staff);
    const bad = await staff.callTool({ name: 'svc.items.create', arguments: { sku: 'lower', name: 'x', idempotencyKey: randomUUID() } });
    expect(bad.isError).toBe(true);
    const error = (bad.structuredContent as { outcome: string; error: Problem }).error;
    expect(error.status).toBe(422);
    expect(error.errors!.map((e) => e.pointer)).toEqual(['/sku']);
  });

  it('refuses a tool the credential may not call', async () => {
    const clerk = await mcp(keys.clerk);
    const refused = await clerk.callTool({ name: 'svc.items.create', arguments: { sku: 'CLERK-2', name: 'No', idempotencyKey: randomUUID() } });
    expect(refused.isError).toBe(true);
  });
});

describe('without the approvals feature', () => {
  it('runs no approval machinery: no pending-approvals query or series, and a Tier 2 command in the registry stops the start', async () => {
    expect((await readDatabaseGauges(database)).approvalsPending).toEqual({});
    const registry = stockRegistry();
    const command = Object.values(registry.operationsById).find((op) => op.kind === 'command')!;
    const tiered = { ...registry, operationsById: { ...registry.operationsById, [command.id]: { ...command, tier: 2 as const } } };
    const config = loadConfig({}, { port: 0 });
    expect(() => createApp({ database, config, registry: tiered, log: () => undefined })).toThrow(/does not turn approvals on/);
  });
});
