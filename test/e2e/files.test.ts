// files.* and extraction.get end to end, on the local store: a real upload to the signed URL (bytes
// arrive with the right sha256), altered and expired URLs refused, an oversized upload refused
// without being stored, register's state checks, the scan (available or rejected), download through
// a signed URL, extraction of CSV, plain-text and PDF intake documents, visibility across clients
// and credentials, MCP, and signed URLs kept out of the audit and the logs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startIdp, type TestIdp } from '../support/idp.ts';
import { makePdf } from '../support/pdf.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { operationsById } from '../../generated/registry.ts';
import { fileUrlSecret, signUrl } from '../../runtime/files/signing.ts';
import { connectMcp, ok, toolError, type McpSession } from '../mcp/support.ts';
import { expectSchema } from '../support/schemas.ts';
import { limits } from '../../generated/contract.ts';

let s: TestServer;
let idp: TestIdp;
let dataDir: string;
let intakeId: string;
let globexFileId: string;
const sessions: McpSession[] = [];
const tokens: Record<string, string> = {};
const signedUrls: string[] = [];

async function token(sub: string): Promise<string> {
  if (tokens[sub]) return tokens[sub]!;
  const scope = [...new Set(Object.values(operationsById).map((o) => o.scope).filter((x): x is string => !!x))].join(' ');
  tokens[sub] = await idp.issueToken({ sub, aud: `${s.config.baseUrl}/mcp`, scope, client_id: s.credentials.oauthClientId });
  return tokens[sub]!;
}

async function call(method: string, path: string, credential: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${s.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${credential}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

const unwrap = (x: any): any => x?.result ?? x;

async function uploadUrl(credential: string, name: string, contentType: string, sizeBytes: number, clientId?: string): Promise<any> {
  const res = await call('POST', '/v1/files:upload-url', credential, { name, contentType, sizeBytes, ...(clientId ? { clientId } : {}) });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const out = unwrap(res.body);
  expectSchema('UploadUrl', out);
  signedUrls.push(out.url);
  return out;
}

async function put(url: string, bytes: Buffer | ReadableStream<Uint8Array>, contentType: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: 'PUT', headers: { 'content-type': contentType }, body: bytes, ...(bytes instanceof Buffer ? {} : { duplex: 'half' }) } as RequestInit);
  return { status: res.status, body: await res.json() };
}

async function registerFile(credential: string, uploadId: string, extra: Record<string, unknown> = {}): Promise<{ status: number; body: any }> {
  return call('POST', '/v1/files', credential, { uploadId, ...extra }, { 'idempotency-key': randomUUID() });
}

