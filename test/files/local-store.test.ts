// LocalFileStore.put under faults: a body that fails while a write is still in flight (a timed-out
// or cut upload) leaves no partial file, raises no stray stream error after the call has returned,
// and the key stays absent; a body over the limit is TooLargeError; a whole body lands with its
// sha256 and size.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalFileStore, TooLargeError } from '../../runtime/files/store.ts';

let dir: string;
let store: LocalFileStore;
const stray: unknown[] = [];
const onStray = (err: unknown) => stray.push(err);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-local-store-'));
  store = new LocalFileStore(dir);
  process.on('uncaughtException', onStray);
});
afterAll(() => {
  process.off('uncaughtException', onStray);
  rmSync(dir, { recursive: true, force: true });
});

const settle = () => new Promise((r) => setTimeout(r, 100));
const leftovers = () => readdirSync(join(dir, 'files', 'uploads'));

describe('LocalFileStore.put', () => {
  it('a body that fails just after a small chunk (a write still in flight) keeps nothing and raises nothing later', async () => {
    for (let i = 0; i < 50; i++) {
      async function* failing() {
        yield Buffer.alloc(1024, 1);
        throw new Error('upload cut');
      }
      await expect(store.put(`uploads/upl_fail${i}`, failing(), 1 << 20)).rejects.toThrow('upload cut');
    }
    await settle();
    expect(stray).toEqual([]);
    expect(leftovers()).toEqual([]);
    expect(await store.exists('uploads/upl_fail0')).toBe(false);
  });

  it('a body that fails before its first byte keeps nothing', async () => {
    async function* failing(): AsyncGenerator<Uint8Array> {
      throw new Error('no bytes');
    }
    await expect(store.put('uploads/upl_empty', failing(), 1 << 20)).rejects.toThrow('no bytes');
    await settle();
    expect(stray).toEqual([]);
    expect(leftovers()).toEqual([]);
  });

  it('a body over the limit is TooLargeError and keeps nothing', async () => {
    async function* big() {
      for (let i = 0; i < 4; i++) yield Buffer.alloc(1000, i);
    }
    await expect(store.put('uploads/upl_big', big(), 2500)).rejects.toBeInstanceOf(TooLargeError);
    await settle();
    expect(stray).toEqual([]);
    expect(leftovers()).toEqual([]);
  });

  it('a whole body lands with its size and sha256', async () => {
    const parts = [Buffer.from('hello '), Buffer.alloc(70_000, 7), Buffer.from('end')];
    async function* body() {
      yield* parts;
    }
    const stored = await store.put('uploads/upl_ok', body(), 1 << 20);
    const all = Buffer.concat(parts);
    expect(stored).toEqual({ sizeBytes: all.length, sha256: createHash('sha256').update(all).digest('hex') });
    expect(readFileSync(join(dir, 'files', 'uploads', 'upl_ok')).equals(all)).toBe(true);
    expect(leftovers()).toEqual(['upl_ok']);
  });
});
