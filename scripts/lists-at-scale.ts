// Lists at scale on PostgreSQL: seeds a fresh database with the demo workspace plus N tasks
// (default 1,000,000) and proportionate rows (1,000 clients, N/100 projects; 1% internal tasks),
// then calls every list route without path parameters through the real server (in process), as
// the unbound operator key (every client) and as the demo service key (one client), first page
// and the next page by cursor, and runs EXPLAIN (ANALYZE, BUFFERS) on each SQL SELECT the call
// issued. Prints one line per query: operation, caller, page, execution ms, shared buffers hit/read,
// and the plan's scan nodes (a Seq Scan or a Sort over many rows is what an index should remove).
// With --load, it then serves that database from `svc serve` in its own process and drives
// GET /v1/tasks?pageSize=50 with autocannon at an open rate of 1,000 requests a second (8
// connections, 10 s) as each caller: the achieved rate, p50 and p99 (target: p99 < 10 ms).
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node --import tsx scripts/lists-at-scale.ts [--tasks 1000000] [--keep] [--load]
// The database is svc_test_<random> on that server, dropped at the end unless --keep.
import postgres from 'postgres';
import { PgDialect } from 'drizzle-orm/pg-core';
import { freshPostgresDatabase } from '../test/support/db.ts';

const url = process.env.DATABASE_URL;
if (!url) {
  console.error('lists-at-scale needs DATABASE_URL (PostgreSQL)');
  process.exit(2);
}
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const N = Number(arg('--tasks') ?? 1_000_000);
const keep = process.argv.includes('--keep');

// Every SQL statement drizzle builds, while `recording` is on.
let recording: { sql: string; params: unknown[] }[] | null = null;
const toQuery = PgDialect.prototype.sqlToQuery;
PgDialect.prototype.sqlToQuery = function (this: PgDialect, ...args: Parameters<typeof toQuery>) {
  const q = toQuery.apply(this, args);
  recording?.push({ sql: q.sql, params: q.params });
  return q;
};

const { openDatabase } = await import('../runtime/db/client.ts');
const { loadConfig } = await import('../runtime/config.ts');
const { startServer } = await import('../runtime/server.ts');
const { svcRegistry } = await import('../bin/wiring.ts');

