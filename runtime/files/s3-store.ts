// The S3-compatible store (SVC_S3_BUCKET): the same FileStore interface over @aws-sdk/client-s3, so
// that several machines share one set of files. Uploads still arrive through our upload route
// (runtime/files/routes.ts), which checks the signature and hashes the bytes; this store streams them
// on to the bucket: one PutObject for a small upload, a multipart upload in PART_BYTES parts for a
// large one. The byte limit is counted on the way, exactly as in the local store: past it the
// multipart upload is aborted, so nothing of an oversized upload is ever stored. A single PutObject
// carries its sha256 (x-amz-checksum-sha256), so a store that checks checksums refuses altered bytes.
// Downloads are signed by the bucket itself (@aws-sdk/s3-request-presigner): our download route checks
// our own signed URL and redirects to a short presigned GET, so the bytes never pass through us.
import { Readable } from 'node:stream';
import { createRequire } from 'node:module';
import type * as S3Sdk from '@aws-sdk/client-s3';
import type { CompletedPart, S3Client } from '@aws-sdk/client-s3';
import type * as S3Presigner from '@aws-sdk/s3-request-presigner';
import type { S3Config } from '../config.ts';
import { Meter, safeKey, type DownloadSigning, type FileStore, type StoredObject } from './store.ts';

// The AWS SDK takes about a third of a second to import: it is loaded when an S3 store is made (the
// first S3FileStore), not with every server. Both packages are CommonJS, so require() loads them
// synchronously, and a caller's own `import … from '@aws-sdk/client-s3'` gets the same module.
const requireCjs = createRequire(import.meta.url);
let sdk: { s3: typeof S3Sdk; presigner: typeof S3Presigner } | null = null;
function awsSdk(): { s3: typeof S3Sdk; presigner: typeof S3Presigner } {
  return (sdk ??= { s3: requireCjs('@aws-sdk/client-s3') as typeof S3Sdk, presigner: requireCjs('@aws-sdk/s3-request-presigner') as typeof S3Presigner });
}
const s3 = (): typeof S3Sdk => awsSdk().s3;

/** Multipart part size: S3 wants at least 5 MiB for every part but the last. */
const PART_BYTES = 8 * 1024 * 1024; // not a contract limit

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NotFound' || e?.name === 'NoSuchKey' || e?.$metadata?.httpStatusCode === 404;
}

export class S3FileStore implements FileStore {
  readonly client: S3Client;
  readonly bucket: string;
  private readonly prefix: string;

  constructor(config: S3Config) {
    this.bucket = config.bucket;
    this.prefix = config.prefix;
    this.client = new (s3().S3Client)({
      region: config.region,
      ...(config.endpoint ? { endpoint: config.endpoint } : {}),
      forcePathStyle: config.forcePathStyle,
      ...(config.credentials ? { credentials: config.credentials } : {}),
      // Checksums only where S3 requires them: many S3-compatible servers do not read the SDK's
      // default CRC32 trailers (aws-chunked bodies). Our own sha256 is sent on PutObject.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  /** The object key of a storage key (`uploads/upl_…` under the optional prefix). */
  objectKey(key: string): string {
    return `${this.prefix}${safeKey(key)}`;
  }

  async put(key: string, body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<StoredObject> {
    const Key = this.objectKey(key);
    const meter = new Meter(maxBytes);
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let uploadId: string | undefined;
    const parts: CompletedPart[] = [];
    const flush = async (): Promise<void> => {
      uploadId ??= (await this.client.send(new (s3().CreateMultipartUploadCommand)({ Bucket: this.bucket, Key }))).UploadId!;
      const PartNumber = parts.length + 1;
      const Body = Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      const out = await this.client.send(new (s3().UploadPartCommand)({ Bucket: this.bucket, Key, UploadId: uploadId, PartNumber, Body, ContentLength: Body.length }));
      parts.push({ PartNumber, ETag: out.ETag });
    };
    try {
      for await (const chunk of meter.pass(body)) {
        pending.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        pendingBytes += chunk.byteLength;
        if (pendingBytes >= PART_BYTES) await flush();
      }
      const digest = meter.digest();
      if (uploadId === undefined) {
        const Body = Buffer.concat(pending, pendingBytes);
        await this.client.send(new (s3().PutObjectCommand)({ Bucket: this.bucket, Key, Body, ContentLength: Body.length, ChecksumSHA256: digest.toString('base64') }));
      } else {
        if (pendingBytes > 0) await flush();
        await this.client.send(new (s3().CompleteMultipartUploadCommand)({ Bucket: this.bucket, Key, UploadId: uploadId, MultipartUpload: { Parts: parts } }));
      }
      return meter.stored();
    } catch (err) {
      if (uploadId !== undefined) {
        await this.client.send(new (s3().AbortMultipartUploadCommand)({ Bucket: this.bucket, Key, UploadId: uploadId })).catch(() => undefined);
      }
      throw err;
    }
  }

  async read(key: string): Promise<Buffer> {
    const out = await this.client.send(new (s3().GetObjectCommand)({ Bucket: this.bucket, Key: this.objectKey(key) }));
    return Buffer.from(await out.Body!.transformToByteArray());
  }

  async stream(key: string): Promise<Readable> {
    const out = await this.client.send(new (s3().GetObjectCommand)({ Bucket: this.bucket, Key: this.objectKey(key) }));
    return out.Body as Readable;
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new (s3().HeadObjectCommand)({ Bucket: this.bucket, Key: this.objectKey(key) }));
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  async remove(key: string): Promise<void> {
    await this.client.send(new (s3().DeleteObjectCommand)({ Bucket: this.bucket, Key: this.objectKey(key) }));
  }

  /** A presigned GET of the object, naming the file and its type in the response headers. */
  signedDownload(key: string, options: DownloadSigning): Promise<string> {
    const command = new (s3().GetObjectCommand)({
      Bucket: this.bucket,
      Key: this.objectKey(key),
      ResponseContentType: options.contentType,
      ResponseContentDisposition: options.contentDisposition,
      ResponseCacheControl: 'no-store',
    });
    return awsSdk().presigner.getSignedUrl(this.client, command, { expiresIn: Math.max(1, Math.floor(options.expiresInSeconds)) });
  }

  close(): void {
    this.client.destroy();
  }
}
