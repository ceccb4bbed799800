// An S3-compatible server for the tests: s3rver on a free loopback port, with one bucket, its files in
// a temporary directory. s3rver checks a presigned URL's expiry but not its v4 signature, and serves
// objects without credentials: the tests prove our own signed URLs guard the bytes, whatever the store.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { S3Config } from '../../runtime/config.ts';

interface S3rverInstance {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;

export interface TestS3 {
  endpoint: string;
  bucket: string;
  /** The config a server uses to store its files in this bucket (under `prefix`). */
  config(prefix?: string): S3Config;
  /** The environment that says the same (SVC_S3_BUCKET and the AWS variables). */
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startS3(bucket = 'svc-files'): Promise<TestS3> {
  const S3rver = createRequire(import.meta.url)('s3rver') as S3rverClass;
  const directory = mkdtempSync(join(tmpdir(), 'svc-s3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  // s3rver's one account.
  const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
  return {
    endpoint,
    bucket,
    config: (prefix = '') => ({ bucket, prefix, region: 'us-east-1', endpoint, forcePathStyle: true, credentials }),
    env: { SVC_S3_BUCKET: bucket, AWS_REGION: 'us-east-1', AWS_ENDPOINT_URL_S3: endpoint, AWS_ACCESS_KEY_ID: credentials.accessKeyId, AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey },
    async close() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