/** upload_url + PUT + register, returning the file record. */
async function uploadFile(credential: string, name: string, contentType: string, bytes: Buffer, extra: Record<string, unknown> = {}, clientId?: string): Promise<any> {
  const up = await uploadUrl(credential, name, contentType, bytes.length, clientId);
  expect((await put(up.url, bytes, contentType)).status).toBe(200);
  const reg = await registerFile(credential, up.uploadId, extra);
  expect(reg.status, JSON.stringify(reg.body)).toBe(201);
  expectSchema('FileRecord', unwrap(reg.body));
  return unwrap(reg.body);
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'svc-files-'));
  idp = await startIdp();
  // The worker is driven by tick() in these tests; its own interval is long.
  s = await startTestServer({ oauthIssuer: idp.issuer, oauthJwksUrl: idp.jwksUrl, dataDir, app: { workerIntervalMs: 60_000 } });
  const proposed = await call(
    'POST',
    '/v1/intake-records',
    s.credentials.operatorKey,
    { clientId: s.credentials.clientId, template: 'benefits_onboarding', title: 'Docs' },
    { 'idempotency-key': randomUUID() },
  );
  await call('POST', `/v1/approvals/${proposed.body.approval.id}:approve`, await token(s.credentials.adminSub as string), {});
  intakeId = (await call('GET', `/v1/approvals/${proposed.body.approval.id}`, s.credentials.operatorKey)).body.result.id;
  globexFileId = (await uploadFile(s.credentials.operatorKey, 'globex.txt', 'text/plain', Buffer.from('globex'), {}, s.credentials.otherClientId)).id;
  await s.svc.fileWorker!.tick();
}, 60_000);
afterAll(async () => {
  await Promise.all(sessions.map((m) => m.close().catch(() => undefined)));
  await s?.close();
  await idp?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('upload through a signed URL', () => {
  it('signs a 15-minute PUT URL without token or key parameters; the bytes arrive with their sha256', async () => {
    const bytes = Buffer.from('Company name: Acme Corp\n');
    const before = Date.now();
    const up = await uploadUrl(s.credentials.operatorKey, 'note.txt', 'text/plain', bytes.length, s.credentials.clientId);
    expect(up).toMatchObject({ method: 'PUT', headers: { 'content-type': 'text/plain' }, maxBytes: bytes.length });
    expect(up.uploadId).toMatch(/^upl_/);
    const url = new URL(up.url);
    expect(url.origin + url.pathname).toBe(`${s.config.baseUrl}/uploads/${up.uploadId}`);
    expect([...url.searchParams.keys()].sort()).toEqual(['expires', 'signature']);
    const life = Date.parse(up.expiresAt) - before;
    expect(life).toBeGreaterThan(14 * 60_000);
    expect(life).toBeLessThanOrEqual(15 * 60_000 + 1000);
    const res = await put(up.url, bytes, 'text/plain');
    expect(res).toMatchObject({ status: 200, body: { uploadId: up.uploadId, sizeBytes: bytes.length, sha256: sha(bytes) } });
    expect(readFileSync(join(dataDir, 'files', 'uploads', up.uploadId))).toEqual(bytes);
    // The same URL again: already received.
    expect((await put(up.url, bytes, 'text/plain')).status).toBe(409);
  });

  it('an altered URL, an expired URL, an unknown upload and a wrong content type are refused', async () => {
    const bytes = Buffer.from('x');
    const up = await uploadUrl(s.credentials.operatorKey, 'x.txt', 'text/plain', 1, s.credentials.clientId);
    const altered = up.url.replace(/signature=(.)/, (_: string, c: string) => `signature=${c === 'A' ? 'B' : 'A'}`);
    expect((await put(altered, bytes, 'text/plain')).body).toMatchObject({ status: 403, code: 'forbidden' });
    const longer = up.url.replace(/expires=(\d+)/, (_: string, e: string) => `expires=${Number(e) + 3600}`);
    expect((await put(longer, bytes, 'text/plain')).status).toBe(403);
    const secret = await fileUrlSecret(s.database.db);
    const expired = signUrl(secret, s.config.baseUrl, 'PUT', `/uploads/${up.uploadId}`, new Date(Date.now() - 1000), 1);
    const res = await put(expired, bytes, 'text/plain');
    expect(res.status).toBe(403);
    expect(res.body.detail).toContain('expired');
    expect((await put(up.url.replace(up.uploadId, 'upl_unknown00000000000'), bytes, 'text/plain')).status).toBe(403);
    expect((await put(up.url, bytes, 'application/pdf')).status).toBe(415);
    expect(existsSync(join(dataDir, 'files', 'uploads', up.uploadId))).toBe(false);
    expect((await put(up.url, bytes, 'text/plain')).status).toBe(200);
  });

  it('an upload over its size is refused without being stored (declared length and streamed body)', async () => {
    const up = await uploadUrl(s.credentials.operatorKey, 'big.txt', 'text/plain', 10, s.credentials.clientId);
    expect((await put(up.url, Buffer.alloc(20, 97), 'text/plain')).body).toMatchObject({ status: 413, code: 'payload_too_large' });
    // No Content-Length: the limit is enforced while streaming.
    const chunks = [Buffer.alloc(6, 97), Buffer.alloc(6, 98)];
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next) controller.enqueue(new Uint8Array(next));
        else controller.close();
      },
    });
    expect((await put(up.url, stream, 'text/plain')).status).toBe(413);
    const dir = join(dataDir, 'files', 'uploads');
    expect(readdirSync(dir).filter((f) => f.startsWith(up.uploadId))).toEqual([]);
    const [row] = await s.database.execute<{ status: string }>(`select status from uploads where id = '${up.uploadId}'`);
    expect(row!.status).toBe('pending');
    expect((await registerFile(s.credentials.operatorKey, up.uploadId)).body).toMatchObject({ status: 409, code: 'invalid_transition' });
    // The contract bounds the announced size: over 100 MiB is validation_failed.
    const huge = await call('POST', '/v1/files:upload-url', s.credentials.operatorKey, { name: 'h', contentType: 'text/plain', sizeBytes: 104857601, clientId: s.credentials.clientId });
    expect(huge.status).toBe(422);
  });
});

