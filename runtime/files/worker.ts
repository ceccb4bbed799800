// The file worker: runs in the server process (unless SVC_WORKERS=false) and claims its work from
// the database with FOR UPDATE SKIP LOCKED, so any number of processes can share it.
// 1. Scan: a registered file is `scanning` until its bytes are checked (the sha256 recorded at
//    upload still matches; no EICAR test signature; a PDF starts with %PDF): then `available`, or
//    `rejected` (both final). Bytes are read with no transaction open; the verdict lands after.
// 2. Extract: a queued extraction of an available intake document runs (queued -> running ->
//    succeeded | failed) and its operation follows; a rejected document fails its extraction.
//    One left `running` by a crashed process for 5 minutes fails (it never runs twice).
// 3. Purge: uploads never registered are deleted, bytes and row, after
//    limits.unregisteredUploadRetentionHours.
import { createHash } from 'node:crypto';
import { and, eq, inArray, isNull, lt, lte, ne, or } from 'drizzle-orm';
import type { Database, Db } from '../data/client.ts';
import { extractions, files, intakeRecords, operations, uploads } from '../data/schema.ts';
import { errorSummary, logLine } from '../observability/log.ts';
import { extractValues, UnreadableDocument, type ExtractFieldDef } from './extract.ts';
import type { FileStore } from './store.ts';

const EICAR = 'X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!';
const STALE_RUNNING_MS = 5 * 60_000;

export interface FileWorkerOptions {
  database: Database;
  store: FileStore;
  log: (line: string) => void;
  /** The service's base URL: a stored problem's type is {baseUrl}/problems/<code>. */
  baseUrl: string;
  intervalMs?: number;
  now?: () => Date;
  /** An upload never registered is purged after this many hours (the contract's limits.unregisteredUploadRetentionHours). */
  uploadRetentionHours: number;
}

export interface FileWorker {
  /** One pass over every kind of work (tests call it to avoid waiting). */
  tick(): Promise<void>;
  close(): Promise<void>;
}

function problemRecord(base: string, code: string, status: number, title: string, detail: string): Record<string, unknown> {
  return { type: `${base}/problems/${code}`, title, status, code, detail, instance: null, requestId: null, retryable: false };
}

/** Why a file is refused, or null when it passes. */
export function scanVerdict(bytes: Buffer, file: { sha256: string; contentType: string }): string | null {
  if (createHash('sha256').update(bytes).digest('hex') !== file.sha256) return 'the stored bytes no longer match the sha256 recorded at upload';
  if (bytes.includes(EICAR)) return 'malware signature found (EICAR test file)';
  const type = file.contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'application/pdf' && !bytes.subarray(0, 1024).includes('%PDF-')) return 'declared application/pdf but the bytes are not a PDF';
  return null;
}

/** How long a scanner holds a file it claimed (files.scanned_at, while the file is scanning). */
const SCAN_LEASE_MS = 5 * 60_000; // not a contract limit

/**
 * Scans the oldest file still `scanning` that no other scanner holds. The claim is one statement (FOR
 * UPDATE SKIP LOCKED, then a lease in scanned_at, committed); the bytes are read with no transaction
 * open (storage may be slow, and an open transaction holds back every tenant's events); the verdict
 * lands in one short transaction, only if the file is still scanning. A scanner that died is
 * replaced when its lease ends.
 */
async function scanOne(db: Db, store: FileStore, now: Date, base: string): Promise<boolean> {
  const free = db
    .select({ id: files.id })
    .from(files)
    .where(and(eq(files.status, 'scanning'), or(isNull(files.scannedAt), lte(files.scannedAt, now))))
    .orderBy(files.createdAt)
    .limit(1)
    .for('update', { skipLocked: true });
  const [file] = await db.update(files).set({ scannedAt: new Date(now.getTime() + SCAN_LEASE_MS) }).where(inArray(files.id, free)).returning();
  if (!file) return false;
  let verdict: string | null;
  try {
    verdict = scanVerdict(await store.read(file.storageKey), file);
  } catch {
    verdict = 'the uploaded bytes are missing from storage';
  }
  await db.transaction(async (tx) => {
    const [settled] = await tx
      .update(files)
      .set({ status: verdict ? 'rejected' : 'available', scannedAt: now })
      .where(and(eq(files.id, file.id), eq(files.status, 'scanning')))
      .returning({ id: files.id });
    if (settled && verdict && file.extractionId) {
      await finishExtraction(tx, file.extractionId, now, null, problemRecord(base, 'invalid_transition', 409, 'The document was rejected', `The document was rejected by the scan: ${verdict}.`));
    }
  });
  return true;
}

async function finishExtraction(db: Db, id: string, now: Date, fields: unknown[] | null, error: Record<string, unknown> | null): Promise<void> {
  const status = error ? 'failed' : 'succeeded';
  const [row] = await db
    .update(extractions)
    .set({ status, fields: fields ?? [], error, completedAt: now })
    .where(and(eq(extractions.id, id), inArray(extractions.status, ['queued', 'running'])))
    .returning({ operationId: extractions.operationId });
  if (row?.operationId) {
    await db
      .update(operations)
      .set({ status, progress: 100, result: error ? null : { extractionId: id }, error, updatedAt: now, finishedAt: now })
      .where(eq(operations.id, row.operationId));
  }
}

