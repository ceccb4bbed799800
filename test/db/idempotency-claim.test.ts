// The Tier 1 claim inside the write's transaction (runtime/pipeline/idempotency.ts claimInTransaction,
// docs/writes.md): a new key is claimed by one statement that leaves lock_timeout as it found it; a
// duplicate waits for the first transaction and replays its answer, or, when the first rolls back,
// claims the key itself; a wait longer than CLAIM_WAIT_MS answers the retryable
// idempotency_key_in_progress. The concurrent cases need two connections: PostgreSQL only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { freshDatabase, usingPostgres } from '../support/db.ts';
import { DEFAULT_TRANSACTION_BOUNDS } from '../../runtime/data/transaction-bounds.ts';
import { executeRows, type Database } from '../../runtime/data/client.ts';
import { CLAIM_WAIT_MS, claimInTransaction, completionStatement, fingerprint, type IdempotencyScope } from '../../runtime/pipeline/idempotency.ts';

let database: Database;
beforeAll(async () => {
  // The first request holds its claim idle past CLAIM_WAIT_MS on purpose: no idle bound ends it first.
  database = await freshDatabase({ transactionBounds: { statementMs: DEFAULT_TRANSACTION_BOUNDS.statementMs, idleInTransactionMs: 0 } });
});
afterAll(async () => {
  await database?.close();
});

const scope = (): IdempotencyScope => ({ credentialId: 'cred_claim', operationId: 'tasks.create', key: randomUUID(), fingerprint: fingerprint('tasks.create', { a: 1 }) });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('claiming an Idempotency-Key in the write transaction', () => {
  it('claims a new key and leaves lock_timeout as it was; a later claim replays the stored answer', async () => {
    const s = scope();
    await database.transaction(async (tx) => {
      await executeRows(tx, `select set_config('lock_timeout', '1234ms', true)`);
      const claim = await claimInTransaction(tx, s, 24);
      expect(claim.kind).toBe('new');
      const [{ lock_timeout }] = await executeRows<{ lock_timeout: string }>(tx, `select current_setting('lock_timeout') as lock_timeout`);
      expect(lock_timeout).toBe('1234ms');
      if (claim.kind === 'new') await completionStatement(tx, s, claim.holder, { status: 201, body: { n: 1 }, headers: { ETag: '"x"' } });
    });
    const again = await database.transaction((tx) => claimInTransaction(tx, s, 24));
    expect(again).toEqual({ kind: 'replay', response: { status: 201, body: { n: 1 }, headers: { ETag: '"x"' }, problem: undefined } });
    await expect(database.transaction((tx) => claimInTransaction(tx, { ...s, fingerprint: 'other' }, 24))).rejects.toMatchObject({ code: 'idempotency_key_reused' });
  });

  it.skipIf(!usingPostgres())('a duplicate waits for the first transaction, then replays; after a rollback it claims the key (PostgreSQL)', async () => {
    const s = scope();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = database.transaction(async (tx) => {
      const claim = await claimInTransaction(tx, s, 24);
      if (claim.kind !== 'new') throw new Error('expected a new claim');
      await held;
      await completionStatement(tx, s, claim.holder, { status: 201, body: { first: true }, headers: {} });
    });
    await sleep(100);
    const duplicate = database.transaction((tx) => claimInTransaction(tx, s, 24));
    await sleep(200);
    release();
    await first;
    expect(await duplicate).toMatchObject({ kind: 'replay', response: { status: 201, body: { first: true } } });

    const t = scope();
    let abort!: () => void;
    const aborting = new Promise<void>((r) => (abort = r));
    const rolledBack = database
      .transaction(async (tx) => {
        await claimInTransaction(tx, t, 24);
        await aborting;
        throw new Error('rollback');
      })
      .catch(() => 'rolled back');
    await sleep(100);
    const next = database.transaction((tx) => claimInTransaction(tx, t, 24));
    await sleep(100);
    abort();
    expect(await rolledBack).toBe('rolled back');
    expect((await next).kind).toBe('new');
  });

  it.skipIf(!usingPostgres())('a duplicate that waits longer than CLAIM_WAIT_MS answers idempotency_key_in_progress (PostgreSQL)', async () => {
    const s = scope();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = database.transaction(async (tx) => {
      await claimInTransaction(tx, s, 24);
      await held;
    });
    await sleep(100);
    await expect(database.transaction((tx) => claimInTransaction(tx, s, 24))).rejects.toMatchObject({ code: 'idempotency_key_in_progress' });
    release();
    await first;
  }, CLAIM_WAIT_MS + 10_000);
});
