// runtime/auth/secret-fields.ts on its own: pointers (with `*`), sealing that only the same key, operation
// and field can open, removal, and SVC_SECRET_KEY's checks. The end-to-end rules are in
// test/e2e/secret-fields.test.ts.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config.ts';
import type { Database } from '../../runtime/data/client.ts';
import { createSecretFields, isSealed, withoutSealed, withoutValues } from '../../runtime/auth/secret-fields.ts';
import { freshDatabase } from '../support/db.ts';

const pointers = { 'x.create': ['/secret'], 'x.batch': ['/items/*/token'] };
let database: Database;

beforeAll(async () => {
  database = await freshDatabase();
}, 60_000);
afterAll(async () => {
  await database?.close();
});

describe('secret fields', () => {
  it('seals and opens the pointed members only, including every array item', async () => {
    const box = createSecretFields({ pointers, key: randomBytes(32) });
    await box.ready(database.db);
    const value = { id: 'a', secret: 's3cret-value', other: 's3cret-value-not-pointed' };
    const sealed = box.seal('x.create', value) as typeof value;
    expect(isSealed(sealed.secret)).toBe(true);
    expect(sealed.other).toBe(value.other);
    expect(box.open('x.create', sealed)).toEqual(value);
    expect(value.secret).toBe('s3cret-value'); // the input is not changed

    const batch = { items: [{ token: 't1' }, { token: 't2', keep: 1 }] };
    const sealedBatch = box.seal('x.batch', batch) as typeof batch;
    expect(sealedBatch.items.every((i) => isSealed(i.token))).toBe(true);
    expect(box.open('x.batch', sealedBatch)).toEqual(batch);
    expect(box.strip('x.batch', batch)).toEqual({ items: [{}, { keep: 1 }] });
    expect(box.values('x.batch', batch)).toEqual(['t1', 't2']);
    expect(box.has('x.create')).toBe(true);
    expect(box.has('tasks.create')).toBe(false);
    expect(box.seal('tasks.create', value)).toBe(value);
  });

  it('a sealed value opens only with its key and in its own operation and field', async () => {
    const box = createSecretFields({ pointers: { ...pointers, 'y.create': ['/secret'] }, key: randomBytes(32) });
    await box.ready(database.db);
    const sealed = box.seal('x.create', { secret: 'abc' });
    expect(() => box.open('y.create', sealed)).toThrow();
    const other = createSecretFields({ pointers, key: randomBytes(32) });
    await other.ready(database.db);
    expect(() => other.open('x.create', sealed)).toThrow();
  });

  it('without SVC_SECRET_KEY the key is created once in the database and shared by every instance', async () => {
    const a = createSecretFields({ pointers, key: null });
    const b = createSecretFields({ pointers, key: null });
    expect(() => a.seal('x.create', { secret: 'abc' })).toThrow(/ready/);
    await Promise.all([a.ready(database.db), b.ready(database.db)]);
    expect(b.open('x.create', a.seal('x.create', { secret: 'abc' }))).toEqual({ secret: 'abc' });
  });

  it('removes sealed values and given values at any depth', () => {
    const sealedLooking = 'svc-sealed:v1:AAAA';
    expect(withoutSealed({ a: sealedLooking, b: [sealedLooking, 'x'], c: { d: sealedLooking, e: 1 } })).toEqual({ b: ['x'], c: { e: 1 } });
    expect(withoutValues({ a: 'k', b: { c: 'k', d: 'z' }, e: ['k', 'y'] }, new Set(['k']))).toEqual({ b: { d: 'z' }, e: ['y'] });
  });

  it('SVC_SECRET_KEY takes 32 bytes as hex or base64 and refuses anything else', () => {
    const bytes = randomBytes(32);
    expect(loadConfig({ SVC_SECRET_KEY: bytes.toString('hex') }).secretKey).toEqual(bytes);
    expect(loadConfig({ SVC_SECRET_KEY: bytes.toString('base64') }).secretKey).toEqual(bytes);
    expect(loadConfig({ SVC_SECRET_KEY: bytes.toString('base64url') }).secretKey).toEqual(bytes);
    expect(loadConfig({}).secretKey).toBeNull();
    expect(() => loadConfig({ SVC_SECRET_KEY: 'too-short' })).toThrow(/SVC_SECRET_KEY must be 32 random bytes/);
  });
});
