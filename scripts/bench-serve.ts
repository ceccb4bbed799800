// The HTTP figures of issue 16, measured the way that cannot flatter us: `svc serve` and a bare Hono
// app each in their own process, driven by autocannon, at two connection counts; each run reports
// the server process's CPU use, and a baseline counts as saturated only when its process kept a core
// busy (bench-procs.ts SATURATED_CPU): on two cores the load generator can be the limit while the
// server idles. Ratios use each side's best throughput. Also start-up (spawn to first 200) and
// resident memory, idle and after load.
import { cpus } from 'node:os';
import { cannon, line, rssMb, SATURATED_CPU, serveExisting, startBare, startSvc, type CannonResult, type SvcProc } from './bench-procs.ts';

export interface ServeBenchOptions {
  quick: boolean;
  print: boolean;
}

const best = (xs: CannonResult[]) => xs.reduce((a, b) => (b.rps > a.rps ? b : a));

export async function benchServe(options: ServeBenchOptions): Promise<Record<string, number>> {
  const seconds = options.quick ? 3 : 10;
  const out: Record<string, number> = {};
  const say = (s: string) => options.print && console.log(s);

  const svc = await startSvc();
  const auth = { authorization: `Bearer ${svc.operatorKey}` };
  const body = await (await fetch(`${svc.url}/v1/meta`, { headers: auth })).text();
  const bare = await startBare(body);
  out.startupPgliteMs = svc.startupMs;
  out.idleRssMb = rssMb(svc.pid);
  let bareBest: CannonResult;
  try {
    say(`svc serve (PGlite): first answer ${svc.startupMs.toFixed(0)} ms after spawn; idle RSS ${out.idleRssMb.toFixed(0)} MB`);
    // Warm the baseline up (JIT) before measuring.
    await cannon({ url: `${bare.url}/v1/meta`, connections: 16, seconds: 2 });
    const bareRuns = [
      await cannon({ url: `${bare.url}/v1/meta`, connections: 16, seconds, serverPid: bare.pid }),
      await cannon({ url: `${bare.url}/v1/meta`, connections: 64, seconds, serverPid: bare.pid }),
    ];
    say(line('bare Hono GET /v1/meta, 16 conns', bareRuns[0]!));
    say(line('bare Hono GET /v1/meta, 64 conns', bareRuns[1]!));
    bareBest = best(bareRuns);
    out.baselineCpu = bareBest.serverCpu;
    say(saturation('baseline (bare Hono)', bareBest));
  } finally {
    await bare.stop();
  }

  try {
    const pgl = await pipelineAgainst(svc, 'PGlite', bareBest, seconds, say);
    out.loadedRssMb = pgl.loadedRssMb;
    out.pipelineRatio = pgl.ratio;

    // MCP tools/call svc.meta.get against REST, same server, same connections.
    const mcpHeaders = { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
    const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc.meta.get', arguments: {} } });
    await cannon({ url: `${svc.url}/mcp`, connections: 16, seconds: 2, method: 'POST', headers: mcpHeaders, body: call });
    const mcp = await cannon({ url: `${svc.url}/mcp`, connections: 16, seconds, method: 'POST', headers: mcpHeaders, body: call, serverPid: svc.pid });
    say(line('svc (PGlite) MCP tools/call svc.meta.get', mcp));
    out.mcpRatio = mcp.rps / pgl.rest16.rps;
    say(`MCP / REST: ${out.mcpRatio.toFixed(2)} (target >= 0.5); ${saturation('REST, the baseline of this ratio,', pgl.rest16)}`);
  } finally {
    await svc.stop();
  }

  if (process.env.DATABASE_URL) {
    const { freshPostgresDatabase } = await import('../test/support/db.ts');
    const fresh = await freshPostgresDatabase(process.env.DATABASE_URL);
    try {
      const pg = await startSvc({ databaseUrl: fresh.url });
      try {
        out.startupPostgresMs = pg.startupMs;
        say(`svc serve (PostgreSQL): first answer ${pg.startupMs.toFixed(0)} ms after spawn; idle RSS ${rssMb(pg.pid).toFixed(0)} MB`);
        const onPg = await pipelineAgainst(pg, 'PostgreSQL', bareBest, seconds, say);
        out.pipelineRatioPostgres = onPg.ratio;
        out.loadedRssPostgresMb = onPg.loadedRssMb;
        out.scaleOutRatio = await scaleOut(fresh.url, pg.operatorKey, seconds, say);
      } finally {
        await pg.stop();
      }
    } finally {
      await fresh.drop();
    }
  }
  return out;
}

/**
 * Scale-out: two `svc serve` processes on the one PostgreSQL database (sharing the rate limit
 * through Redis when it answers), each driven by its own autocannon run at the same time, against
 * one process driven alone with the same total connections. Returns two / one.
 */
async function scaleOut(databaseUrl: string, key: string, seconds: number, say: (s: string) => void): Promise<number> {
  const { redisAnswers } = await import('../test/support/redis.ts');
  const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
  const env: Record<string, string> = (await redisAnswers(redisUrl)) ? { REDIS_URL: redisUrl } : {};
  const auth = { authorization: `Bearer ${key}` };
  const procs = [await serveExisting(databaseUrl, key, env), await serveExisting(databaseUrl, key, env)];
  try {
    for (const p of procs) await cannon({ url: `${p.url}/v1/meta`, connections: 8, seconds: 2, headers: auth }); // warm-up
    const one = await cannon({ url: `${procs[0]!.url}/v1/meta`, connections: 16, seconds, headers: auth });
    const both = await Promise.all(procs.map((p) => cannon({ url: `${p.url}/v1/meta`, connections: 8, seconds, headers: auth })));
    const twoRps = both[0]!.rps + both[1]!.rps;
    const p99 = Math.max(both[0]!.p99Ms, both[1]!.p99Ms);
    say(line('one process (PostgreSQL), 16 conns', one));
    say(`two processes (PostgreSQL${env.REDIS_URL ? ', rate limit in Redis' : ', rate limit per process'}), 8 conns each: ${twoRps.toFixed(0)} req/s, p99 ${p99.toFixed(1)} ms`);
    const ratio = twoRps / one.rps;
    say(`two processes / one: ${ratio.toFixed(2)} (on ${cpus().length} cores shared with PostgreSQL and the load generator)`);
    return ratio;
  } finally {
    for (const p of procs) await p.stop();
  }
}

/** Whether a run drove its server to its limit, judged by the server process's CPU (SATURATED_CPU). */
function saturation(what: string, r: CannonResult): string {
  const cpu = `${(r.serverCpu * 100).toFixed(0)}% of a core`;
  return r.serverCpu >= SATURATED_CPU
    ? `${what} saturated (its process used ${cpu})`
    : `${what} NOT saturated (its process used ${cpu}: the load generator, on the same cores, is the limit), so the ratio against it is an upper bound`;
}

/** GET /v1/meta through the whole pipeline at 16 and 64 connections, against the baseline's best; RSS after. */
async function pipelineAgainst(
  svc: SvcProc,
  label: string,
  bareBest: CannonResult,
  seconds: number,
  say: (s: string) => void,
): Promise<{ ratio: number; loadedRssMb: number; rest16: CannonResult }> {
  const auth = { authorization: `Bearer ${svc.operatorKey}` };
  await cannon({ url: `${svc.url}/v1/meta`, connections: 16, seconds: 2, headers: auth }); // warm-up (JIT, caches)
  const runs = [
    await cannon({ url: `${svc.url}/v1/meta`, connections: 16, seconds, headers: auth, serverPid: svc.pid }),
    await cannon({ url: `${svc.url}/v1/meta`, connections: 64, seconds, headers: auth, serverPid: svc.pid }),
  ];
  const loadedRssMb = rssMb(svc.pid);
  say(line(`svc (${label}) GET /v1/meta, 16 conns`, runs[0]!));
  say(line(`svc (${label}) GET /v1/meta, 64 conns`, runs[1]!));
  const ratio = best(runs).rps / bareBest.rps;
  say(`pipeline (${label}) / bare Hono: ${ratio.toFixed(2)} (target >= 0.6); RSS after load ${loadedRssMb.toFixed(0)} MB`);
  return { ratio, loadedRssMb, rest16: runs[0]! };
}
