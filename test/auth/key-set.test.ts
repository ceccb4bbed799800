// The key-set cache against a real loopback identity provider (and, for the 5 s default, a fake
// timer with an injected fetch that never answers).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { jwtVerify, errors as joseErrors } from 'jose';
import { keySetDefaults, KeySetCache, usableSigningKeys, type FetchLike } from '../../runtime/auth/key-set.ts';
import { ProblemError } from '../../runtime/problem-error.ts';
import { startIdp, type TestIdp } from '../support/idp.ts';

let idp: TestIdp;
let clock: number;
const now = () => clock;

beforeEach(async () => {
  idp = await startIdp();
  clock = Date.parse('2026-11-22T10:00:00Z');
});
afterEach(async () => {
  vi.useRealTimers();
  await idp.close();
});

function cache(extra: Partial<ConstructorParameters<typeof KeySetCache>[0]> = {}) {
  return new KeySetCache({ url: idp.jwksUrl, now, ...extra });
}

async function verify(c: KeySetCache, token: string) {
  return jwtVerify(token, c.getKey, { algorithms: [...c.algorithms] });
}

async function token(kid?: string) {
  return idp.issueToken({ sub: 'u1', aud: 'x', kid });
}

describe('KeySetCache', () => {
  it('uses the spec values by default', () => {
    const c = new KeySetCache({ url: idp.jwksUrl });
    expect(c.timeoutMs).toBe(5000);
    expect(c.retryIntervalMs).toBe(30_000);
    expect(c.refreshIntervalMs).toBe(600_000);
    expect(keySetDefaults().retryAfterSeconds).toBe(30);
  });

  it('fetches once and verifies RS256 and ES256 tokens from the cached set', async () => {
    const c = cache();
    await verify(c, await token());
    await verify(c, await token('ec-1'));
    await verify(c, await token());
    expect(idp.fetchCount()).toBe(1);
    expect(c.status().kids.sort()).toEqual(['ec-1', 'rsa-1']);
  });

  it('with nothing cached answers not_configured with Retry-After: 30, and retries at most every 30 s', async () => {
    idp.setBehaviour('error500');
    const c = cache();
    const t = await token();
    const err = await verify(c, t).catch((e) => e);
    expect(err).toBeInstanceOf(ProblemError);
    expect(err.code).toBe('not_configured');
    expect(err.headers['Retry-After']).toBe('30');
    expect(idp.fetchCount()).toBe(1);
    // Within 30 s: no new fetch, still not_configured.
    clock += 29_000;
    idp.setBehaviour('normal');
    expect((await verify(c, t).catch((e) => e)).code).toBe('not_configured');
    expect(idp.fetchCount()).toBe(1);
    clock += 1_000;
    await verify(c, t);
    expect(idp.fetchCount()).toBe(2);
  });

  it('abandons a hanging endpoint (injected short timeout) and answers not_configured', async () => {
    idp.setBehaviour('hang');
    const c = cache({ timeoutMs: 200 });
    const err = await verify(c, await token()).catch((e) => e);
    expect(err.code).toBe('not_configured');
    expect(c.status().lastError).toMatch(/abandoned after 200 ms/);
  });

  it('abandons a hanging fetch at exactly the 5000 ms default', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let aborted = false;
    const never: FetchLike = (_url, init) =>
      new Promise((_, reject) => {
        init.signal.addEventListener('abort', () => {
          aborted = true;
          reject(new Error('aborted'));
        });
      });
    const c = new KeySetCache({ url: 'http://idp.invalid/jwks', fetch: never, now });
    let settled = false;
    const done = c.refresh().then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(4_999);
    expect(settled).toBe(false);
    expect(aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await done;
    expect(aborted).toBe(true);
    expect(c.status().hasKeys).toBe(false);
    expect(c.status().lastError).toMatch(/5000 ms/);
  });

  it('a hanging endpoint does not lose the cached set', async () => {
    const c = cache({ timeoutMs: 200 });
    const t = await token();
    await verify(c, t);
    idp.setBehaviour('hang');
    clock += keySetDefaults().refreshIntervalMs;
    await verify(c, t); // background refresh starts; the cached set answers
    await c.refresh(); // joins the hanging fetch until it is abandoned
    expect(c.status().lastError).toMatch(/abandoned/);
    await verify(c, t);
    expect(c.status().hasKeys).toBe(true);
  });

  for (const behaviour of ['empty', 'unusable', 'garbage'] as const) {
    it(`a ${behaviour} key set never replaces a good one`, async () => {
      const c = cache();
      const t = await token();
      await verify(c, t);
      idp.setBehaviour(behaviour);
      clock += 31_000;
      expect(await c.refresh()).toBe(true);
      expect(idp.fetchCount()).toBe(2);
      expect(c.status().lastError).toBeTruthy();
      expect(c.status().kids.sort()).toEqual(['ec-1', 'rsa-1']);
      await verify(c, t);
    });
  }

  it('a set without a usable key is not accepted as a first set either', async () => {
    idp.setBehaviour('unusable');
    const c = cache();
    expect((await verify(c, await token()).catch((e) => e)).code).toBe('not_configured');
  });

  it('usableSigningKeys keeps only public signing keys with allowed algorithms', async () => {
    const good = idp.signingKey().publicJwk;
    const keys = await usableSigningKeys({
      keys: [
        good,
        { ...good, kid: 'enc', use: 'enc' },
        { ...good, kid: 'ops', key_ops: ['encrypt'] },
        { ...good, kid: 'hs', alg: 'HS256' },
        { kty: 'oct', kid: 'oct', k: 'AAAA' },
        { ...good, kid: 'broken', n: 'AA' },
        'not a key',
      ],
    });
    expect(keys.map((k) => k.kid)).toEqual(['rsa-1']);
    expect(await usableSigningKeys({ nope: 1 })).toEqual([]);
  });

  it('refetches on an unknown kid (rotation) and then knows the new key', async () => {
    const c = cache();
    await verify(c, await token());
    await idp.rotate({ keepOld: false });
    clock += 31_000;
    await verify(c, await token());
    expect(idp.fetchCount()).toBe(2);
    expect(c.status().kids).toEqual(['rsa-rotated-1']);
  });

  it('an unknown kid within 30 s of the last fetch does not fetch', async () => {
    const c = cache();
    await verify(c, await token());
    const stranger = await token('not-published');
    const err = await verify(c, stranger).catch((e) => e);
    expect(err).toBeInstanceOf(joseErrors.JWKSNoMatchingKey);
    expect(idp.fetchCount()).toBe(1);
  });

  it('failing endpoint under load: 100 concurrent unknown-kid verifications share one fetch per 30 s; the cached set is served', async () => {
    const c = cache();
    const good = await token();
    await verify(c, good);
    idp.setBehaviour('error500');
    idp.resetFetchCount();
    const stranger = await token('not-published');

    clock += 31_000;
    const burst = async () =>
      Promise.allSettled([
        ...Array.from({ length: 100 }, () => verify(c, stranger)),
        ...Array.from({ length: 20 }, () => verify(c, good)),
      ]);
    let results = await burst();
    expect(idp.fetchCount()).toBe(1);
    expect(results.slice(0, 100).every((r) => r.status === 'rejected')).toBe(true);
    expect(results.slice(100).every((r) => r.status === 'fulfilled')).toBe(true);

    clock += 15_000;
    results = await burst();
    expect(idp.fetchCount()).toBe(1);
    expect(results.slice(100).every((r) => r.status === 'fulfilled')).toBe(true);

    clock += 15_000; // 30 s since the last attempt
    await burst();
    expect(idp.fetchCount()).toBe(2);

    // Past the refresh age the periodic refresh is rate-limited the same way.
    clock += keySetDefaults().refreshIntervalMs;
    results = await Promise.allSettled(Array.from({ length: 100 }, () => verify(c, good)));
    await c.refresh();
    expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
    expect(idp.fetchCount()).toBe(3);
  });

  it('refreshes a good set after 10 minutes in the background', async () => {
    const c = cache();
    const t = await token();
    await verify(c, t);
    clock += keySetDefaults().refreshIntervalMs - 1;
    await verify(c, t);
    expect(idp.fetchCount()).toBe(1);
    clock += 1;
    await verify(c, t);
    await c.refresh(); // wait for the background fetch
    expect(idp.fetchCount()).toBe(2);
    expect(c.status().lastSuccessAt).toBe(clock);
  });
});
