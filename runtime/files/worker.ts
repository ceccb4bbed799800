// The file worker: runs in the server process (unless SVC_WORKERS=false) and claims its work from
// the database with FOR UPDATE SKIP LOCKED, so any number of processes can share it.
// 1. Scan: a registered file is `scanning` until its bytes are checked (the sha256 recorded at
//    upload still matches; no EICAR test signature; a PDF starts with %PDF): then `available`, or
//    `rejected` (both final). Bytes are read with no transaction open; the verdict lands after.
// 2. Jobs: the API's work over scanned files (Registry.fileJobs). A job hears each scan's verdict in
//    the verdict's transaction, and makes one pass of its own work after the scans of each tick.
// 3. Purge: uploads never registered are deleted, bytes and row, after
//    limits.unregisteredUploadRetentionHours.
import { createHash } from 'node:crypto';
import { and, eq, inArray, isNull, lt, lte, ne, or } from 'drizzle-orm';
import type { Database, Db } from '../data/client.ts';
import { files, uploads } from '../data/schema.ts';
import { errorSummary, logLine } from '../observability/log.ts';
import type { FileStore } from './store.ts';

const EICAR = 'X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!';

/** A registered file, as the scan settled it (its status, and scannedAt the scan's time). */
export type ScannedFile = typeof files.$inferSelect;

/** What a job's pass works with: the store, the clock, and whether the worker is closing. */
export interface FileJobContext {
  db: Db;
  store: FileStore;
  now: () => Date;
  /** The service's base URL: a stored problem's type is {baseUrl}/problems/<code>. */
  baseUrl: string;
  closed: () => boolean;
}

/** Work an API does over scanned files, run by the file worker (Registry.fileJobs). */
export interface FileJob {
  /** In the verdict's transaction, once a scan settled `file` (verdict null: available; else why it was rejected). */
  scanned?(tx: Db, file: ScannedFile, verdict: string | null, context: FileJobContext): Promise<void>;
  /** One pass of the job's work, after the scans of each tick. */
  pass?(context: FileJobContext): Promise<void>;
}

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
  /** The API's jobs over scanned files, in order (Registry.fileJobs). */
  jobs?: readonly FileJob[];
}

export interface FileWorker {
  /** One pass over every kind of work (tests call it to avoid waiting). */
  tick(): Promise<void>;
  close(): Promise<void>;
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
async function scanOne(db: Db, store: FileStore, now: Date, jobs: readonly FileJob[], context: FileJobContext): Promise<boolean> {
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
    if (!settled) return;
    const scanned: ScannedFile = { ...file, status: verdict ? 'rejected' : 'available', scannedAt: now };
    for (const job of jobs) await job.scanned?.(tx, scanned, verdict, context);
  });
  return true;
}

const PURGE_BATCH = 100; // not a contract limit: uploads deleted per statement

/** Deletes uploads never registered past their retention, PURGE_BATCH rows a statement, each batch's objects after it committed. */
async function purgeUploads(db: Db, store: FileStore, now: Date, retentionHours: number): Promise<void> {
  const cutoff = new Date(now.getTime() - retentionHours * 3600_000); // not a contract limit: hours to ms
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
  const jobs = options.jobs ?? [];
  let running: Promise<void> | null = null;
  let closed = false;
  let lastPurge = 0;

  async function pass(): Promise<void> {
    const context: FileJobContext = { db, store, now, baseUrl: options.baseUrl, closed: () => closed };
    while (!closed && (await scanOne(db, store, now(), jobs, context))) {
      /* next file */
    }
    for (const job of jobs) {
      if (closed) return;
      await job.pass?.(context);
    }
    if (closed) return;
    if (now().getTime() - lastPurge > 10 * 60_000) { // not a contract limit: purge every 10 minutes
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