describe('register, scan and download', () => {
  it('register: unknown 404, not arrived 409, another credential 404, then 201 scanning, twice 409', async () => {
    expect((await registerFile(s.credentials.operatorKey, 'upl_doesnotexist0000000')).status).toBe(404);
    const bytes = Buffer.from('hello');
    const up = await uploadUrl(s.credentials.operatorKey, 'hello.txt', 'text/plain', bytes.length, s.credentials.clientId);
    expect((await registerFile(s.credentials.operatorKey, up.uploadId)).body.code).toBe('invalid_transition');
    await put(up.url, bytes, 'text/plain');
    expect((await registerFile(s.credentials.serviceKey, up.uploadId)).status).toBe(404);
    const reg = await registerFile(s.credentials.operatorKey, up.uploadId, { name: 'renamed.txt' });
    expect(reg.status).toBe(201);
    const file = unwrap(reg.body);
    expect(file).toMatchObject({
      clientId: s.credentials.clientId,
      name: 'renamed.txt',
      contentType: 'text/plain',
      sizeBytes: 5,
      sha256: sha(bytes),
      purpose: 'attachment',
      status: 'scanning',
      extractionId: null,
      uploadedBy: { kind: 'operator', id: s.credentials.operatorUserId },
    });
    expect((await registerFile(s.credentials.operatorKey, up.uploadId)).body.code).toBe('invalid_transition');

    const early = await call('GET', `/v1/files/${file.id}/download-url`, s.credentials.operatorKey);
    expect(early.body).toMatchObject({ status: 409, code: 'invalid_transition' });
    await s.svc.fileWorker!.tick();
    const dl = await call('GET', `/v1/files/${file.id}/download-url`, s.credentials.operatorKey);
    expect(dl.status).toBe(200);
    expectSchema('DownloadUrl', dl.body);
    signedUrls.push(dl.body.url);
    expect(dl.body.fileId).toBe(file.id);
    const life = Date.parse(dl.body.expiresAt) - Date.now();
    expect(life).toBeGreaterThan(4 * 60_000);
    expect(life).toBeLessThanOrEqual(5 * 60_000 + 1000);
    const got = await fetch(dl.body.url);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('text/plain');
    expect(got.headers.get('content-disposition')).toContain('renamed.txt');
    expect(Buffer.from(await got.arrayBuffer())).toEqual(bytes);
    const altered = await fetch(dl.body.url.replace(file.id, globexFileId));
    expect(altered.status).toBe(403);
    const secret = await fileUrlSecret(s.database.db);
    expect((await fetch(signUrl(secret, s.config.baseUrl, 'GET', `/downloads/${file.id}`, new Date(Date.now() - 1)))).status).toBe(403);
  });

  it('the scan rejects malware (EICAR) and a PDF that is not one; a rejected file has no download URL', async () => {
    const eicar = Buffer.from('X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*');
    const bad = await uploadFile(s.credentials.operatorKey, 'eicar.txt', 'text/plain', eicar, {}, s.credentials.clientId);
    const fake = await uploadFile(s.credentials.operatorKey, 'fake.pdf', 'application/pdf', Buffer.from('not a pdf'), {}, s.credentials.clientId);
    await s.svc.fileWorker!.tick();
    for (const f of [bad, fake]) {
      const [row] = await s.database.execute<{ status: string }>(`select status from files where id = '${f.id}'`);
      expect(row!.status).toBe('rejected');
      expect((await call('GET', `/v1/files/${f.id}/download-url`, s.credentials.operatorKey)).body.code).toBe('invalid_transition');
    }
  });
});

