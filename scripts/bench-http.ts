// GET /v1/meta through the full pipeline (headers, API-key authentication, rate limit, scope,
// validation, handler, audit) against a bare Hono app on @hono/node-server returning the same body:
// throughput and p99 latency, same process, same client (fetch over loopback, bounded concurrency),
// ratio printed. Target (issue 3): the full pipeline keeps at least half of bare Hono's throughput.
// Run alone with
//   node --import tsx scripts/bench-http.ts
// or call benchHttp() from scripts/bench.ts.
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { loadStats, runLoad, type LoadStats } from './bench-load.ts';

export type HttpStats = LoadStats;

export interface BenchHttpResult {
  pipeline: HttpStats;
  bare: HttpStats;
  /** pipeline.rps / bare.rps */
  ratio: number;
}

export interface BenchHttpOptions {
  /** Measured requests per side (default 6000), after warmUp per side (default 3000: the JIT needs it). */
  requests?: number;
  warmUp?: number;
  /** Requests in flight (default 16). */
  concurrency?: number;
  print?: boolean;
}

function getter(url: string, headers: Record<string, string>) {
  return async () => {
    const res = await fetch(url, { headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  };
}

export async function benchHttp(options: BenchHttpOptions = {}): Promise<BenchHttpResult> {
  const requests = options.requests ?? 6000;
  const warmUp = options.warmUp ?? 3000;
  const concurrency = options.concurrency ?? 16;
  const { startTestServer } = (await import(new URL('../test/support/server.ts', import.meta.url).href)) as typeof import('../test/support/server.ts');
  // The rate limit must let one credential make every request of the run.
  const server = await startTestServer({ app: { rateLimit: { limit: 10_000_000 } } });
  const headers = { authorization: `Bearer ${server.credentials.operatorKey}` };
  const metaUrl = `${server.url}/v1/meta`;
  const body = await (await fetch(metaUrl, { headers })).text();

  const bareApp = new Hono();
  bareApp.get('/v1/meta', (c) => c.body(body, 200, { 'Content-Type': 'application/json' }));
  const bare = await new Promise<{ url: string; close: () => void }>((resolve) => {
    const srv = serve({ fetch: bareApp.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) =>
      resolve({ url: `http://127.0.0.1:${info.port}/v1/meta`, close: () => srv.close() }),
    );
  });

  try {
    const pipelineOnce = getter(metaUrl, headers);
    const bareOnce = getter(bare.url, headers);
    await runLoad(warmUp, concurrency, pipelineOnce);
    await runLoad(warmUp, concurrency, bareOnce);
    // Alternate halves so that neither side always runs on a warmer process.
    const half = Math.ceil(requests / 2);
    const p1 = await runLoad(half, concurrency, pipelineOnce);
    const b1 = await runLoad(half, concurrency, bareOnce);
    const p2 = await runLoad(requests - half, concurrency, pipelineOnce);
    const b2 = await runLoad(requests - half, concurrency, bareOnce);
    const result = { pipeline: loadStats([p1, p2]), bare: loadStats([b1, b2]), ratio: 0 };
    result.ratio = result.pipeline.rps / result.bare.rps;
    if (options.print ?? true) {
      const row = (name: string, s: HttpStats) =>
        `${name.padEnd(30)} ${s.rps.toFixed(0).padStart(8)} req/s   p50 ${s.p50Ms.toFixed(2).padStart(7)} ms   p99 ${s.p99Ms.toFixed(2).padStart(7)} ms`;
      console.log(`GET /v1/meta, ${requests} requests per side, concurrency ${concurrency}, ${server.database.kind}`);
      console.log(row('full pipeline (svc)', result.pipeline));
      console.log(row('bare Hono, same body', result.bare));
      console.log(`ratio pipeline/bare: ${result.ratio.toFixed(2)} (target >= 0.50: ${result.ratio >= 0.5 ? 'met' : 'NOT met'})`);
    }
    return result;
  } finally {
    bare.close();
    await server.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  benchHttp().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
