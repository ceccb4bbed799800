// The read hot path at its same-work peer (issue 26): GET /v1/meta on `svc serve` against
// peer-reads.mjs (the same work by hand: key by SHA-256, per-credential window, the contract's
// headers, the body, batched audit rows to the same kind of database) and against bare Hono (the
// ceiling: no work), each in its own process, one autocannon at 16 connections; on PGlite (svc's
// embedded default; the peer embeds PGlite too) and on PostgreSQL (DATABASE_URL, one fresh database
// both write their audit rows to). Then MCP tools/call svc.meta.get against REST on the same server.
// Targets: svc/peer >= 0.9 with p99 <= 1.5x the peer's; MCP/REST >= 0.7.
// Alone: `node --import tsx scripts/bench-peer.ts [--quick]`.
import { cannon, line, startBare, startPeer, startSvc, type CannonResult, type SvcProc } from './bench-procs.ts';

const CONNECTIONS = 16;

export interface PeerFigures {
  [name: string]: number;
}

const mcpCall = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc.meta.get', arguments: {} } });

async function measure(url: string, seconds: number, pid: number, headers: Record<string, string>, post?: string): Promise<CannonResult> {
  const method = post ? 'POST' : 'GET';
  await cannon({ url, connections: CONNECTIONS, seconds: Math.min(2, seconds), headers, method, body: post }); // warm-up (JIT)
  return cannon({ url, connections: CONNECTIONS, seconds, headers, method, body: post, serverPid: pid });
}

const ratioLine = (label: string, a: CannonResult, b: CannonResult, target: string) =>
  `${label.padEnd(34)} ${(a.rps / b.rps).toFixed(2)}x req/s; p50 ${a.p50Ms.toFixed(1)} vs ${b.p50Ms.toFixed(1)} ms, p99 ${a.p99Ms.toFixed(1)} vs ${b.p99Ms.toFixed(1)} ms (${(a.p99Ms / Math.max(b.p99Ms, 0.1)).toFixed(1)}x) ${target}`;

/** svc, the peer and bare Hono on one database kind; returns svc's REST run (for the MCP ratio). */
async function side(label: string, svc: SvcProc, databaseUrl: string | undefined, seconds: number, say: (s: string) => void, out: PeerFigures) {
  const auth = { authorization: `Bearer ${svc.operatorKey}` };
  const body = await (await fetch(`${svc.url}/v1/meta`, { headers: auth })).text();
  const key = label === 'PGlite' ? 'Pglite' : 'Postgres';
  const bare = await startBare(body);
  let bareRun: CannonResult;
  try {
    bareRun = await measure(`${bare.url}/v1/meta`, seconds, bare.pid, {});
  } finally {
    await bare.stop();
  }
  const peer = await startPeer({ key: svc.operatorKey, body, databaseUrl });
  let peerRun: CannonResult;
  try {
    peerRun = await measure(`${peer.url}/v1/meta`, seconds, peer.pid, auth);
  } finally {
    await peer.stop();
  }
  const svcRun = await measure(`${svc.url}/v1/meta`, seconds, svc.pid, auth);
  say(line(`bare Hono (${label})`, bareRun));
  say(line(`same-work peer (${label})`, peerRun));
  say(line(`svc REST (${label})`, svcRun));
  say(ratioLine(`svc / peer (${label})`, svcRun, peerRun, '(target >= 0.9x, p99 <= 1.5x)'));
  say(ratioLine(`svc / bare Hono (${label})`, svcRun, bareRun, '(the ceiling)'));
  out[`svcPeer${key}`] = svcRun.rps / peerRun.rps;
  out[`svcPeerP99${key}`] = svcRun.p99Ms / peerRun.p99Ms;
  out[`svcBare${key}`] = svcRun.rps / bareRun.rps;
  return svcRun;
}

async function mcpAgainst(label: string, svc: SvcProc, rest: CannonResult, seconds: number, say: (s: string) => void, out: PeerFigures) {
  const headers = { authorization: `Bearer ${svc.operatorKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
  const mcp = await measure(`${svc.url}/mcp`, seconds, svc.pid, headers, mcpCall);
  say(line(`svc MCP tools/call (${label})`, mcp));
  say(ratioLine(`MCP / REST (${label})`, mcp, rest, '(target >= 0.7x)'));
  out[`mcpRest${label === 'PGlite' ? 'Pglite' : 'Postgres'}`] = mcp.rps / rest.rps;
}

export async function benchPeer(options: { quick: boolean; print: boolean }): Promise<PeerFigures> {
  const seconds = options.quick ? 3 : 10;
  const say = (s: string) => options.print && console.log(s);
  const out: PeerFigures = {};
  const svc = await startSvc();
  try {
    const rest = await side('PGlite', svc, undefined, seconds, say, out);
    await mcpAgainst('PGlite', svc, rest, seconds, say, out);
  } finally {
    await svc.stop();
  }
  if (process.env.DATABASE_URL) {
    const { freshPostgresDatabase } = await import('../test/support/db.ts');
    const fresh = await freshPostgresDatabase(process.env.DATABASE_URL);
    try {
      const pg = await startSvc({ databaseUrl: fresh.url });
      try {
        const rest = await side('PostgreSQL', pg, fresh.url, seconds, say, out);
        await mcpAgainst('PostgreSQL', pg, rest, seconds, say, out);
      } finally {
        await pg.stop();
      }
    } finally {
      await fresh.drop();
    }
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchPeer({ quick: process.argv.includes('--quick'), print: true });
  process.exit(0);
}
