// The upload route's own time rule (runtime/files/routes.ts): a large upload over a slow link is not
// cut by the whole-request timeout (limits.requestTimeoutSeconds), as long as its bytes keep coming
// (limits.uploadIdleTimeoutSeconds between chunks) and it ends within limits.uploadTimeoutSeconds.
// A stalled or endless upload is answered 408 request_timeout, nothing is kept, the connection is
// closed and the URL can be used again. Any other request is still cut at the whole-request limit.
// The server runs with short timeouts: whole request 1.5 s, upload idle 1 s, upload total 5 s.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { limits } from '../../generated/contract.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let s: TestServer;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-upload-timeouts-'));
  s = await startTestServer({
    dataDir,
    timeouts: { headersMs: 1000, requestMs: 1500 },
    app: { workerIntervalMs: 60_000, uploadTimeouts: { idleMs: 1000, totalMs: 5000 } },
  });
}, 60_000);
afterAll(async () => {
  await s?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function openUpload(sizeBytes: number): Promise<{ uploadId: string; url: string }> {
  const res = await fetch(`${s.url}/v1/files:upload-url`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.credentials.operatorKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'slow.bin', contentType: 'application/octet-stream', sizeBytes, clientId: s.credentials.clientId }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { result?: { uploadId: string; url: string }; uploadId: string; url: string };
  return body.result ?? body;
}

/**
 * PUTs `chunks` on a raw connection, waiting `gaps[i]` ms before chunk i: resolves with the response
 * text (up to the close), how long it took, and whether the server closed the connection.
 */
function slowPut(url: string, total: number, chunks: Buffer[], gaps: number[]): Promise<{ text: string; ms: number }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(Number(u.port), '127.0.0.1', async () => {
      socket.write(`PUT ${u.pathname}${u.search} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: ${total}\r\nConnection: close\r\n\r\n`);
      for (let i = 0; i < chunks.length; i++) {
        await sleep(gaps[i] ?? 0);
        if (socket.destroyed || !socket.writable) return;
        socket.write(chunks[i]!);
      }
    });
    let text = '';
    socket.on('data', (d) => (text += d.toString('utf8')));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ text, ms: Date.now() - started }));
    setTimeout(() => {
      socket.destroy();
      reject(new Error(`still open after 20 s; got ${JSON.stringify(text)}`));
    }, 20_000);
  });
}

const bodyOf = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;

async function uploadStatus(id: string): Promise<string> {
  const [row] = await s.database.execute<{ status: string }>(`select status from uploads where id = '${id}'`);
  return row!.status;
}

describe('the upload time rule', () => {
  it('the defaults are the contract limits, and longer than the whole-request limit', () => {
    expect(limits.uploadIdleTimeoutSeconds).toBeGreaterThan(0);
    expect(limits.uploadTimeoutSeconds).toBeGreaterThan(limits.requestTimeoutSeconds);
    expect(limits.uploadTimeoutSeconds * 1000).toBeGreaterThan(limits.uploadUrlLifetimeSeconds);
  });

  it('a slow upload (3.5 s, over the 1.5 s whole-request limit) that keeps sending arrives whole with its sha256', async () => {
    const chunks = Array.from({ length: 8 }, (_, i) => Buffer.alloc(1000, 65 + i));
    const all = Buffer.concat(chunks);
    const up = await openUpload(all.length);
    const { text, ms } = await slowPut(up.url, all.length, chunks, [0, 500, 500, 500, 500, 500, 500, 500]);
    expect(ms).toBeGreaterThan(3000);
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(bodyOf(text)).toMatchObject({ uploadId: up.uploadId, sizeBytes: all.length, sha256: sha(all) });
    expect(readFileSync(join(dataDir, 'files', 'uploads', up.uploadId))).toEqual(all);
    expect(await uploadStatus(up.uploadId)).toBe('received');
  });

  it('an upload that stalls longer than the idle timeout is 408, keeps nothing, and the URL works again', async () => {
    const up = await openUpload(4000);
    const { text, ms } = await slowPut(up.url, 4000, [Buffer.alloc(1000, 1), Buffer.alloc(3000, 2)], [0, 4000]);
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(text).toMatch(/connection: close/i);
    expect(bodyOf(text)).toMatchObject({ status: 408, code: 'request_timeout' });
    expect(String(bodyOf(text).detail)).toContain('uploadIdleTimeoutSeconds');
    expect(ms).toBeGreaterThanOrEqual(900);
    expect(ms).toBeLessThan(3500);
    expect(existsSync(join(dataDir, 'files', 'uploads', up.uploadId))).toBe(false);
    expect(await uploadStatus(up.uploadId)).toBe('pending');
    const again = await fetch(up.url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: Buffer.alloc(4000, 3) });
    expect(again.status).toBe(200);
    expect(await uploadStatus(up.uploadId)).toBe('received');
  });

  it('an upload that keeps trickling past the total limit is 408 and keeps nothing', async () => {
    const chunks = Array.from({ length: 14 }, () => Buffer.alloc(10, 7));
    const up = await openUpload(140);
    const { text, ms } = await slowPut(up.url, 140, chunks, chunks.map(() => 500));
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(String(bodyOf(text).detail)).toContain('uploadTimeoutSeconds');
    expect(ms).toBeGreaterThanOrEqual(4900);
    expect(ms).toBeLessThan(7000);
    expect(existsSync(join(dataDir, 'files', 'uploads', up.uploadId))).toBe(false);
    expect(await uploadStatus(up.uploadId)).toBe('pending');
  });

  it('any other request is still cut at the whole-request limit', async () => {
    const head = JSON.stringify({ name: 'x', contentType: 'text/plain', sizeBytes: 1, clientId: s.credentials.clientId });
    const u = new URL(s.url);
    const result = await new Promise<{ text: string; ms: number }>((resolve) => {
      const started = Date.now();
      const socket = connect(Number(u.port), '127.0.0.1', async () => {
        socket.write(
          `POST /v1/files:upload-url HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${s.credentials.operatorKey}\r\n` +
            `Content-Type: application/json\r\nContent-Length: ${head.length}\r\n\r\n`,
        );
        for (const ch of head) {
          await sleep(300);
          if (socket.destroyed || !socket.writable) return;
          socket.write(ch);
        }
      });
      let text = '';
      socket.on('data', (d) => (text += d.toString('utf8')));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve({ text, ms: Date.now() - started }));
    });
    expect(result.text).toMatch(/^HTTP\/1\.1 408 /);
    expect(result.ms).toBeLessThan(4000);
  });
});
