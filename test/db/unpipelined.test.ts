// runtime/data/unpipelined.ts: the pooled postgres.js client never has more statements and
// transactions in flight than connections, so postgres.js never pipelines behind PgBouncer.
import { describe, expect, it } from 'vitest';
import { gate, unpipelined } from '../../runtime/data/unpipelined.ts';

const tick = () => new Promise((r) => setTimeout(r, 1));

/** A stand-in for postgres.js's two methods that records how many calls run at once. */
function counting() {
  let now = 0;
  const seen = { most: 0, calls: 0 };
  const pending = <T>(value: T) => {
    now++;
    seen.calls++;
    seen.most = Math.max(seen.most, now);
    return tick().then(() => {
      now--;
      return value;
    });
  };
  const client = {
    // Lazy, as postgres.js's PendingQuery: it runs when awaited or when .values() is awaited.
    unsafe: (query: string) => ({
      then: <A>(ok: (v: unknown) => A, ko: (e: unknown) => A) => pending([{ query }]).then(ok, ko),
      values: () => pending([[query]]),
    }),
    begin: (fn: () => Promise<string>) => pending(null).then(fn),
    end: () => 'passed through',
  };
  return { client, seen };
}

describe('unpipelined', () => {
  it('runs at most max statements and transactions at once, each with its own answer', async () => {
    const { client, seen } = counting();
    const db = unpipelined(client, 3);
    const answers = await Promise.all([
      ...Array.from({ length: 10 }, (_, i) => db.unsafe(`select ${i}`) as PromiseLike<unknown>),
      ...Array.from({ length: 10 }, (_, i) => db.unsafe(`values ${i}`).values()),
      ...Array.from({ length: 5 }, (_, i) => db.begin(async () => `tx ${i}`)),
    ]);
    expect(seen.most).toBe(3);
    expect(seen.calls).toBe(25);
    expect(answers[0]).toEqual([{ query: 'select 0' }]);
    expect(answers[19]).toEqual([['values 9']]);
    expect(answers[24]).toBe('tx 4');
    expect(db.end()).toBe('passed through');
  });

  it('a failing call frees its slot', async () => {
    const run = gate(1);
    await expect(run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(run(() => Promise.resolve('next'))).resolves.toBe('next');
  });
});
