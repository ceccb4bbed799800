// The byte routes, outside /v1: PUT /uploads/{uploadId} receives an upload through its signed URL
// (streamed to the store and hashed on the way; refused beyond the announced size without keeping
// anything), GET /downloads/{fileId} serves an available file through its signed URL. No bearer
// credential: the signature is the authority. An altered or unknown URL and an expired one answer
// 403 forbidden; an upload that already arrived answers 409 invalid_transition.
// The upload's own time rule: the server's whole-request limit (limits.requestTimeoutSeconds) does
// not cut an upload whose signature checked out; instead the body must keep arriving (no gap between
// chunks longer than limits.uploadIdleTimeoutSeconds) and be complete within
// limits.uploadTimeoutSeconds. Either one exceeded: 408 request_timeout, nothing kept, the connection
// closed, and the same URL can be used again while it is valid.
// On the S3 store a download is a redirect to a presigned GET of the bucket, valid for what is left
// of our own URL's lifetime; on the local store the route streams the bytes.
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { and, eq } from 'drizzle-orm';
import type { Context, Hono } from 'hono';
import { OWN_TIME_RULE } from '../http/headers/client-error.ts';
import { problemResponse } from '../http/rest/problem-response.ts';
import type { Database } from '../data/client.ts';
import { files, uploads } from '../data/schema.ts';
import { errorSummary, logLine } from '../observability/log.ts';
import type { AppEnv } from '../http/app-env.ts';
import { ProblemError } from '../problem-error.ts';
import { checkSignature, DOWNLOAD_PATH, fileUrlSecret, UPLOAD_PATH } from './signing.ts';
import { TooLargeError, type FileStore } from './store.ts';

export interface FileRoutesOptions {
  database: Database;
  store: FileStore;
  log: (line: string) => void;
  baseUrl: string;
  now?: () => Date;
  /** The upload time rule: the contract's limits.uploadIdleTimeoutSeconds and uploadTimeoutSeconds (createApp; tests shorten them). */
  uploadTimeouts: UploadTimeouts;
}

export interface UploadTimeouts {
  idleMs: number;
  totalMs: number;
}

class UploadTimedOut extends Error {
  constructor(readonly which: 'idle' | 'total') {
    super(`upload ${which} timeout`);
  }
}

/**
 * The upload body under the upload time rule: fails with UploadTimedOut when the client sent nothing
 * for idleMs while we were waiting for it (time the store spends writing does not count), or the
 * whole body took longer than totalMs. The generic whole-request timeout is waived for this socket
 * meanwhile (headers/client-error.ts honours OWN_TIME_RULE).
 */
function timedBody(c: Context<AppEnv>, timeouts: UploadTimeouts): { body: AsyncIterable<Uint8Array>; done: () => void } {
  const raw = c.req.raw.body;
  const source = raw ? Readable.fromWeb(raw as import('node:stream/web').ReadableStream<Uint8Array>) : Readable.from([]);
  const socket = ((c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket ?? null) as (Record<symbol, unknown> & object) | null;
  if (socket) socket[OWN_TIME_RULE] = true;
  const total = setTimeout(() => source.destroy(new UploadTimedOut('total')), timeouts.totalMs);
  let idle: NodeJS.Timeout | undefined;
  async function* paced(): AsyncIterable<Uint8Array> {
    const chunks = source[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
    for (;;) {
      idle = setTimeout(() => source.destroy(new UploadTimedOut('idle')), timeouts.idleMs);
      const next = await chunks.next().finally(() => clearTimeout(idle));
      if (next.done) return;
      yield next.value;
    }
  }
  return {
    body: paced(),
    done: () => {
      clearTimeout(idle);
      clearTimeout(total);
      source.destroy();
      if (socket) delete socket[OWN_TIME_RULE];
    },
  };
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
  // A refusal before the whole body was read closes the connection: what is left of the body must
  // not be read as the next request.
  const closing = (c: Context<AppEnv>, problem: ProblemError): Response => {
    const res = problemResponse(c, problem, options.baseUrl);
    res.headers.set('connection', 'close');
    return res;
  };
  const timeouts = options.uploadTimeouts;

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
      return closing(c, new ProblemError('payload_too_large', `This upload may be at most ${row.maxBytes} bytes (the size announced to files.upload_url).`));
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
    const { body, done } = timedBody(c, timeouts);
    try {
      const stored = await store.put(row.storageKey, body, row.maxBytes);
      await db
        .update(uploads)
        .set({ status: 'received', sizeBytes: stored.sizeBytes, sha256: stored.sha256, receivedAt: now() })
        .where(eq(uploads.id, id));
      return c.json({ uploadId: id, sizeBytes: stored.sizeBytes, sha256: stored.sha256 }, 200);
    } catch (err) {
      await db.update(uploads).set({ status: 'pending' }).where(eq(uploads.id, id));
      if (err instanceof TooLargeError) {
        return closing(c, new ProblemError('payload_too_large', `This upload may be at most ${row.maxBytes} bytes (the size announced to files.upload_url).`));
      }
      if (err instanceof UploadTimedOut) {
        const detail =
          err.which === 'idle'
            ? `No bytes arrived for ${timeouts.idleMs / 1000} s (limits.uploadIdleTimeoutSeconds); nothing was kept. PUT the file again to the same URL while it is valid.`
            : `The upload took longer than ${timeouts.totalMs / 1000} s (limits.uploadTimeoutSeconds); nothing was kept. PUT the file again to the same URL while it is valid.`;
        return closing(c, new ProblemError('request_timeout', detail));
      }
      log(logLine('error', 'upload_failed', { uploadId: id, error: errorSummary(err) }));
      throw err;
    } finally {
      done();
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
    const ascii = row.name.replace(/[^\x20-\x7e]|["\\]/g, '_');
    const disposition = `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(row.name)}`;
    if (store.signedDownload) {
      // What is left of our URL's lifetime (its expiry was checked above, so at least a second).
      const expiresInSeconds = Math.max(1, Number(url.searchParams.get('expires')) - Math.floor(now().getTime() / 1000));
      const location = await store.signedDownload(row.storageKey, { expiresInSeconds, contentType: row.contentType, contentDisposition: disposition });
      return new Response(null, { status: 302, headers: { location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' } });
    }
    const stream = await store.stream(row.storageKey);
    return new Response(Readable.toWeb(stream) as ReadableStream, {
      status: 200,
      headers: {
        'content-type': row.contentType,
        'content-length': String(row.sizeBytes),
        'content-disposition': disposition,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
      },
    });
  });
}
