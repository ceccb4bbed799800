// The byte routes, outside /v1: PUT /uploads/{uploadId} receives an upload through its signed URL
// (streamed to the store and hashed on the way; refused beyond the announced size without keeping
// anything), GET /downloads/{fileId} serves an available file through its signed URL. No bearer
// credential: the signature is the authority. An altered or unknown URL and an expired one answer
// 403 forbidden; an upload that already arrived answers 409 invalid_transition.
import { Readable } from 'node:stream';
import { and, eq } from 'drizzle-orm';
import type { Hono } from 'hono';
import type { Database } from '../db/client.ts';
import { files, uploads } from '../db/schema.ts';
import { errorSummary, logLine } from '../log.ts';
import type { AppEnv } from '../app-env.ts';
import { ProblemError } from '../problem-error.ts';
import { checkSignature, DOWNLOAD_PATH, fileUrlSecret, UPLOAD_PATH } from './signing.ts';
import { TooLargeError, type FileStore } from './store.ts';

export interface FileRoutesOptions {
  database: Database;
  store: FileStore;
  log: (line: string) => void;
  now?: () => Date;
}

function refused(check: 'invalid' | 'expired'): ProblemError {
  return new ProblemError('forbidden', check === 'expired' ? 'This signed URL has expired; ask for a new one.' : 'This URL is not a valid signed URL.');
}

function mediaType(value: string | null | undefined): string {
  return (value ?? '').split(';')[0]!.trim().toLowerCase();
}

export function mountFileRoutes(app: Hono<AppEnv>, options: FileRoutesOptions): void {
  const { database, store, log } = options;
  const db = database.db;
  const now = options.now ?? (() => new Date());

  app.put(`${UPLOAD_PATH}/:uploadId`, async (c) => {
    const id = c.req.param('uploadId');
    const url = new URL(c.req.url);
    const [row] = /^[A-Za-z0-9_-]{1,64}$/.test(id) ? await db.select().from(uploads).where(eq(uploads.id, id)) : [];
    if (!row) throw refused('invalid');
    const check = checkSignature(await fileUrlSecret(db), 'PUT', `${UPLOAD_PATH}/${id}`, url.searchParams, row.maxBytes, now());
    if (check !== 'ok') throw refused(check);
    if (row.status !== 'pending') throw new ProblemError('invalid_transition', `Upload ${id} has already been received.`);
    const declared = c.req.header('content-length');
    if (declared !== undefined && Number(declared) > row.maxBytes) {
      throw new ProblemError('payload_too_large', `This upload may be at most ${row.maxBytes} bytes (the size announced to files.upload_url).`);
    }
    if (mediaType(c.req.header('content-type')) !== mediaType(row.contentType)) {
      throw new ProblemError('unsupported_media_type', `Send Content-Type: ${row.contentType}, as announced to files.upload_url.`);
    }
    // Claim the slot so two requests to one URL cannot both write it.
    const [claimed] = await db
      .update(uploads)
      .set({ status: 'receiving' })
      .where(and(eq(uploads.id, id), eq(uploads.status, 'pending')))
      .returning({ id: uploads.id });
    if (!claimed) throw new ProblemError('invalid_transition', `Upload ${id} is already being received.`);
    const body = c.req.raw.body;
    try {
      const stored = await store.put(row.storageKey, body ? Readable.fromWeb(body as import('node:stream/web').ReadableStream<Uint8Array>) : Readable.from([]), row.maxBytes);
      await db
        .update(uploads)
        .set({ status: 'received', sizeBytes: stored.sizeBytes, sha256: stored.sha256, receivedAt: now() })
        .where(eq(uploads.id, id));
      return c.json({ uploadId: id, sizeBytes: stored.sizeBytes, sha256: stored.sha256 }, 200);
    } catch (err) {
      await db.update(uploads).set({ status: 'pending' }).where(eq(uploads.id, id));
      if (err instanceof TooLargeError) {
        throw new ProblemError('payload_too_large', `This upload may be at most ${row.maxBytes} bytes (the size announced to files.upload_url).`);
      }
      log(logLine('error', 'upload_failed', { uploadId: id, error: errorSummary(err) }));
      throw err;
    }
  });

  app.get(`${DOWNLOAD_PATH}/:fileId`, async (c) => {
    const id = c.req.param('fileId');
    const url = new URL(c.req.url);
    const [row] = /^[A-Za-z0-9_-]{1,64}$/.test(id) ? await db.select().from(files).where(eq(files.id, id)) : [];
    if (!row) throw refused('invalid');
    const check = checkSignature(await fileUrlSecret(db), 'GET', `${DOWNLOAD_PATH}/${id}`, url.searchParams, 0, now());
    if (check !== 'ok') throw refused(check);
    if (row.status !== 'available') throw new ProblemError('invalid_transition', `File ${id} is ${row.status}, not available.`);
    const stream = await store.stream(row.storageKey);
    const ascii = row.name.replace(/[^\x20-\x7e]|["\\]/g, '_');
    return new Response(Readable.toWeb(stream) as ReadableStream, {
      status: 200,
      headers: {
        'content-type': row.contentType,
        'content-length': String(row.sizeBytes),
        'content-disposition': `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(row.name)}`,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
      },
    });
  });
}