const fresh = await freshPostgresDatabase(url);
console.log(`database ${new URL(fresh.url).pathname.slice(1)} (${keep ? 'kept' : 'dropped at the end'})`);
const raw = postgres(fresh.url, { max: 1, onnotice: () => {} });
try {
  const database = await openDatabase({ databaseUrl: fresh.url, dataDir: '' });
  const config = loadConfig({ ...process.env, DATABASE_URL: fresh.url, PORT: '0', SVC_RATE_LIMIT_PER_MINUTE: '1000000', SVC_WORKERS: 'false' }, {});
  const registry = svcRegistry();
  const server = await startServer({ config, registry, database, seedDemo: true, hostname: '127.0.0.1', webhookWorker: false });
  const creds = server.credentials!;

  let t = performance.now();
  const clients = 1000; // not a contract limit
  await raw.unsafe(`
    insert into clients (id, name, status, created_at, updated_at)
    select 'cli_scale_' || g, 'Scale client ' || lpad(g::text, 4, '0'), 'active', now() - (g || ' minutes')::interval, now()
    from generate_series(1, ${clients}) g`);
  // Client 0 of every 1,001 is the demo client (the service key's), so it gets its share.
  const clientOf = (g: string) => `case when ${g} % ${clients + 1} = 0 then '${creds.clientId}' else 'cli_scale_' || (${g} % ${clients + 1}) end`;
  await raw.unsafe(`
    insert into projects (id, client_id, name, stage, status, created_at, updated_at)
    select 'prj_scale_' || g, ${clientOf('g')}, 'Scale project ' || g, 'delivery', 'active',
      now() - (g || ' seconds')::interval, now()
    from generate_series(1, ${Math.max(1, Math.floor(N / 100))}) g`);
  await raw.unsafe(`
    insert into tasks (id, client_id, project_id, title, status, priority, created_by, created_at, updated_at)
    select 'tsk_scale_' || g,
      case when g % 100 = 0 then null else ${clientOf('g')} end,
      case when g % 100 = 0 then null else 'prj_scale_' || (1 + g % ${Math.max(1, Math.floor(N / 100))}) end,
      'Scale task ' || g, (array['todo','in_progress','done'])[1 + g % 3], (array['low','normal','high'])[1 + g % 3],
      '${creds.operatorSub ?? 'usr_demo_operator'}', now() - (g || ' seconds')::interval, now()
    from generate_series(1, ${N}) g`);
  await raw.unsafe('analyze');
  console.log(`seeded ${N} tasks, ${Math.floor(N / 100)} projects, ${clients} clients in ${((performance.now() - t) / 1000).toFixed(1)} s`);

  const lists = registry.routes.filter((r) => r.method === 'GET' && /\.list$/.test(r.id) && !r.path.includes('{'));
  const callers = [
    ['operator', creds.operatorKey],
    ['service', creds.serviceKey],
  ] as const;
  console.log(`\n${'operation'.padEnd(28)} ${'caller'.padEnd(8)} page   exec ms  hit/read  plan`);
  for (const route of lists) {
    for (const [who, key] of callers) {
      let cursor: string | null = null;
      for (const pageNo of [1, 2]) {
        recording = [];
        const query = new URLSearchParams({ pageSize: '50', ...(cursor ? { cursor } : {}) });
        const res = await fetch(`${server.url}${route.path}?${query}`, { headers: { authorization: `Bearer ${key}` } });
        const body = (await res.json()) as { nextCursor?: string | null };
        const issued = recording.filter((q) => /^select/i.test(q.sql) && !/from "settings"/.test(q.sql));
        recording = null;
        if (res.status !== 200) {
          console.log(`${route.id.padEnd(28)} ${who.padEnd(8)} ${String(pageNo).padStart(4)}  HTTP ${res.status}`);
          break;
        }
        for (const q of issued) {
          const [row] = await raw.unsafe(`explain (analyze, buffers, format json) ${q.sql}`, q.params as never[]);
          const plan = (row as unknown as { 'QUERY PLAN': { Plan: PlanNode; 'Execution Time': number }[] })['QUERY PLAN'][0]!;
          const nodes: string[] = [];
          walk(plan.Plan, nodes);
          console.log(
            `${route.id.padEnd(28)} ${who.padEnd(8)} ${String(pageNo).padStart(4)}  ${plan['Execution Time'].toFixed(2).padStart(8)}  ${`${plan.Plan['Shared Hit Blocks'] ?? 0}/${plan.Plan['Shared Read Blocks'] ?? 0}`.padStart(8)}  ${nodes.join(' > ')}`,
          );
        }
        cursor = body.nextCursor ?? null;
        if (!cursor) break;
      }
    }
  }
  await server.close();
  await database.close();
  if (process.argv.includes('--load')) await underLoad(fresh.url, callers);
} finally {
  await raw.end({ timeout: 5 });
  if (!keep) await fresh.drop();
}
process.exit(0);

/** The tasks list at 1,000 requests a second from its own `svc serve` process, per caller. */
async function underLoad(databaseUrl: string, callers: readonly (readonly [string, string])[]): Promise<void> {
  const { cannon, serveExisting } = await import('./bench-procs.ts');
  const served = await serveExisting(databaseUrl, callers[0]![1]);
  try {
    console.log(`\nGET /v1/tasks?pageSize=50 at 1,000 req/s (autocannon, 8 connections, 10 s; svc serve in its own process)`);
    for (const [who, key] of callers) {
      const url = `${served.url}/v1/tasks?pageSize=50`;
      const headers = { authorization: `Bearer ${key}` };
      await cannon({ url, connections: 8, seconds: 3, headers, overallRate: 1000 }); // warm-up
      const r = await cannon({ url, connections: 8, seconds: 10, headers, overallRate: 1000 });
      console.log(`${who.padEnd(8)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50Ms.toFixed(1)} ms  p99 ${r.p99Ms.toFixed(1)} ms (target < 10 ms)${r.non2xx || r.errors ? `  ${r.non2xx} non-2xx, ${r.errors} errors` : ''}`);
    }
  } finally {
    await served.stop();
  }
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

function walk(node: PlanNode, out: string[]): void {
  const type = node['Node Type'];
  if (/Scan|Sort/.test(type)) {
    const on = node['Index Name'] ?? node['Relation Name'];
    out.push(`${type}${on ? ` ${on}` : ''} (${node['Actual Rows'] ?? '?'} rows)`);
  }
  for (const child of node.Plans ?? []) walk(child, out);
}
