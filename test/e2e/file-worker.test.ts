// The file worker shared by several processes: with SVC_WORKERS=false the serving process does no
// background work (files stay scanning); two workers on one database (each as another process
// would run it) split the queue with FOR UPDATE SKIP LOCKED, and no file is scanned or extracted
// twice. On PGlite and, with DATABASE_URL, PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startIdp, type TestIdp } from '../support/idp.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { operationsById } from '../../generated/registry.ts';
import { LocalFileStore, type FileStore } from '../../runtime/files/store.ts';
import { startFileWorker } from '../../runtime/files/worker.ts';
import { extractionJob } from '../../handlers/workers/extractions.ts';
import { longIdleTransactions } from '../support/idle-transactions.ts';
import { limits } from '../../generated/contract.ts';

let s: TestServer;
let idp: TestIdp;
let dataDir: string;

async function call(method: string, path: string, credential: string, body?: unknown, headers: Record<string, string> = {}): Promise<any> {
  const res = await fetch(`${s.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${credential}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-worker-'));
  idp = await startIdp();
  s = await startTestServer({ oauthIssuer: idp.issuer, oauthJwksUrl: idp.jwksUrl, dataDir, workersEnabled: false });
}, 60_000);
afterAll(async () => {
  await s?.close();
  await idp?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('workers shared through the database', () => {
  it('SVC_WORKERS=false: no worker in the serving process; two workers split the queue and run each item once', async () => {
    expect(s.svc.fileWorker).toBeNull();
    const scope = [...new Set(Object.values(operationsById).map((o) => o.scope).filter((x): x is string => !!x))].join(' ');
    const admin = await idp.issueToken({ sub: s.credentials.adminSub as string, aud: `${s.config.baseUrl}/mcp`, scope, client_id: s.credentials.oauthClientId });
    const key = s.credentials.operatorKey;
    const proposed = await call('POST', '/v1/intake-records', key, { clientId: s.credentials.clientId, template: 'company_profile', title: 'W' }, { 'idempotency-key': randomUUID() });
    await call('POST', `/v1/approvals/${proposed.approval.id}:approve`, admin, {});
    const intakeId = (await call('GET', `/v1/approvals/${proposed.approval.id}`, key)).result.id as string;

    const extractionIds: string[] = [];
    for (let i = 0; i < 8; i++) {
      const bytes = Buffer.from(`Legal name: Company ${i}\n`);
      const up = (await call('POST', '/v1/files:upload-url', key, { name: `d${i}.txt`, contentType: 'text/plain', sizeBytes: bytes.length, clientId: s.credentials.clientId })).result;
      expect((await fetch(up.url, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: bytes })).status).toBe(200);
      const file = (await call('POST', '/v1/files', key, { uploadId: up.uploadId, intakeId }, { 'idempotency-key': randomUUID() })).result;
      extractionIds.push(file.extractionId);
    }
    await new Promise((r) => setTimeout(r, 300));
    const [pending] = await s.database.execute<{ n: number | string }>(`select count(*) as n from files where status = 'scanning'`);
    expect(Number(pending!.n)).toBe(8);

    // Two workers, as two processes would run them, counting every read of the bytes.
    const reads = new Map<string, number>();
    const local = new LocalFileStore(dataDir);
    const counting: FileStore = {
      put: (k, b, m) => local.put(k, b, m),
      read: (k) => {
        reads.set(k, (reads.get(k) ?? 0) + 1);
        return local.read(k);
      },
      stream: (k) => local.stream(k),
      exists: (k) => local.exists(k),
      remove: (k) => local.remove(k),
    };
    const workers = [0, 1].map(() => startFileWorker({ database: s.database, store: counting, log: () => undefined, baseUrl: s.config.baseUrl, intervalMs: 60_000, uploadRetentionHours: limits.unregisteredUploadRetentionHours, jobs: [extractionJob] }));
    try {
      await Promise.all(workers.flatMap((w) => [w.tick(), w.tick()]));
    } finally {
      await Promise.all(workers.map((w) => w.close()));
    }
    const rows = await s.database.execute<{ status: string; fields: { key: string; value: string }[] }>(
      `select status, fields from extractions where id in (${extractionIds.map((id) => `'${id}'`).join(',')})`,
    );
    expect(rows.map((r) => r.status)).toEqual(Array(8).fill('succeeded'));
    expect(rows.map((r) => r.fields[0]!.value).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map((i) => `Company ${i}`));
    // Each document read exactly twice: once by the scan, once by its extraction.
    expect([...reads.values()]).toEqual(Array(8).fill(2));
    const ops = await s.database.execute<{ status: string }>(`select status from operations where kind = 'extraction'`);
    expect(ops.map((o) => o.status)).toEqual(Array(8).fill('succeeded'));
  });

  it('a scan waiting on slow storage holds no transaction: other writes go on, nothing idles in a transaction (issue 39)', async () => {
    const key = s.credentials.operatorKey;
    const bytes = Buffer.from('Legal name: Slow Storage Ltd\n');
    const up = (await call('POST', '/v1/files:upload-url', key, { name: 'slow.txt', contentType: 'text/plain', sizeBytes: bytes.length, clientId: s.credentials.clientId })).result;
    expect((await fetch(up.url, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: bytes })).status).toBe(200);
    const file = (await call('POST', '/v1/files', key, { uploadId: up.uploadId }, { 'idempotency-key': randomUUID() })).result;

    const local = new LocalFileStore(dataDir);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let reads = 0;
    const slow: FileStore = {
      put: (k, b, m) => local.put(k, b, m),
      read: async (k) => {
        reads++;
        await gate; // storage that does not answer until the test says so
        return local.read(k);
      },
      stream: (k) => local.stream(k),
      exists: (k) => local.exists(k),
      remove: (k) => local.remove(k),
    };
    const worker = startFileWorker({ database: s.database, store: slow, log: () => undefined, baseUrl: s.config.baseUrl, intervalMs: 60_000, uploadRetentionHours: limits.unregisteredUploadRetentionHours, jobs: [extractionJob] });
    try {
      const pass = worker.tick();
      const until = Date.now() + 5_000;
      while (reads === 0) {
        if (Date.now() > until) throw new Error('the scan never read the file');
        await new Promise((r) => setTimeout(r, 20));
      }
      const started = Date.now();
      await s.database.transaction((tx) => tx.execute(`insert into settings (key, value) values ('file-scan:beside', 'x')` as never));
      expect(Date.now() - started, 'a write beside the scan waited for it').toBeLessThan(1_000);
      await new Promise((r) => setTimeout(r, 1_200)); // a transaction held across the hang is over 1 s old by now
      expect(await longIdleTransactions(s.database)).toEqual([]);
      release();
      await pass;
    } finally {
      release();
      await worker.close();
    }
    const [row] = await s.database.execute<{ status: string }>(`select status from files where id = '${file.id}'`);
    expect(row!.status).toBe('available');
    expect(reads).toBe(1);
  });
});
