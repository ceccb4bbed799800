// MCP `tools/call svc.meta.get` against REST `GET /v1/meta`: throughput and p99 latency through
// the full server, same process, same HTTP client (fetch), same concurrency; the ratio is what
// matters (absolute numbers depend on the machine). Run alone with
//   node --import tsx scripts/bench-mcp.ts
// or call benchMcp() from scripts/bench.ts.
//
// The MCP requests are plain JSON-RPC POSTs as a stateless Streamable HTTP client sends them after
// initialization (no session, MCP-Protocol-Version header): each one builds a fresh Server and
// transport, which is the cost being measured.
import { pathToFileURL } from 'node:url';
import { loadStats, runLoad, type LoadStats, type Sample } from './bench-load.ts';

export type BenchStats = LoadStats;

export interface BenchMcpResult {
  /** Bytes of the tools/list answer (JSON-RPC body) for this key, and how many tools it lists. */
  toolsList: { bytes: number; tools: number };
  rest: BenchStats;
  mcp: BenchStats;
  /** mcp.rps / rest.rps */
  ratio: number;
}

export interface BenchMcpOptions {
  /** Base URL of a running server; when absent a test server is started (test/support/server.ts). */
  baseUrl?: string;
  /** Bearer credential; with baseUrl it is required, else the seeded operator key. */
  key?: string;
  /** Measured requests per side (default 2000), after warmUp (default 200). */
  requests?: number;
  warmUp?: number;
  /** Requests in flight (default 16). */
  concurrency?: number;
  /** The measured requests are split into this many alternating REST/MCP rounds (default 8), so that load from elsewhere on the machine hits both sides alike. */
  rounds?: number;
  /** Print a table (default true). */
  print?: boolean;
  /**
   * Starts the server to measure when baseUrl is absent. Default: startTestServer(serverOptions)
   * from test/support/server.ts. The server's rate limit must allow warmUp + requests per side
   * for one credential (the contract default of 600 a minute does not).
   */
  startServer?: () => Promise<{ url: string; key: string; close: () => Promise<void> }>;
  /** Passed to startTestServer by the default startServer (default: a rate limit the run cannot reach). */
  serverOptions?: Record<string, unknown>;
}

async function startWithTestSupport(serverOptions: Record<string, unknown> = { app: { rateLimit: { limit: 1_000_000 } } }) {
  // Loaded lazily (and by URL) so that a caller with its own server needs no test support code.
  const mod = (await import(new URL('../test/support/server.ts', import.meta.url).href)) as {
    startTestServer: (opts?: Record<string, unknown>) => Promise<{
      url: string;
      credentials: { operatorKey: string };
      close: () => Promise<void>;
    }>;
  };
  const server = await mod.startTestServer(serverOptions);
  return { url: server.url, key: server.credentials.operatorKey, close: server.close };
}

function refused(what: string, status: number): Error {
  if (status === 429) return new Error(`${what} answered 429: the server's rate limit is below the benchmark's request count; start it with a higher limit`);
  return new Error(`${what} answered ${status}`);
}

