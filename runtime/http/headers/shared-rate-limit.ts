// The per-credential rate limit shared across server processes (REDIS_URL): rate-limiter-flexible's
// RateLimiterRedis over one ioredis connection, the same fixed window as the in-process RateLimiter
// (limits.rateLimitPerMinute requests a minute per credential), counted atomically in Redis, so N
// processes behind one load balancer give a credential the limit once, not N times.
//
// Redis down or slow (decision, README "Rate limit"): fail open to this process's own window. The
// library's insurance limiter (RateLimiterMemory, same points and window) answers while Redis does
// not, so requests go on, limited per process as without REDIS_URL, and one warning is logged per
// outage (rate_limit_redis_unavailable; rate_limit_redis_restored when it is back). A limiter
// outage never turns every request into a 503.
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { errorSummary, logLine } from '../../observability/log.ts';
import { metrics } from '../../observability/index.ts';
import type { RateDecision } from './rate-limit.ts';

export interface CredentialLimiter {
  /** Spends `units` of key's window and says whether the request may proceed. */
  take(key: string, units?: number): Promise<RateDecision>;
  /** Resolves once the store answers, or has failed (then the per-process fallback serves): await before serving. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export interface RedisLimiterOptions {
  url: string;
  limit: number;
  windowSeconds: number;
  log: (line: string) => void;
  /** Prefix of the Redis keys (default "svc:rl"). */
  keyPrefix?: string;
  /** A Redis command slower than this counts as Redis being down (default 1 s). */
  commandTimeoutMs?: number;
}

function decision(res: RateLimiterRes, allowed: boolean, limit: number, windowSeconds: number): RateDecision {
  const ms = Math.max(0, res.msBeforeNext);
  return {
    allowed,
    limit,
    remaining: Math.max(0, res.remainingPoints),
    windowSeconds,
    resetSeconds: Math.max(1, Math.ceil(ms / 1000)),
    resetAt: Math.ceil((Date.now() + ms) / 1000),
  };
}

export function redisCredentialLimiter(options: RedisLimiterOptions): CredentialLimiter {
  const { limit, windowSeconds, log } = options;
  const client = new Redis(options.url, {
    // Fail fast instead of queueing while disconnected: the insurance limiter answers then.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs ?? 1_000, // not a contract limit
    connectTimeout: 2_000, // not a contract limit
    retryStrategy: (times) => Math.min(times * 200, 2_000), // not a contract limit: reconnect back-off
  });
  let down = false;
  // Settled by the first 'ready' or 'error' (a server must not count alone only because it started
  // taking requests before its Redis connection was up).
  const connected = new Promise<void>((resolve) => {
    client.once('ready', () => resolve());
    client.once('error', () => resolve());
  });
  client.on('error', (err: Error) => {
    if (down) return;
    down = true;
    log(logLine('warn', 'rate_limit_redis_unavailable', { error: errorSummary(err), fallback: 'per-process limit' }));
  });
  client.on('ready', () => {
    if (!down) return;
    down = false;
    log(logLine('info', 'rate_limit_redis_restored', {}));
  });
  const insurance = new RateLimiterMemory({ points: limit, duration: windowSeconds });
  const consumeHere = insurance.consume.bind(insurance);
  insurance.consume = (...args) => (metrics.redisFallback(), consumeHere(...args)); // counted: svc_rate_limit_redis_fallbacks_total
  const limiter = new RateLimiterRedis({
    storeClient: client,
    points: limit,
    duration: windowSeconds,
    keyPrefix: options.keyPrefix ?? 'svc:rl',
    rejectIfRedisNotReady: true,
    insuranceLimiter: insurance,
  });
  return {
    async take(key, units = 1) {
      try {
        return decision(await limiter.consume(key, units), true, limit, windowSeconds);
      } catch (err) {
        if (err instanceof RateLimiterRes) return decision(err, false, limit, windowSeconds);
        throw err;
      }
    },
    ready: () => connected,
    async close() {
      client.disconnect();
    },
  };
}
