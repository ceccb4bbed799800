// The Redis-shared credential limiter (headers/shared-rate-limit.ts) loaded only when REDIS_URL asks
// for it: ioredis and rate-limiter-flexible cost about a third of a second of start-up to import, and
// most servers never use them. Same CredentialLimiter: the connection is made as soon as the module
// has loaded, and ready() (awaited by startServer before serving) waits for both.
import type { CredentialLimiter, RedisLimiterOptions } from './shared-rate-limit.ts';

export function lazyRedisCredentialLimiter(options: RedisLimiterOptions): CredentialLimiter {
  let loaded: CredentialLimiter | null = null;
  const limiter = import('./shared-rate-limit.ts').then(({ redisCredentialLimiter }) => (loaded = redisCredentialLimiter(options)));
  return {
    take: (key, units) => (loaded ? loaded.take(key, units) : limiter.then((l) => l.take(key, units))),
    ready: () => limiter.then((l) => l.ready()),
    close: () => limiter.then((l) => l.close()),
  };
}