export async function benchMcp(options: BenchMcpOptions = {}): Promise<BenchMcpResult> {
  const requests = options.requests ?? 2000;
  const warmUp = options.warmUp ?? 200;
  const concurrency = options.concurrency ?? 16;
  let baseUrl = options.baseUrl;
  let key = options.key;
  let close: (() => Promise<void>) | null = null;
  if (!baseUrl) {
    const server = await (options.startServer ?? (() => startWithTestSupport(options.serverOptions)))();
    baseUrl = server.url;
    key = key ?? server.key;
    close = server.close;
  }
  if (!key) throw new Error('benchMcp: a key is required with baseUrl');
  baseUrl = baseUrl.replace(/\/+$/, '');
  const auth = { Authorization: `Bearer ${key}` };

  const rest = async () => {
    const res = await fetch(`${baseUrl}/v1/meta`, { headers: auth });
    if (res.status !== 200) throw refused('GET /v1/meta', res.status);
    await res.arrayBuffer();
  };
  let id = 0;
  const mcpHeaders = {
    ...auth,
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': '2025-11-25',
  };
  const mcp = async () => {
    const res = await fetch(`${baseUrl}/mcp`, {
      method: 'POST',
      headers: mcpHeaders,
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: 'svc.meta.get', arguments: {} } }),
    });
    if (res.status !== 200) throw refused('POST /mcp', res.status);
    const body = (await res.json()) as { result?: { isError?: boolean } };
    if (!body.result || body.result.isError) throw new Error(`tools/call svc.meta.get failed: ${JSON.stringify(body)}`);
  };

  try {
    // Warm both paths (JIT, schema compilation, connection pool), then measure alternately-free.
    await runLoad(warmUp, concurrency, rest);
    await runLoad(warmUp, concurrency, mcp);
    const rounds = Math.max(1, options.rounds ?? 8);
    const perRound = Math.ceil(requests / rounds);
    const restSamples: Sample[] = [];
    const mcpSamples: Sample[] = [];
    for (let i = 0; i < rounds; i++) {
      // Alternate which side goes first.
      if (i % 2 === 0) {
        restSamples.push(await runLoad(perRound, concurrency, rest));
        mcpSamples.push(await runLoad(perRound, concurrency, mcp));
      } else {
        mcpSamples.push(await runLoad(perRound, concurrency, mcp));
        restSamples.push(await runLoad(perRound, concurrency, rest));
      }
    }
    const listed = await fetch(`${baseUrl}/mcp`, {
      method: 'POST',
      headers: mcpHeaders,
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/list', params: {} }),
    });
    if (listed.status !== 200) throw refused('POST /mcp tools/list', listed.status);
    const listedText = await listed.text();
    const toolsList = { bytes: Buffer.byteLength(listedText), tools: ((JSON.parse(listedText) as { result: { tools: unknown[] } }).result.tools ?? []).length };
    const restStats = loadStats(restSamples);
    const mcpStats = loadStats(mcpSamples);
    const result: BenchMcpResult = { rest: restStats, mcp: mcpStats, ratio: mcpStats.rps / restStats.rps, toolsList };
    if (options.print !== false) {
      const row = (name: string, s: BenchStats) =>
        `${name.padEnd(34)} ${s.rps.toFixed(0).padStart(8)} req/s   p50 ${s.p50Ms.toFixed(2).padStart(7)} ms   p99 ${s.p99Ms.toFixed(2).padStart(7)} ms`;
      console.log(`MCP vs REST (${restStats.requests} requests each in ${rounds} alternating rounds, concurrency ${concurrency})`);
      console.log(row('REST GET /v1/meta', restStats));
      console.log(row('MCP tools/call svc.meta.get', mcpStats));
      console.log(`ratio MCP/REST throughput: ${result.ratio.toFixed(2)}`);
      console.log(`MCP tools/list: ${toolsList.tools} tools in ${(toolsList.bytes / 1024).toFixed(1)} KB (target: at most 60 KB)`);
    }
    return result;
  } finally {
    if (close) await close();
  }
}

/**
 * What the MCP layer adds to one call, in microseconds: the same operation (meta.get) through the
 * Hono app in process (no sockets), sequentially, as tools/call and as GET /v1/meta; the difference
 * is the per-request SDK Server and transport, JSON-RPC parsing and the tool result envelope.
 */
export async function mcpLayerCost(calls = 2000): Promise<{ restUs: number; mcpUs: number; layerUs: number }> {
  const mod = (await import(new URL('../test/support/server.ts', import.meta.url).href)) as {
    startTestServer: (opts?: Record<string, unknown>) => Promise<{
      svc: { app: { request: (path: string, init?: RequestInit) => Response | Promise<Response> } };
      credentials: { operatorKey: string };
      close: () => Promise<void>;
    }>;
  };
  const server = await mod.startTestServer({ app: { rateLimit: { limit: 10_000_000 } } });
  const app = server.svc.app;
  const auth = { Authorization: `Bearer ${server.credentials.operatorKey}` };
  const mcpInit = {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc.meta.get', arguments: {} } }),
  };
  const rest = async () => void (await (await app.request('/v1/meta', { headers: auth })).arrayBuffer());
  const mcp = async () => void (await (await app.request('/mcp', mcpInit)).arrayBuffer());
  const timeEach = async (fn: () => Promise<void>) => {
    const started = performance.now();
    for (let i = 0; i < calls; i++) await fn();
    return ((performance.now() - started) * 1000) / calls;
  };
  try {
    for (let i = 0; i < 300; i++) await rest(), await mcp(); // warm-up (JIT)
    let restUs = Infinity;
    let mcpUs = Infinity;
    // Best of three alternating rounds: the machine's other load inflates, never deflates, a round.
    for (let round = 0; round < 3; round++) {
      restUs = Math.min(restUs, await timeEach(rest));
      mcpUs = Math.min(mcpUs, await timeEach(mcp));
    }
    return { restUs, mcpUs, layerUs: mcpUs - restUs };
  } finally {
    await server.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const baseUrl = process.env.BENCH_BASE_URL;
  const key = process.env.BENCH_KEY;
  benchMcp({ baseUrl, key }).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
