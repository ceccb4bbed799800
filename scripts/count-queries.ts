// Database statements per request on the hot path: starts the server in process on a fresh PGlite
// directory with the demo workspace, warms the key cache, then counts every PGlite query while it
// sends N sequential requests to each path (default GET /v1/meta), audit flushed inside the window.
// A cached credential should cost no statement; the audit rows arrive as a few batched inserts.
//   node --import tsx scripts/count-queries.ts [/v1/meta,/v1/tasks?pageSize=50] [N]
import { PGlite } from '@electric-sql/pglite';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATIONS_FOLDER } from '../bin/paths.ts';

const counts = new Map<string, number>();
let counting = false;
const proto = PGlite.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
const original = proto.query!;
proto.query = function (this: unknown, ...args: unknown[]) {
  if (counting) {
    const key = String(args[0]).replace(/\s+/g, ' ').trim().slice(0, 100);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return original.apply(this, args);
};

const { openDatabase } = await import('../runtime/data/client.ts');
const { loadConfig } = await import('../runtime/config.ts');
const { startServer } = await import('../runtime/server.ts');
const { svcRegistry } = await import('../bin/wiring.ts');
const dir = mkdtempSync(join(tmpdir(), 'svc-queries-'));
const config = loadConfig({ ...process.env, DATABASE_URL: '', SVC_DATA_DIR: dir, PORT: '0', SVC_RATE_LIMIT_PER_MINUTE: '1000000', SVC_WORKERS: 'false' }, {});
const database = await openDatabase({ databaseUrl: null, dataDir: dir, migrationsFolder: MIGRATIONS_FOLDER });
const running = await startServer({ config, registry: svcRegistry(), database, seedDemo: (await import('../demo/workspace.ts')).seedDemoWorkspace, hostname: '127.0.0.1', webhookWorker: false });
const headers = { authorization: `Bearer ${running.credentials!.operatorKey}` };
const paths = (process.argv[2] ?? '/v1/meta').split(',');
const n = Number(process.argv[3] ?? 100);
for (const path of paths) {
  for (let i = 0; i < 5; i++) await (await fetch(running.url + path, { headers })).arrayBuffer();
  await running.svc.flushAudit();
  counts.clear();
  counting = true;
  for (let i = 0; i < n; i++) {
    const res = await fetch(running.url + path, { headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
  }
  await running.svc.flushAudit();
  counting = false;
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  console.log(`GET ${path}: ${total} statements for ${n} requests (${(total / n).toFixed(2)} a request)`);
  for (const [sql, count] of [...counts].sort((a, b) => b[1] - a[1])) console.log(`  ${String(count).padStart(5)}  ${sql}`);
}
await running.close();
await database.close();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
