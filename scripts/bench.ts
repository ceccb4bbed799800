// `npm run bench`: every speed target, measured as ratios within one run (never asserted in tests).
//   1. svc generate / --check on the real contract and on 10x and 100x synthetic ones (linear growth).
//   1b. The compiler as its users run it: whole svc processes, wall time and peak memory (svc --help,
//      generate --check with the cache warm and without, generate after a one-family edit, generate
//      at 820 and 8,200 operations; --quick: 82 operations only) (bench-compiler.ts).
//   2. GET /v1/meta through the full pipeline vs a bare Hono app with the same body (target >= 0.6),
//      and MCP tools/call svc.meta.get vs REST (target >= 0.5): each server in its own process, driven
//      by autocannon; start-up time and resident memory (bench-serve.ts).
//   2a. GET /v1/meta against its same-work peer (peer-reads.mjs) and bare Hono, p50/p99, on PGlite and
//      PostgreSQL, and MCP tools/call against REST (targets svc/peer >= 0.9, p99 <= 1.5x, MCP/REST >= 0.7; bench-peer.ts).
//   2b. Metrics and tracing: GET /v1/meta with both off, metrics on, tracing on (ratios), and start-up with each (bench-observability.ts).
//   3. tools/list size for the operator key, and the microseconds the MCP layer adds to a call (bench-mcp.ts).
//   4. A valid caller's p99 under a flood of random keys from another address vs quiet (target <= 2x).
//   5. search.query over 100k seeded rows: first page p50/p99 per kind of query (bench-search.ts).
//   6. With DATABASE_URL: GET /v1/tasks?pageSize=50 from 1,000,000 tasks (and the other families in
//      proportion) at an open 1,000 req/s per caller, p50/p99 (target p99 < 10 ms; lists-at-scale.ts).
//   7. With DATABASE_URL: POST /v1/tasks (fresh Idempotency-Key each) at 1, 4, 16, 64 connections vs a
//      hand-written same-work peer, direct and through PgBouncer, round trips per write on the wire,
//      two processes vs one, the write's time from svc's spans (bench-writes.ts).
// `npm run bench -- --quick` skips the 100x contract.
import { benchGenerate } from './bench-generate.ts';
import { benchCompiler, formatCompilerRows } from './bench-compiler.ts';
import { benchServe } from './bench-serve.ts';
import { benchFlood } from './bench-flood.ts';
import { benchMcp, mcpLayerCost } from './bench-mcp.ts';
import { benchSearch } from './bench-search.ts';
import { benchObservability } from './bench-observability.ts';
import { benchPeer } from './bench-peer.ts';
import { listsAtScaleBenchLines } from './lists-at-scale.ts';
import { benchWrites } from './bench-writes.ts';
import { spawnSync } from 'node:child_process';

const quick = process.argv.includes('--quick');

// The servers and the compiler are measured as `npm start` and `npx svc` run them: from the build.
// bin/svc.js quietly falls back to the tsx sources when dist/ is stale (after an edit), so rebuild it first.
const { freshBuild, freshCompiler } = (await import('../bin/build-stamp.js')) as { freshBuild: () => boolean; freshCompiler: () => boolean };
if (!freshBuild() || !freshCompiler()) {
  console.log('dist/ is older than the sources: building it first (npm run build)');
  const built = spawnSync(process.execPath, [new URL('./build.mjs', import.meta.url).pathname], { stdio: 'inherit' });
  if (built.status !== 0) console.log('the build failed: the servers below run the TypeScript sources through tsx');
}

console.log('== svc generate (in-process, median of runs after warm-up)');
const rows = await benchGenerate(quick ? [1, 10] : [1, 10, 100]);
console.log('factor  operations  generate ms  ms/op   check ms  ms/op');
for (const r of rows)
  console.log(
    `${String(r.factor).padStart(6)}  ${String(r.operations).padStart(10)}  ${r.generateMs.toFixed(0).padStart(11)}  ${r.generateMsPerOp.toFixed(2).padStart(5)}  ${r.checkMs.toFixed(0).padStart(9)}  ${r.checkMsPerOp.toFixed(2).padStart(5)}`,
  );

