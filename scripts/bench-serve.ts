// The HTTP figures of issue 16, measured the way that cannot flatter us: `svc serve` and a bare Hono
// app each in their own process, driven by autocannon (its own process pool of sockets), at two
// connection counts so the printout says whether the baseline was saturated (more connections, no
// more throughput). Ratios use each side's best throughput. Also start-up (spawn to first 200) and
// resident memory, idle and after load.
import { cannon, line, rssMb, startBare, startSvc, type CannonResult } from './bench-procs.ts';

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
  try {
    say(`svc serve (PGlite): first answer ${svc.startupMs.toFixed(0)} ms after spawn; idle RSS ${out.idleRssMb.toFixed(0)} MB`);
    // Warm both up (JIT, caches) before measuring.
    await cannon({ url: `${bare.url}/v1/meta`, connections: 16, seconds: 2 });
    await cannon({ url: `${svc.url}/v1/meta`, connections: 16, seconds: 2, headers: auth });

    const bareRuns = [
      await cannon({ url: `${bare.url}/v1/meta`, connections: 16, seconds }),
      await cannon({ url: `${bare.url}/v1/meta`, connections: 64, seconds }),
    ];
    const svcRuns = [
      await cannon({ url: `${svc.url}/v1/meta`, connections: 16, seconds, headers: auth }),
      await cannon({ url: `${svc.url}/v1/meta`, connections: 64, seconds, headers: auth }),
    ];
    out.loadedRssMb = rssMb(svc.pid);
    say(line('bare Hono GET /v1/meta, 16 conns', bareRuns[0]!));
    say(line('bare Hono GET /v1/meta, 64 conns', bareRuns[1]!));
    say(line('svc GET /v1/meta, 16 conns', svcRuns[0]!));
    say(line('svc GET /v1/meta, 64 conns', svcRuns[1]!));
    const saturated = bareRuns[1]!.rps <= bareRuns[0]!.rps * 1.1;
    out.pipelineRatio = best(svcRuns).rps / best(bareRuns).rps;
    say(
      `pipeline / bare Hono: ${out.pipelineRatio.toFixed(2)} (target >= 0.6); baseline ${saturated ? 'saturated (64 connections add < 10%)' : 'NOT saturated (64 connections still add throughput): the true ratio may be lower'}`,
    );
    say(`svc RSS after load: ${out.loadedRssMb.toFixed(0)} MB`);

    // MCP tools/call svc.meta.get against REST, same server, same connections.
    const mcpHeaders = { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
    const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc.meta.get', arguments: {} } });
    await cannon({ url: `${svc.url}/mcp`, connections: 16, seconds: 2, method: 'POST', headers: mcpHeaders, body: call });
    const mcp = await cannon({ url: `${svc.url}/mcp`, connections: 16, seconds, method: 'POST', headers: mcpHeaders, body: call });
    say(line('svc MCP tools/call svc.meta.get', mcp));
    out.mcpRatio = mcp.rps / svcRuns[0]!.rps;
    say(`MCP / REST: ${out.mcpRatio.toFixed(2)} (target >= 0.5)`);
  } finally {
    await bare.stop();
    await svc.stop();
  }

  if (process.env.DATABASE_URL) {
    const { freshPostgresDatabase } = await import('../test/support/db.ts');
    const fresh = await freshPostgresDatabase(process.env.DATABASE_URL);
    try {
      const pg = await startSvc({ databaseUrl: fresh.url });
      out.startupPostgresMs = pg.startupMs;
      say(`svc serve (PostgreSQL): first answer ${pg.startupMs.toFixed(0)} ms after spawn; idle RSS ${rssMb(pg.pid).toFixed(0)} MB`);
      await pg.stop();
    } finally {
      await fresh.drop();
    }
  }
  return out;
}
