// Database statements per write, counted on PGlite (round trips on PostgreSQL: scripts/count-round-trips.ts): starts the server in process on a
// fresh PGlite directory with the demo workspace, then counts every statement, BEGIN and COMMIT
// included, while it sends N sequential POST /v1/tasks, each with a fresh Idempotency-Key, and
// then N retries of those keys (replays). The bench prints the figure (docs/writes.md).
//   node --import tsx scripts/count-writes.ts [N] [--json]
import { PGlite } from '@electric-sql/pglite';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATIONS_FOLDER } from '../bin/paths.ts';

const counts = new Map<string, number>();
let counting = false;
const note = (text: unknown) => {
  if (!counting) return;
  const key = String(text).replace(/\s+/g, ' ').trim().slice(0, 90);
  counts.set(key, (counts.get(key) ?? 0) + 1);
};
type Fn = (...args: unknown[]) => unknown;
const proto = PGlite.prototype as unknown as Record<string, Fn>;
for (const name of ['query', 'exec'] as const) {
  const original = proto[name]!;
  proto[name] = function (this: unknown, ...args: unknown[]) {
    note(args[0]);
    return original.apply(this, args);
  };
}
const transaction = proto.transaction!;
proto.transaction = function (this: unknown, fn: unknown) {
  note('BEGIN');
  return (transaction.call(this, async (tx: Record<string, Fn>) => {
    for (const name of ['query', 'exec'] as const) {
      const original = tx[name]!.bind(tx);
      tx[name] = (...args: unknown[]) => {
        note(args[0]);
        return original(...args);
      };
    }
    return (fn as (t: unknown) => unknown)(tx);
  }) as Promise<unknown>).finally(() => note('COMMIT / ROLLBACK'));
};

const { openDatabase } = await import('../runtime/data/client.ts');
const { loadConfig } = await import('../runtime/config.ts');
const { startServer } = await import('../runtime/server.ts');
const { svcRegistry } = await import('../bin/wiring.ts');
const dir = mkdtempSync(join(tmpdir(), 'svc-writes-'));
const config = loadConfig({ ...process.env, DATABASE_URL: '', SVC_DATA_DIR: dir, PORT: '0', SVC_RATE_LIMIT_PER_MINUTE: '1000000', SVC_WORKERS: 'false' }, {});
const database = await openDatabase({ databaseUrl: null, dataDir: dir, migrationsFolder: MIGRATIONS_FOLDER });
const running = await startServer({ config, registry: svcRegistry(), database, seedDemo: (await import('../demo/workspace.ts')).seedDemoWorkspace, hostname: '127.0.0.1', webhookWorker: false });
const headers = { authorization: `Bearer ${running.credentials!.operatorKey}`, 'content-type': 'application/json' };
const clientId = running.credentials!.clientId;
const n = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 50);
const json = process.argv.includes('--json');
const post = async (key: string, i: number) => {
  const res = await fetch(`${running.url}/v1/tasks`, { method: 'POST', headers: { ...headers, 'idempotency-key': key }, body: JSON.stringify({ title: `count ${i}`, clientId }) });
  await res.arrayBuffer();
  if (res.status !== 201) throw new Error(`POST /v1/tasks: ${res.status}`);
};
const result: Record<string, number> = {};
const keys = Array.from({ length: n }, () => randomUUID());
for (let i = 0; i < 3; i++) await post(randomUUID(), i); // warm the key cache
await running.svc.flushAudit();
for (const [label, key] of [['write', (i: number) => keys[i]!], ['replay', (i: number) => keys[i]!]] as const) {
  counts.clear();
  counting = true;
  for (let i = 0; i < n; i++) await post(key(i), i);
  await running.svc.flushAudit();
  counting = false;
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  result[label] = total / n;
  if (!json) {
    console.log(`POST /v1/tasks (${label}): ${total} statements for ${n} requests (${(total / n).toFixed(2)} a request, BEGIN and COMMIT counted)`);
    for (const [text, count] of [...counts].sort((a, b) => b[1] - a[1])) console.log(`  ${String(count).padStart(5)}  ${text}`);
  }
}
if (json) console.log(JSON.stringify(result));
await running.close();
await database.close();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
