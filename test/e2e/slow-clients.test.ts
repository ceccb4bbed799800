// Slow clients are cut (issue 17 item 4): headers that do not arrive within the headers timeout and a
// body that stalls past the request timeout are answered 408 request_timeout (a problem document)
// and the connection is closed, while a normal client keeps being served. The server here runs with
// short timeouts (1 s / 2 s); the defaults come from the contract's limits (checked below).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { service } from '../../generated/registry.ts';
import { contractTimeouts } from '../../runtime/server.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ timeouts: { headersMs: 1000, requestMs: 2000 } });
}, 60_000);
afterAll(async () => {
  await s?.close();
});

/** Sends `first` on a raw connection, then nothing: resolves with what the server sent before closing, and when. */
function stall(first: string): Promise<{ text: string; ms: number }> {
  const { port } = new URL(s.url);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(first));
    let text = '';
    socket.on('data', (d) => (text += d.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => resolve({ text, ms: Date.now() - started }));
    setTimeout(() => {
      socket.destroy();
      reject(new Error(`still open after 15 s; got ${JSON.stringify(text)}`));
    }, 15_000);
  });
}

function problemOf(text: string): Record<string, unknown> {
  return JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
}

describe('slow clients', () => {
  it('the defaults are the contract limits', () => {
    expect(contractTimeouts(service.limits)).toEqual({
      headersMs: service.limits.requestHeadersTimeoutSeconds * 1000,
      requestMs: service.limits.requestTimeoutSeconds * 1000,
    });
    expect(service.problems.request_timeout).toMatchObject({ status: 408 });
  });

  it('headers that never finish are cut with 408 request_timeout, while a normal client is served', async () => {
    const slow = stall('GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    // A normal client meanwhile.
    const quick = await fetch(`${s.url}/v1/health`);
    expect(quick.status).toBe(200);
    const { text, ms } = await slow;
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(text).toMatch(/content-type: application\/problem\+json/i);
    expect(problemOf(text)).toMatchObject({ status: 408, code: 'request_timeout', retryable: true });
    expect(ms).toBeGreaterThanOrEqual(900);
    expect(ms).toBeLessThan(6000);
  });

  it('a body that stalls is cut with 408 request_timeout and writes nothing', async () => {
    const before = await s.database.execute<{ n: number }>(`select count(*)::int as n from tasks`);
    const head =
      `POST /v1/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${s.credentials.operatorKey}\r\n` +
      `Content-Type: application/json\r\nIdempotency-Key: 7d1f7a52-6d0e-4a8e-9d55-0c2f5c2b1e01\r\nContent-Length: 100000\r\n\r\n{"title":"stal`;
    const slow = stall(head);
    const quick = await fetch(`${s.url}/v1/meta`, { headers: { authorization: `Bearer ${s.credentials.operatorKey}` } });
    expect(quick.status).toBe(200);
    const { text, ms } = await slow;
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(problemOf(text)).toMatchObject({ code: 'request_timeout' });
    expect(ms).toBeGreaterThanOrEqual(1900);
    expect(ms).toBeLessThan(8000);
    const after = await s.database.execute<{ n: number }>(`select count(*)::int as n from tasks`);
    expect(after[0]!.n).toBe(before[0]!.n);
  });
});