describe('extraction of intake documents', () => {
  async function extracted(fileId: string, extractionId: string): Promise<any> {
    await s.svc.fileWorker!.tick();
    const res = await call('GET', `/v1/extractions/${extractionId}`, s.credentials.operatorKey);
    expect(res.status).toBe(200);
    expect(res.body.fileId).toBe(fileId);
    expectSchema('Extraction', res.body);
    return res.body;
  }
  const values = (e: any) => Object.fromEntries(e.fields.map((f: any) => [f.key, f.value]));

  it('a CSV document (header row over values) yields typed values with a confidence; an operation tracks it', async () => {
    const csv = Buffer.from('Company name,Employee count,Plan start date,Plan type,Dental included\r\n"Acme, Inc.","1,250",01/15/2027,HMO,yes\r\n');
    const file = await uploadFile(s.credentials.operatorKey, 'census.csv', 'text/csv', csv, { intakeId });
    expect(file).toMatchObject({ purpose: 'intake_document', intakeId, status: 'scanning' });
    expect(file.extractionId).toMatch(/^ext_/);
    const queued = await call('GET', `/v1/extractions/${file.extractionId}`, s.credentials.operatorKey);
    expect(queued.body).toMatchObject({ status: 'queued', fields: [], completedAt: null, intakeId, clientId: s.credentials.clientId });
    const e = await extracted(file.id, file.extractionId);
    expect(e.status).toBe('succeeded');
    expect(e.completedAt).not.toBeNull();
    expect(values(e)).toEqual({ company_name: 'Acme, Inc.', employee_count: 1250, plan_start_date: '2027-01-15', plan_type: 'hmo', dental_included: true });
    for (const f of e.fields) {
      expect(f.confidence).toBeGreaterThan(0);
      expect(f.confidence).toBeLessThanOrEqual(1);
      expect(f.page).toBeNull();
    }
    expect(e.fields.find((f: any) => f.key === 'company_name').confidence).toBe(0.95);
    expect(e.fields.find((f: any) => f.key === 'employee_count').confidence).toBe(0.76); // "1,250" reformatted
    const [op] = await s.database.execute<{ kind: string; status: string; requested_by_credential_id: string }>(
      `select o.kind, o.status, o.requested_by_credential_id from operations o join extractions x on x.operation_id = o.id where x.id = '${file.extractionId}'`,
    );
    expect(op).toMatchObject({ kind: 'extraction', status: 'succeeded' });
    // Values reach the record only through set_field with source extraction.
    const record = await call('GET', `/v1/intake-records/${intakeId}`, s.credentials.operatorKey);
    expect(record.body.fields.find((f: any) => f.key === 'company_name').value).toBeNull();
    const set = await call('PUT', `/v1/intake-records/${intakeId}/fields/employee_count`, s.credentials.operatorKey, { value: values(e).employee_count, source: 'extraction' });
    expect(unwrap(set.body).fields.find((f: any) => f.key === 'employee_count')).toMatchObject({ value: 1250, source: 'extraction' });
  });

  it('a plain-text and a two-page PDF document: label lines, pages recorded for the PDF', async () => {
    const txt = await uploadFile(s.credentials.operatorKey, 'note.txt', 'text/plain', Buffer.from('Company name: Acme Text\nplan_type = ppo\nEmployee count: many\n'), { intakeId });
    const e1 = await extracted(txt.id, txt.extractionId);
    expect(values(e1)).toEqual({ company_name: 'Acme Text', plan_type: 'ppo' });
    expect(e1.fields.find((f: any) => f.key === 'plan_type').confidence).toBe(0.95);

    const pdf = makePdf([['Onboarding form', 'Company name: Acme PDF', 'Employee count: 42'], ['Plan start date: 2027-03-01', 'Dental included: no']]);
    const file = await uploadFile(s.credentials.operatorKey, 'form.pdf', 'application/pdf', pdf, { intakeId });
    const e2 = await extracted(file.id, file.extractionId);
    expect(e2.status).toBe('succeeded');
    expect(values(e2)).toEqual({ company_name: 'Acme PDF', employee_count: 42, plan_start_date: '2027-03-01', dental_included: false });
    expect(e2.fields.find((f: any) => f.key === 'company_name').page).toBe(1);
    expect(e2.fields.find((f: any) => f.key === 'plan_start_date').page).toBe(2);
  });

  it('an unreadable type and a rejected document fail their extraction with a problem', async () => {
    const bin = await uploadFile(s.credentials.operatorKey, 'x.bin', 'application/octet-stream', Buffer.from([1, 2, 3]), { intakeId });
    const e = await extracted(bin.id, bin.extractionId);
    expect(e).toMatchObject({ status: 'failed', fields: [], error: { code: 'validation_failed', status: 422 } });
    const fake = await uploadFile(s.credentials.operatorKey, 'fake.pdf', 'application/pdf', Buffer.from('nope'), { intakeId });
    const e2 = await extracted(fake.id, fake.extractionId);
    expect(e2).toMatchObject({ status: 'failed', error: { code: 'invalid_transition' } });
  });

  it('an intake_document without an intake record, or for another client, is validation_failed', async () => {
    const up = await uploadUrl(s.credentials.operatorKey, 'a.txt', 'text/plain', 1, s.credentials.otherClientId);
    await put(up.url, Buffer.from('a'), 'text/plain');
    expect((await registerFile(s.credentials.operatorKey, up.uploadId, { purpose: 'intake_document' })).body.errors[0].pointer).toBe('/intakeId');
    expect((await registerFile(s.credentials.operatorKey, up.uploadId, { intakeId })).body.errors[0].pointer).toBe('/intakeId');
  });
});

