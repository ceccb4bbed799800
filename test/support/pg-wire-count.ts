// Round trips counted on the wire: a TCP proxy in front of PostgreSQL (or PgBouncer) that reads the
// frontend/backend protocol of every connection through it and counts, per application_name, the
// messages each side sent. A round trip is one ReadyForQuery ('Z'): the server answers each Sync and
// each simple Query with one, and a client that does not pipeline waits for it before going on; or
// one Flush ('H'): postgres.js sends Parse+Describe+Flush for an unnamed statement with parameters and
// waits for the parameter types before Bind+Execute+Sync.
// Used by scripts/count-round-trips.ts (the bench) and test/db/prepared-statements.test.ts; no dependency on svc.
import { createServer, connect, type Socket } from 'node:net';

export interface WireCounts {
  /** ReadyForQuery messages plus Flush messages: round trips. */
  roundTrips: number;
  /** Frontend messages by type letter (P Parse, B Bind, D Describe, E Execute, S Sync, Q Query…). */
  sent: Record<string, number>;
}

export interface WireCounter {
  port: number;
  /** The target URL with host and port replaced by the proxy's. */
  url(target: string): string;
  /** Counts since the last reset, by application_name (the startup parameter; '' when none). */
  counts(): Map<string, WireCounts>;
  reset(): void;
  stop(): Promise<void>;
}

/** Splits a protocol stream into messages; the first `untyped` messages have no type byte (startup). */
function messages(onMessage: (type: string, body: Buffer) => void, untypedFirst: boolean) {
  let pending: Buffer = Buffer.alloc(0);
  let untyped = untypedFirst;
  return (chunk: Buffer) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    for (;;) {
      const head = untyped ? 4 : 5;
      if (pending.length < head) return;
      const length = pending.readInt32BE(untyped ? 0 : 1);
      const total = untyped ? length : length + 1;
      if (pending.length < total) return;
      const type = untyped ? '' : String.fromCharCode(pending[0]!);
      const body = pending.subarray(head, total);
      pending = pending.subarray(total);
      if (untyped) {
        // SSLRequest/GSSENCRequest (a code, no parameters) keep the next message untyped too.
        const code = body.length >= 4 ? body.readInt32BE(0) : 0;
        untyped = code === 80877103 || code === 80877104;
      }
      onMessage(type, body);
    }
  };
}

function applicationName(startup: Buffer): string {
  const fields = startup.subarray(4).toString('utf8').split('\0');
  const at = fields.indexOf('application_name');
  return at >= 0 ? (fields[at + 1] ?? '') : '';
}

export async function startWireCounter(targetHost: string, targetPort: number): Promise<WireCounter> {
  let totals = new Map<string, WireCounts>();
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(targetPort, targetHost);
    sockets.add(client).add(upstream);
    let name: string | null = null;
    const entry = () => {
      const key = name ?? '';
      let e = totals.get(key);
      if (!e) totals.set(key, (e = { roundTrips: 0, sent: {} }));
      return e;
    };
    const fromClient = messages((type, body) => {
      if (type === '') {
        if (name === null && body.length > 8) name = applicationName(body);
        return;
      }
      const e = entry();
      e.sent[type] = (e.sent[type] ?? 0) + 1;
      if (type === 'H') e.roundTrips++;
    }, true);
    const fromServer = messages((type) => {
      if (type === 'Z') entry().roundTrips++;
    }, false);
    let sslAnswered = false;
    client.on('data', (chunk) => {
      fromClient(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      // The one-byte answer to an SSLRequest ('N') precedes the typed stream.
      if (!sslAnswered && name === null && chunk.length === 1) sslAnswered = true;
      else fromServer(chunk);
      client.write(chunk);
    });
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', close).on('error', close);
    upstream.on('close', close).on('error', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    url(target) {
      const u = new URL(target);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    counts: () => totals,
    reset() {
      totals = new Map();
    },
    async stop() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