/** Claims one queued extraction whose document is available (queued -> running, committed). */
async function claimExtraction(db: Db, now: Date) {
  return db.transaction(async (tx) => {
    const [claimed] = await tx
      .select({ extraction: extractions, file: files })
      .from(extractions)
      .innerJoin(files, eq(files.id, extractions.fileId))
      .where(and(eq(extractions.status, 'queued'), eq(files.status, 'available')))
      .orderBy(extractions.createdAt)
      .limit(1)
      .for('update', { of: extractions, skipLocked: true });
    if (!claimed) return null;
    await tx.update(extractions).set({ status: 'running', startedAt: now }).where(eq(extractions.id, claimed.extraction.id));
    if (claimed.extraction.operationId) {
      await tx.update(operations).set({ status: 'running', progress: 10, updatedAt: now }).where(eq(operations.id, claimed.extraction.operationId));
    }
    return claimed;
  });
}

async function extractOne(db: Db, store: FileStore, now: () => Date, base: string): Promise<boolean> {
  const claimed = await claimExtraction(db, now());
  if (!claimed) return false;
  const { extraction, file } = claimed;
  try {
    let defs: ExtractFieldDef[] = [];
    if (extraction.intakeId) {
      const [record] = await db.select({ fields: intakeRecords.fields }).from(intakeRecords).where(eq(intakeRecords.id, extraction.intakeId));
      defs = ((record?.fields ?? []) as ExtractFieldDef[]).map(({ key, label, type, choices }) => ({ key, label, type, choices }));
    }
    const values = await extractValues(await store.read(file.storageKey), file.contentType, defs);
    await db.transaction((tx) => finishExtraction(tx, extraction.id, now(), values, null));
  } catch (err) {
    const detail = err instanceof UnreadableDocument ? err.message : 'The document could not be read.';
    await db.transaction((tx) => finishExtraction(tx, extraction.id, now(), null, problemRecord(base, 'validation_failed', 422, 'The document could not be read', detail)));
    if (!(err instanceof UnreadableDocument)) throw err;
  }
  return true;
}

/** Extractions left running by a process that died: failed, never run twice. */
async function failStale(db: Db, now: Date, base: string): Promise<void> {
  const stale = await db
    .select({ id: extractions.id })
    .from(extractions)
    .where(and(eq(extractions.status, 'running'), lt(extractions.startedAt, new Date(now.getTime() - STALE_RUNNING_MS))));
  for (const { id } of stale) {
    await db.transaction((tx) =>
      finishExtraction(tx, id, now, null, problemRecord(base, 'unavailable', 503, 'The extraction was interrupted', 'The process running this extraction stopped; register the document again.')),
    );
  }
}

const PURGE_BATCH = 100; // not a contract limit: uploads deleted per statement

/** Deletes uploads never registered past their retention, PURGE_BATCH rows a statement, each batch's objects after it committed. */
async function purgeUploads(db: Db, store: FileStore, now: Date, retentionHours: number): Promise<void> {
  const cutoff = new Date(now.getTime() - retentionHours * 3600_000);
  for (;;) {
    const batch = db.select({ id: uploads.id }).from(uploads).where(and(ne(uploads.status, 'registered'), lt(uploads.createdAt, cutoff))).limit(PURGE_BATCH);
    const old = await db.delete(uploads).where(inArray(uploads.id, batch)).returning({ storageKey: uploads.storageKey });
    for (const { storageKey } of old) await store.remove(storageKey);
    if (old.length < PURGE_BATCH) return;
  }
}

export function startFileWorker(options: FileWorkerOptions): FileWorker {
  const { database, store, log } = options;
  const db = database.db;
  const now = options.now ?? (() => new Date());
  const base = options.baseUrl;
  let running: Promise<void> | null = null;
  let closed = false;
  let lastPurge = 0;

  async function pass(): Promise<void> {
    while (!closed && (await scanOne(db, store, now(), base))) {
      /* next file */
    }
    while (!closed && (await extractOne(db, store, now, base))) {
      /* next extraction */
    }
    if (closed) return;
    await failStale(db, now(), base);
    if (now().getTime() - lastPurge > 10 * 60_000) {
      lastPurge = now().getTime();
      await purgeUploads(db, store, now(), options.uploadRetentionHours);
    }
  }

  function tick(): Promise<void> {
    // Single-flight per process: a tick during a pass waits for it, then runs once more.
    const after: Promise<void> = (running ?? Promise.resolve()).then(() => (closed ? undefined : pass()));
    const guarded = after.catch((err: unknown) => log(logLine('error', 'file_worker_failed', { error: errorSummary(err) })));
    running = guarded;
    void guarded.finally(() => {
      if (running === guarded) running = null;
    });
    return guarded;
  }

  const timer = setInterval(() => void tick(), options.intervalMs ?? 1000);
  timer.unref();
  return {
    tick,
    async close() {
      closed = true;
      clearInterval(timer);
      await running;
    },
  };
}

export { purgeUploads };
