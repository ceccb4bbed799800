// files.* on the S3-compatible store (SVC_S3_BUCKET), against s3rver started on loopback: bytes sent
// to our signed upload URL arrive in the bucket with the right sha256 (one PutObject, or a multipart
// upload for a large file); an altered or expired URL is refused and stores nothing; an upload over
// its size is refused and leaves no object; the scan reads from the bucket; a download URL redirects
// to a presigned GET of the bucket that serves the bytes and expires; the purge deletes the object.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { loadConfig } from '../../runtime/config.ts';
import { S3FileStore } from '../../runtime/files/s3-store.ts';
import { fileUrlSecret, signUrl } from '../../runtime/files/signing.ts';
import { purgeUploads } from '../../runtime/files/worker.ts';
import { startS3, type TestS3 } from '../support/s3.ts';
import { expectSchema } from '../support/schemas.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { limits } from '../../generated/contract.ts';

let s3: TestS3;
let s: TestServer;
let store: S3FileStore;
let dataDir: string;
const PREFIX = 'svc/';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const unwrap = (x: any): any => x?.result ?? x;

beforeAll(async () => {
  s3 = await startS3();
  dataDir = mkdtempSync(join(tmpdir(), 'svc-files-s3-'));
  s = await startTestServer({ dataDir, s3: s3.config(PREFIX), app: { workerIntervalMs: 60_000 } });
  store = s.svc.fileStore as S3FileStore;
}, 60_000);
afterAll(async () => {
  await s?.close();
  await s3?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${s.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${s.credentials.operatorKey}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function uploadUrl(name: string, contentType: string, sizeBytes: number): Promise<any> {
  const res = await call('POST', '/v1/files:upload-url', { name, contentType, sizeBytes, clientId: s.credentials.clientId });
  expect(res.status).toBe(200);
  return unwrap(res.body);
}

async function put(url: string, bytes: Buffer | ReadableStream<Uint8Array>, contentType: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: 'PUT', headers: { 'content-type': contentType }, body: bytes, ...(bytes instanceof Buffer ? {} : { duplex: 'half' }) } as RequestInit);
  return { status: res.status, body: await res.json() };
}

/** The object's bytes, straight from the bucket (not through the service). */
async function objectBytes(uploadId: string): Promise<Buffer | null> {
  try {
    const out = await store.client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: `${PREFIX}uploads/${uploadId}` }));
    return Buffer.from(await out.Body!.transformToByteArray());
  } catch (err) {
    if ((err as { name?: string }).name === 'NoSuchKey' || (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return null;
    throw err;
  }
}

async function objectKeys(uploadId: string): Promise<string[]> {
  const out = await store.client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `${PREFIX}uploads/${uploadId}` }));
  return (out.Contents ?? []).map((o) => o.Key!);
}

function streamOf(chunks: Buffer[]): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks.shift();
      if (next) controller.enqueue(new Uint8Array(next));
      else controller.close();
    },
  });
}

describe('configuration', () => {
  it('SVC_S3_BUCKET and the standard AWS variables select the S3 store (path-style for an endpoint)', () => {
    const config = loadConfig({ ...s3.env, SVC_S3_PREFIX: PREFIX });
    expect(config.s3).toEqual(s3.config(PREFIX));
    expect(loadConfig({ ...s3.env, AWS_ENDPOINT_URL_S3: undefined, AWS_ENDPOINT_URL: s3.endpoint }).s3?.endpoint).toBe(s3.endpoint);
    expect(loadConfig({ SVC_S3_BUCKET: 'b' }).s3).toMatchObject({ endpoint: null, forcePathStyle: false, credentials: null, region: 'us-east-1' });
    expect(loadConfig({}).s3).toBeNull();
    expect(() => loadConfig({ SVC_S3_BUCKET: 'b', AWS_ACCESS_KEY_ID: 'x' })).toThrow(/go together/);
    expect(() => loadConfig({ SVC_S3_BUCKET: 'b', AWS_ENDPOINT_URL_S3: 'localhost:9000' })).toThrow(/http/);
    expect(store).toBeInstanceOf(S3FileStore);
  });
});

