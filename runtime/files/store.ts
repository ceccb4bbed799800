// Where file bytes live, behind one small interface: the local data directory by default
// (`<SVC_DATA_DIR>/files`), or an S3-compatible bucket when SVC_S3_BUCKET is set (s3-store.ts).
// Writes stream and hash on the way (sha256) and stop at a byte limit, so an oversized upload is
// never stored.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

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

/** Counts and hashes a body on its way to a store; past `maxBytes` it throws TooLargeError. */
export class Meter {
  private size = 0;
  private readonly hash = createHash('sha256');

  constructor(private readonly maxBytes: number) {}

  async *pass(body: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
    for await (const chunk of body) {
      this.size += chunk.byteLength;
      if (this.size > this.maxBytes) throw new TooLargeError(this.maxBytes);
      this.hash.update(chunk);
      yield chunk;
    }
  }

  private digested?: Buffer;

  /** The raw sha256 once the body has passed whole (S3 sends it as a checksum). */
  digest(): Buffer {
    return (this.digested ??= this.hash.digest());
  }

  /** The size and sha256 (hex) once the body has passed whole. */
  stored(): StoredObject {
    return { sizeBytes: this.size, sha256: this.digest().toString('hex') };
  }
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
    const meter = new Meter(maxBytes);
    try {
      // pipeline, not write() by hand: a body that fails while a write is in flight destroys the
      // file stream with its error handled (no stray ERR_STREAM_DESTROYED after we have answered).
      await pipeline(meter.pass(body), out);
      await rename(partial, path);
      return meter.stored();
    } catch (err) {
      // The file may still be opening or writing: remove it only once its descriptor is closed,
      // or a late open would leave a .part file behind.
      if (!out.closed) await new Promise<void>((done) => out.once('close', () => done()));
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
