// Reading an intake document's values (extraction.*): a job of the runtime's file worker
// (runtime/files/worker.ts FileJob, handed over in Registry.fileJobs by bin/wiring.ts).
// - A queued extraction of an available intake document runs (queued -> running -> succeeded |
//   failed) and its operation follows; the bytes are read with no transaction open.
// - A document the scan rejected fails its extraction, in the verdict's transaction.
// - One left `running` by a crashed process for 5 minutes fails (it never runs twice).
import { and, eq, inArray, lt, type SQL } from 'drizzle-orm';
import type { Db } from '../../runtime/data/client.ts';
import { files, operations } from '../../runtime/data/schema.ts';
import { extractValues, UnreadableDocument, type ExtractFieldDef } from '../../runtime/files/extract.ts';
import type { FileJob, FileJobContext } from '../../runtime/files/worker.ts';
import { extractions, intakeRecords } from '../data/schema.ts';

const STALE_RUNNING_MS = 5 * 60_000;

function problemRecord(base: string, code: string, status: number, title: string, detail: string): Record<string, unknown> {
  return { type: `${base}/problems/${code}`, title, status, code, detail, instance: null, requestId: null, retryable: false };
}

/** Ends the unfinished extraction `which` selects (by its id, or by its file's) and its operation. */
async function finishExtraction(db: Db, which: SQL, now: Date, fields: unknown[] | null, error: Record<string, unknown> | null): Promise<void> {
  const status = error ? 'failed' : 'succeeded';
  const [row] = await db
    .update(extractions)
    .set({ status, fields: fields ?? [], error, completedAt: now })
    .where(and(which, inArray(extractions.status, ['queued', 'running'])))
    .returning({ id: extractions.id, operationId: extractions.operationId });
  if (row?.operationId) {
    await db
      .update(operations)
      .set({ status, progress: 100, result: error ? null : { extractionId: row.id }, error, updatedAt: now, finishedAt: now })
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

async function extractOne({ db, store, now, baseUrl: base }: FileJobContext): Promise<boolean> {
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
    await db.transaction((tx) => finishExtraction(tx, eq(extractions.id, extraction.id), now(), values, null));
  } catch (err) {
    const detail = err instanceof UnreadableDocument ? err.message : 'The document could not be read.';
    await db.transaction((tx) => finishExtraction(tx, eq(extractions.id, extraction.id), now(), null, problemRecord(base, 'validation_failed', 422, 'The document could not be read', detail)));
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
      finishExtraction(tx, eq(extractions.id, id), now, null, problemRecord(base, 'unavailable', 503, 'The extraction was interrupted', 'The process running this extraction stopped; register the document again.')),
    );
  }
}

/** The extraction job: fails the extraction of a rejected document, then runs the queued ones and fails the stale. */
export const extractionJob: FileJob = {
  async scanned(tx, file, verdict, { baseUrl }) {
    if (verdict) {
      await finishExtraction(tx, eq(extractions.fileId, file.id), file.scannedAt!, null, problemRecord(baseUrl, 'invalid_transition', 409, 'The document was rejected', `The document was rejected by the scan: ${verdict}.`));
    }
  },
  async pass(context) {
    while (!context.closed() && (await extractOne(context))) {
      /* next extraction */
    }
    if (context.closed()) return;
    await failStale(context.db, context.now(), context.baseUrl);
  },
};
