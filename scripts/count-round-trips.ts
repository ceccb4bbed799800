// Round trips per write counted on PostgreSQL's wire (scripts/pg-wire-count.ts), for svc and for the
// same-work peer (scripts/peer-writes.mjs), each in its own process: N sequential POST /v1/tasks with
// a fresh Idempotency-Key each, then (svc) the same N keys again (replays). svc's request connections
// are counted apart from its background ones (the event fan-out, pollers, webhook worker), which are
// reported per write too. `target` is PostgreSQL itself or a pooler in front of it.
//   DATABASE_URL=postgres://… node --import tsx scripts/count-round-trips.ts [N]
import { randomUUID } from 'node:crypto';
import { freshPostgresDatabase } from '../test/support/db.ts';
import { startWireCounter, type WireCounts } from '../test/support/pg-wire-count.ts';
import { seedDemo } from './bench-load.ts';
import { serveExisting, type Proc } from './bench-procs.ts';
import { startPeer } from './peer-writes-proc.ts';

export interface RoundTrips {
  svc: { write: number; replay: number; backgroundPerSecond: number; messages: Record<string, number> };
  peer: { write: number; messages: Record<string, number> };
}

async function post(url: string, key: string, token: string, clientId: string): Promise<void> {
  const res = await fetch(`${url}/v1/tasks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ title: 'count', clientId }),
  });
  await res.arrayBuffer();
  if (res.status !== 201) throw new Error(`POST /v1/tasks: ${res.status}`);
}

const sum = (entries: WireCounts[]) => entries.reduce((a, e) => a + e.roundTrips, 0);
const perMessage = (entries: WireCounts[], n: number) => {
  const out: Record<string, number> = {};
  for (const e of entries) for (const [t, c] of Object.entries(e.sent)) out[t] = (out[t] ?? 0) + c / n;
  return out;
};

/**
 * Counts through a wire counter in front of `target` (host:port of PostgreSQL or a pooler), on the
 * database `databaseUrl` names (already seeded: operatorKey, clientId). `pooled`: the peer runs with
 * unnamed statements, as svc does there.
 */
export async function countRoundTrips(options: { databaseUrl: string; operatorKey: string; clientId: string; pooled: boolean; n?: number }): Promise<RoundTrips> {
  const n = options.n ?? 30;
  const target = new URL(options.databaseUrl);
  const counter = await startWireCounter(target.hostname, Number(target.port || 5432));
  const procs: Proc[] = [];
  try {
    const url = counter.url(options.databaseUrl);
    const svc = await serveExisting(url, options.operatorKey);
    procs.push(svc);
    const peer = await startPeer(url, !options.pooled);
    procs.push(peer);
    for (let i = 0; i < 3; i++) await post(svc.url, randomUUID(), options.operatorKey, options.clientId);
    for (let i = 0; i < 3; i++) await post(peer.url, randomUUID(), options.operatorKey, options.clientId);
    await new Promise((r) => setTimeout(r, 1500));
    const keys = Array.from({ length: n }, () => randomUUID());
    let seconds = 0;
    const measure = async (fn: () => Promise<void>) => {
      counter.reset();
      const started = performance.now();
      await fn();
      await new Promise((r) => setTimeout(r, 1000)); // the fan-out of the last writes
      seconds = (performance.now() - started) / 1000;
      return [...counter.counts()];
    };
    const written = await measure(async () => {
      for (const key of keys) await post(svc.url, key, options.operatorKey, options.clientId);
    });
    const writtenSeconds = seconds;
    const replayed = await measure(async () => {
      for (const key of keys) await post(svc.url, key, options.operatorKey, options.clientId);
    });
    const requests = (rows: [string, WireCounts][]) => rows.filter(([name]) => name.startsWith('svc:requests')).map(([, e]) => e);
    const background = (rows: [string, WireCounts][]) => rows.filter(([name]) => name.startsWith('svc:') && !name.startsWith('svc:requests')).map(([, e]) => e);
    const backgroundPerSecond = sum(background(written)) / writtenSeconds;
    const peered = await measure(async () => {
      for (const key of keys) await post(peer.url, key, options.operatorKey, options.clientId);
    });
    const peerRows = peered.filter(([name]) => !name.startsWith('svc:')).map(([, e]) => e);
    return {
      svc: { write: sum(requests(written)) / n, replay: sum(requests(replayed)) / n, backgroundPerSecond, messages: perMessage(requests(written), n) },
      peer: { write: sum(peerRows) / n, messages: perMessage(peerRows, n) },
    };
  } finally {
    for (const p of procs.reverse()) await p.stop().catch(() => undefined);
    await counter.stop();
  }
}

export function roundTripsLine(label: string, r: RoundTrips): string {
  const msgs = (m: Record<string, number>) => Object.entries(m).sort().map(([t, c]) => `${t}${c.toFixed(1)}`).join(' ');
  return (
    `round trips per POST /v1/tasks on PostgreSQL's wire (${label}): svc ${r.svc.write.toFixed(1)} a new write (${msgs(r.svc.messages)}), ` +
    `${r.svc.replay.toFixed(1)} a replay; peer ${r.peer.write.toFixed(1)} (${msgs(r.peer.messages)}); svc's background connections (workers, pollers) ${r.svc.backgroundPerSecond.toFixed(0)} round trips/s, idle or not`
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const base = process.env.DATABASE_URL;
  if (!base) {
    console.log('count-round-trips: set DATABASE_URL (PostgreSQL)');
    process.exit(0);
  }
  const fresh = await freshPostgresDatabase(base);
  try {
    const seeded = (await seedDemo({ ...process.env, DATABASE_URL: fresh.url })) as { operatorKey: string; clientId: string };
    const n = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 30);
    console.log(roundTripsLine('direct', await countRoundTrips({ databaseUrl: fresh.url, ...seeded, pooled: false, n })));
  } finally {
    await fresh.drop().catch(() => undefined);
  }
  process.exit(0);
}