describe('uploads into the bucket', () => {
  it('bytes PUT to the signed URL arrive in the bucket with the right sha256; nothing lands in the data directory', async () => {
    const bytes = Buffer.from('Company name: Acme on S3\n');
    const up = await uploadUrl('note.txt', 'text/plain', bytes.length);
    const res = await put(up.url, bytes, 'text/plain');
    expect(res).toMatchObject({ status: 200, body: { uploadId: up.uploadId, sizeBytes: bytes.length, sha256: sha(bytes) } });
    const stored = await objectBytes(up.uploadId);
    expect(stored).toEqual(bytes);
    expect(sha(stored!)).toBe(sha(bytes));
    expect(existsSync(join(dataDir, 'files'))).toBe(false);
    expect((await put(up.url, bytes, 'text/plain')).status).toBe(409);
  });

  it('a large upload goes up in parts (multipart) and arrives whole', async () => {
    const bytes = Buffer.alloc(9 * 1024 * 1024 + 17);
    for (let i = 0; i < bytes.length; i += 4096) bytes[i] = i % 251;
    const up = await uploadUrl('big.bin', 'application/octet-stream', bytes.length);
    const chunks: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 256 * 1024) chunks.push(bytes.subarray(i, i + 256 * 1024));
    const res = await put(up.url, streamOf(chunks), 'application/octet-stream');
    expect(res).toMatchObject({ status: 200, body: { sizeBytes: bytes.length, sha256: sha(bytes) } });
    const stored = await objectBytes(up.uploadId);
    expect(stored?.length).toBe(bytes.length);
    expect(sha(stored!)).toBe(sha(bytes));
  });

  it('an altered or expired URL is refused and stores nothing', async () => {
    const bytes = Buffer.from('x');
    const up = await uploadUrl('x.txt', 'text/plain', 1);
    const altered = up.url.replace(/signature=(.)/, (_: string, c: string) => `signature=${c === 'A' ? 'B' : 'A'}`);
    expect((await put(altered, bytes, 'text/plain')).body).toMatchObject({ status: 403, code: 'forbidden' });
    const secret = await fileUrlSecret(s.database.db);
    const expired = signUrl(secret, s.config.baseUrl, 'PUT', `/uploads/${up.uploadId}`, new Date(Date.now() - 1000), 1);
    expect((await put(expired, bytes, 'text/plain')).body.detail).toContain('expired');
    expect(await objectKeys(up.uploadId)).toEqual([]);
  });

  it('an upload over its size is refused and leaves no object (declared, streamed, and past the first part)', async () => {
    const up = await uploadUrl('big.txt', 'text/plain', 10);
    expect((await put(up.url, Buffer.alloc(20, 97), 'text/plain')).body).toMatchObject({ status: 413, code: 'payload_too_large' });
    expect((await put(up.url, streamOf([Buffer.alloc(6, 97), Buffer.alloc(6, 98)]), 'text/plain')).status).toBe(413);
    expect(await objectKeys(up.uploadId)).toEqual([]);
    // Over the limit after a whole part went up: the multipart upload is aborted, no object appears.
    const limit = 8 * 1024 * 1024 + 100;
    const big = await uploadUrl('bigger.bin', 'application/octet-stream', limit);
    const chunks: Buffer[] = [];
    for (let i = 0; i < 10; i++) chunks.push(Buffer.alloc(1024 * 1024, i));
    expect((await put(big.url, streamOf(chunks), 'application/octet-stream')).status).toBe(413);
    expect(await objectKeys(big.uploadId)).toEqual([]);
    const [row] = await s.database.execute<{ status: string }>(`select status from uploads where id = '${big.uploadId}'`);
    expect(row!.status).toBe('pending');
  });
});