console.log('\n== the compiler, whole svc processes (wall ms and peak MiB, median of runs; docs/compiler-performance.md)');
try {
  for (const line of formatCompilerRows(await benchCompiler({ quick }))) console.log(line);
} catch (err) {
  console.log(`compiler bench failed: ${err instanceof Error ? err.message : String(err)}`);
}

console.log('\n== HTTP (each server in its own process, autocannon)');
await benchServe({ quick, print: true });

console.log('\n== Reads at the same-work peer: svc, peer-reads.mjs and bare Hono, each in its own process, autocannon at 16 connections');
await benchPeer({ quick, print: true });

console.log('\n== Metrics and tracing: off, SVC_METRICS_PORT, OTEL_EXPORTER_OTLP_ENDPOINT (each server in its own process, PGlite)');
await benchObservability({ quick, print: true });

// 1,000,000 tasks in --quick mode too: on the 2-core bench machine seeding them and the other families
// takes about 45 s and the whole section about 70 s. A failure prints a line; the rest of the bench goes on.
const LISTS_AT_SCALE_TASKS = 1_000_000;
if (process.env.DATABASE_URL) {
  console.log('\n== lists at scale (PostgreSQL)');
  try {
    for (const l of await listsAtScaleBenchLines(process.env.DATABASE_URL, LISTS_AT_SCALE_TASKS)) console.log(l);
  } catch (err) {
    console.log(`lists at scale failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}

if (process.env.DATABASE_URL) {
  console.log('\n== writes: POST /v1/tasks vs the same work by hand (scripts/peer-writes.mjs), each in its own process, PostgreSQL');
  try {
    await benchWrites({ databaseUrl: process.env.DATABASE_URL, quick });
  } catch (err) {
    console.log(`write bench failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}

// Start-up is the median of several spawns: one spawn (as in the HTTP section) swings by 100 ms.
console.log('\n== start-up, spawn to the first 200 of GET /v1/meta (the dist/ build, median of runs)');
const startupRuns = quick ? '5' : '9';
const startup = (databaseUrl: string) =>
  spawnSync(process.execPath, ['--import', 'tsx', new URL('./bench-startup.ts', import.meta.url).pathname, '--runs', startupRuns, '--build-only'], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
    encoding: 'utf8',
  });
const printStartup = (label: string, run: ReturnType<typeof startup>) =>
  console.log(run.status === 0 ? `${label}: ${run.stdout.trim()} (target < 500 ms)` : `${label}: start-up bench failed: ${run.stderr.trim()}`);
printStartup('PGlite', startup(''));
if (process.env.DATABASE_URL) {
  // A database of its own, so the demo workspace is never seeded into the one DATABASE_URL names.
  const { freshPostgresDatabase } = await import('../test/support/db.ts');
  const fresh = await freshPostgresDatabase(process.env.DATABASE_URL);
  try {
    printStartup('PostgreSQL', startup(fresh.url));
  } finally {
    await fresh.drop();
  }
}

console.log('\n== MCP: tools/list size, and what the MCP layer adds to a call (in process, no sockets)');
const { toolsList } = await benchMcp({ print: false, requests: 10, warmUp: 1 });
console.log(`tools/list for the operator key: ${toolsList.tools} tools, ${(toolsList.bytes / 1024).toFixed(1)} KB`);
const layer = await mcpLayerCost(quick ? 500 : 2000);
console.log(
  `meta.get sequentially through the app: REST ${layer.restUs.toFixed(0)} us, MCP tools/call ${layer.mcpUs.toFixed(0)} us; the MCP layer (one tools/call is answered directly: JSON-RPC checks and the outcome envelope) adds ${layer.layerUs.toFixed(0)} us a call`,
);

console.log('\n== Failed-authentication flood (svc serve in its own process)');
await benchFlood({ print: true });

console.log('\n== search.query over 100k rows (svc serve in its own process, PGlite)');
await benchSearch({ rows: 100_000, requests: quick ? 50 : 200, print: true });
process.exit(0);