describe('visibility across clients and credentials', () => {
  const cases: { who: string; credential: () => Promise<string>; globex: boolean; internal: boolean }[] = [
    { who: 'unbound operator key', credential: async () => s.credentials.operatorKey, globex: true, internal: false },
    { who: 'operator with all clients (OAuth)', credential: () => token(s.credentials.operatorSub as string), globex: true, internal: true },
    { who: 'operator scoped to Acme', credential: () => token(s.credentials.scopedOperatorSub as string), globex: false, internal: true },
    { who: 'client admin of Acme', credential: () => token(s.credentials.clientAdminSub as string), globex: false, internal: false },
    { who: 'key bound to Acme', credential: async () => s.credentials.serviceKey, globex: false, internal: false },
  ];
  for (const c of cases) {
    it(`${c.who}: Acme files yes, Globex ${c.globex}, internal files ${c.internal}`, async () => {
      const cred = await c.credential();
      const acme = await uploadFile(cred, 'mine.txt', 'text/plain', Buffer.from('mine'), {}, s.credentials.clientId);
      await s.svc.fileWorker!.tick();
      expect((await call('GET', `/v1/files/${acme.id}/download-url`, cred)).status).toBe(200);
      expect((await call('GET', `/v1/files/${globexFileId}/download-url`, cred)).status).toBe(c.globex ? 200 : 404);
      const forGlobex = await call('POST', '/v1/files:upload-url', cred, { name: 'g', contentType: 'text/plain', sizeBytes: 1, clientId: s.credentials.otherClientId });
      expect(forGlobex.status).toBe(c.globex ? 200 : 404);
      // Without a client the upload is opened; register settles its client (internal: OAuth operators only).
      const internal = await uploadUrl(cred, 'i.txt', 'text/plain', 1);
      expect((await put(internal.url, Buffer.from('i'), 'text/plain')).status).toBe(200);
      const reg = await registerFile(cred, internal.uploadId);
      expect(reg.status).toBe(c.internal ? 201 : 422);
      if (c.internal) expect(unwrap(reg.body).clientId).toBeNull();
      else expect(reg.body.errors[0].pointer).toBe('/clientId');
      if (forGlobex.status === 200) signedUrls.push(unwrap(forGlobex.body).url);
    });
  }

  it("an upload opened by one credential cannot be registered by another of the same owner; extraction follows the client scope", async () => {
    const up = await uploadUrl(s.credentials.operatorKey, 'own.txt', 'text/plain', 1, s.credentials.clientId);
    await put(up.url, Buffer.from('o'), 'text/plain');
    expect((await registerFile(await token(s.credentials.operatorSub as string), up.uploadId)).status).toBe(404);
    const admin = await token(s.credentials.clientAdminSub as string);
    const doc = await uploadFile(s.credentials.operatorKey, 'g.txt', 'text/plain', Buffer.from('Company name: G'), {}, s.credentials.otherClientId);
    expect(doc.extractionId).toBeNull();
    const acmeDoc = await uploadFile(s.credentials.operatorKey, 'd.txt', 'text/plain', Buffer.from('Company name: D'), { intakeId });
    expect((await call('GET', `/v1/extractions/${acmeDoc.extractionId}`, admin)).status).toBe(200);
    expect((await call('GET', `/v1/extractions/${acmeDoc.extractionId}`, s.credentials.serviceKey)).status).toBe(200);
    const globexRecord = await call('POST', '/v1/intake-records', s.credentials.operatorKey, { clientId: s.credentials.otherClientId, template: 'company_profile', title: 'G' }, { 'idempotency-key': randomUUID() });
    await call('POST', `/v1/approvals/${globexRecord.body.approval.id}:approve`, await token(s.credentials.adminSub as string), {});
    const gid = (await call('GET', `/v1/approvals/${globexRecord.body.approval.id}`, s.credentials.operatorKey)).body.result.id;
    const gdoc = await uploadFile(s.credentials.operatorKey, 'gd.txt', 'text/plain', Buffer.from('Legal name: Globex'), { intakeId: gid });
    for (const cred of [admin, s.credentials.serviceKey, await token(s.credentials.scopedOperatorSub as string)]) {
      expect((await call('GET', `/v1/extractions/${gdoc.extractionId}`, cred)).status).toBe(404);
    }
    expect((await call('GET', `/v1/extractions/${gdoc.extractionId}`, s.credentials.operatorKey)).status).toBe(200);
  });
});