describe('scan, download and purge on the bucket', () => {
  it('a registered file is scanned from the bucket; its download URL redirects to a presigned GET that serves the bytes', async () => {
    const bytes = Buffer.from('name,value\nCompany name,Acme S3\n');
    const up = await uploadUrl('census.csv', 'text/csv', bytes.length);
    expect((await put(up.url, bytes, 'text/csv')).status).toBe(200);
    const reg = await call('POST', '/v1/files', { uploadId: up.uploadId }, { 'idempotency-key': randomUUID() });
    expect(reg.status).toBe(201);
    const file = unwrap(reg.body);
    expectSchema('FileRecord', file);
    expect(file).toMatchObject({ status: 'scanning', sha256: sha(bytes), sizeBytes: bytes.length });
    await s.svc.fileWorker!.tick();
    const dl = await call('GET', `/v1/files/${file.id}/download-url`);
    expect(dl.status).toBe(200);
    expectSchema('DownloadUrl', dl.body);
    expect(new URL(dl.body.url).origin).toBe(s.config.baseUrl);

    const hop = await fetch(dl.body.url, { redirect: 'manual' });
    expect(hop.status).toBe(302);
    expect(hop.headers.get('cache-control')).toBe('no-store');
    const location = new URL(hop.headers.get('location')!);
    expect(location.origin).toBe(s3.endpoint);
    expect(location.pathname).toBe(`/${s3.bucket}/${PREFIX}uploads/${up.uploadId}`);
    expect(location.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    const lifetime = Number(location.searchParams.get('X-Amz-Expires'));
    expect(lifetime).toBeGreaterThan(240);
    expect(lifetime).toBeLessThanOrEqual(300);

    const got = await fetch(dl.body.url);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('text/csv');
    expect(got.headers.get('content-disposition')).toContain('census.csv');
    expect(Buffer.from(await got.arrayBuffer())).toEqual(bytes);

    // Our URL altered or expired: refused before any redirect.
    expect((await fetch(dl.body.url.replace(/signature=(.)/, (_: string, c: string) => `signature=${c === 'A' ? 'B' : 'A'}`), { redirect: 'manual' })).status).toBe(403);
    const secret = await fileUrlSecret(s.database.db);
    expect((await fetch(signUrl(secret, s.config.baseUrl, 'GET', `/downloads/${file.id}`, new Date(Date.now() - 1)), { redirect: 'manual' })).status).toBe(403);
  });

  it('a presigned GET of the bucket expires', async () => {
    const bytes = Buffer.from('short-lived');
    const up = await uploadUrl('s.txt', 'text/plain', bytes.length);
    await put(up.url, bytes, 'text/plain');
    const url = await store.signedDownload(`uploads/${up.uploadId}`, { expiresInSeconds: 1, contentType: 'text/plain', contentDisposition: 'attachment; filename="s.txt"' });
    expect((await fetch(url)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2100));
    expect((await fetch(url)).status).toBe(403);
  });

  it('the scan rejects malware read from the bucket', async () => {
    const eicar = Buffer.from('X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*');
    const up = await uploadUrl('eicar.txt', 'text/plain', eicar.length);
    await put(up.url, eicar, 'text/plain');
    const file = unwrap((await call('POST', '/v1/files', { uploadId: up.uploadId }, { 'idempotency-key': randomUUID() })).body);
    await s.svc.fileWorker!.tick();
    expect((await call('GET', `/v1/files/${file.id}/download-url`)).body.code).toBe('invalid_transition');
  });

  it('an upload never registered is purged from the bucket after 24 hours', async () => {
    const up = await uploadUrl('old.txt', 'text/plain', 3);
    await put(up.url, Buffer.from('old'), 'text/plain');
    expect(await store.exists(`uploads/${up.uploadId}`)).toBe(true);
    await s.database.execute(`update uploads set created_at = now() - interval '25 hours' where id = '${up.uploadId}'`);
    await purgeUploads(s.database.db, store, new Date(), limits.unregisteredUploadRetentionHours);
    expect(await store.exists(`uploads/${up.uploadId}`)).toBe(false);
    await expect(store.client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: `${PREFIX}uploads/${up.uploadId}` }))).rejects.toThrow();
    expect(await s.database.execute(`select id from uploads where id = '${up.uploadId}'`)).toHaveLength(0);
  });
});
