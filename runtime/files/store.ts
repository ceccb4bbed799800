// Where file bytes live, behind one small interface: the local data directory by default
// (`<SVC_DATA_DIR>/files`), or an S3-compatible bucket when SVC_S3_BUCKET is set (s3-store.ts).
// Writes stream and hash on the way (sha256) and stop at a byte limit, so an oversized upload is
// never stored.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';

export class TooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`more than ${maxBytes} bytes`);
  }
}

export interface StoredObject {
  sizeBytes: number;
  sha256: string;
}

export interface DownloadSigning {
  expiresInSeconds: number;
  contentType: string;
  contentDisposition: string;
}

export interface FileStore {
  /** Streams `body` into `key`, hashing it; TooLargeError (nothing kept) beyond maxBytes. */
  put(key: string, body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<StoredObject>;
  read(key: string): Promise<Buffer>;
  stream(key: string): Promise<Readable>;
  exists(key: string): Promise<boolean>;
  remove(key: string): Promise<void>;
  /**
   * A store that serves its bytes itself (S3) signs a GET URL the download route redirects to; a
   * store without it (local) has the route stream the bytes.
   */
  signedDownload?(key: string, options: DownloadSigning): Promise<string>;
  /** Releases connections (S3 client). */
  close?(): void;
}

/** Keys are `uploads/upl_…`: our own ids only, never a caller's name. */
export function safeKey(key: string): string {
  if (!/^[a-z]+\/[A-Za-z0-9_-]+$/.test(key)) throw new Error(`bad storage key ${key}`);
  return key;
}

export class LocalFileStore implements FileStore {
  readonly root: string;

  constructor(dataDir: string) {
    this.root = resolve(dataDir, 'files');
  }

  private path(key: string): string {
    return join(this.root, safeKey(key));
  }

  async put(key: string, body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<StoredObject> {
    const path = this.path(key);
    await mkdir(join(path, '..'), { recursive: true });
    const partial = `${path}.${process.pid}.${Date.now()}.part`;
    const out = createWriteStream(partial, { flags: 'wx' });
    const hash = createHash('sha256');
    let size = 0;
    try {
      for await (const chunk of body) {
        size += chunk.byteLength;
        if (size > maxBytes) throw new TooLargeError(maxBytes);
        hash.update(chunk);
        if (!out.write(chunk)) await new Promise<void>((done, fail) => out.once('drain', done).once('error', fail));
      }
      await new Promise<void>((done, fail) => out.end((err?: Error | null) => (err ? fail(err) : done())));
      await rename(partial, path);
      return { sizeBytes: size, sha256: hash.digest('hex') };
    } catch (err) {
      out.destroy();
      await rm(partial, { force: true });
      throw err;
    }
  }

  read(key: string): Promise<Buffer> {
    return readFile(this.path(key));
  }

  async stream(key: string): Promise<Readable> {
    return createReadStream(this.path(key));
  }

  async exists(key: string): Promise<boolean> {
    try {
      await stat(this.path(key));
      return true;
    } catch {
      return false;
    }
  }

  async remove(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }
}