describe('over MCP and in the records', () => {
  it('extraction.get is a tool; the file operations are not', async () => {
    const m = await connectMcp(s.url, s.credentials.serviceKey);
    sessions.push(m);
    const doc = await uploadFile(s.credentials.operatorKey, 'm.txt', 'text/plain', Buffer.from('Company name: MCP'), { intakeId });
    await s.svc.fileWorker!.tick();
    const got = unwrap(ok(await m.call('svc.extraction.get', { extraction_id: doc.extractionId })));
    expect(got).toMatchObject({ id: doc.extractionId, status: 'succeeded', fields: [{ key: 'company_name', value: 'MCP' }] });
    expect(toolError(await m.call('svc.extraction.get', { extraction_id: 'ext_nope' })).code).toBe('not_found');
    const tools = (await m.client.listTools()).tools.map((t) => t.name);
    expect(tools).not.toContain('svc.files.upload_url');
  });

  it('no signed URL or signature reaches the audit log or the server log', async () => {
    await s.flushAudit();
    const rows = await s.database.execute<Record<string, unknown>>('select * from audit_log');
    const audit = JSON.stringify(rows);
    const logs = s.logs.join('\n');
    expect(signedUrls.length).toBeGreaterThan(5);
    for (const url of signedUrls) {
      const signature = new URL(url).searchParams.get('signature')!;
      expect(audit).not.toContain(signature);
      expect(logs).not.toContain(signature);
    }
  });

  it('uploads never registered are purged after 24 hours (bytes and row)', async () => {
    const up = await uploadUrl(s.credentials.operatorKey, 'old.txt', 'text/plain', 3, s.credentials.clientId);
    await put(up.url, Buffer.from('old'), 'text/plain');
    await s.database.execute(`update uploads set created_at = now() - interval '25 hours' where id = '${up.uploadId}'`);
    const { purgeUploads } = await import('../../runtime/files/worker.ts');
    await purgeUploads(s.database.db, s.svc.fileStore, new Date(), limits.unregisteredUploadRetentionHours);
    expect(existsSync(join(dataDir, 'files', 'uploads', up.uploadId))).toBe(false);
    expect(await s.database.execute(`select id from uploads where id = '${up.uploadId}'`)).toHaveLength(0);
  });
});
