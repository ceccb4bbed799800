// Rate limit: per credential, a fixed window of limits.rateLimitPerMinute requests a minute. Without
// REDIS_URL it is counted here, in memory per instance (with N instances a credential can reach N x
// the limit); with REDIS_URL the credential windows are shared by every instance through Redis
// (shared-rate-limit.ts). Policy in the README (Decisions: Rate limits).
// Requests that carry no usable credential are counted per client IP.
//
// Headers (IETF draft-ietf-httpapi-ratelimit-headers-10 plus the X-RateLimit-* family):
//   RateLimit-Policy: "default";q=600;w=60
//   RateLimit: "default";r=<remaining>;t=<seconds until the window resets>
//   X-RateLimit-Limit: 600, X-RateLimit-Remaining, X-RateLimit-Reset: <epoch seconds of the reset>

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  windowSeconds: number;
  /** Seconds from now until the window resets (>= 1 while a window is open). */
  resetSeconds: number;
  /** Epoch seconds of the reset. */
  resetAt: number;
}

export interface RateLimiterOptions {
  limit: number;
  windowSeconds: number;
  now?: () => number;
}

interface Bucket {
  windowStart: number;
  count: number;
}

export class RateLimiter {
  readonly limit: number;
  readonly windowSeconds: number;
  private readonly now: () => number;
  private readonly buckets = new Map<string, Bucket>();
  private calls = 0;

  constructor(options: RateLimiterOptions) {
    this.limit = options.limit;
    this.windowSeconds = options.windowSeconds;
    this.now = options.now ?? Date.now;
  }

  /** Counts one request against key and says whether it may proceed. */
  take(key: string): RateDecision {
    const now = this.now();
    const windowMs = this.windowSeconds * 1000;
    if (++this.calls % 1000 === 0) this.sweep(now);
    let bucket = this.buckets.get(key);
    if (!bucket || now >= bucket.windowStart + windowMs) {
      bucket = { windowStart: now, count: 0 };
      this.buckets.set(key, bucket);
    }
    const allowed = bucket.count < this.limit;
    if (allowed) bucket.count++;
    const resetMs = bucket.windowStart + windowMs;
    return {
      allowed,
      limit: this.limit,
      remaining: Math.max(0, this.limit - bucket.count),
      windowSeconds: this.windowSeconds,
      resetSeconds: Math.max(1, Math.ceil((resetMs - now) / 1000)),
      resetAt: Math.ceil(resetMs / 1000),
    };
  }

  /** The window of key as it stands, without counting a request (allowed: false when it is used up). */
  peek(key: string): RateDecision {
    const now = this.now();
    const windowMs = this.windowSeconds * 1000;
    const bucket = this.buckets.get(key);
    const open = bucket && now < bucket.windowStart + windowMs ? bucket : { windowStart: now, count: 0 };
    const resetMs = open.windowStart + windowMs;
    return {
      allowed: open.count < this.limit,
      limit: this.limit,
      remaining: Math.max(0, this.limit - open.count),
      windowSeconds: this.windowSeconds,
      resetSeconds: Math.max(1, Math.ceil((resetMs - now) / 1000)),
      resetAt: Math.ceil(resetMs / 1000),
    };
  }

  /** Drops windows that have ended (bounded memory). */
  sweep(now = this.now()): void {
    const windowMs = this.windowSeconds * 1000;
    for (const [key, bucket] of this.buckets) if (now >= bucket.windowStart + windowMs) this.buckets.delete(key);
  }

  get size(): number {
    return this.buckets.size;
  }
}

export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  return {
    'RateLimit-Policy': `"default";q=${d.limit};w=${d.windowSeconds}`,
    RateLimit: `"default";r=${d.remaining};t=${d.resetSeconds}`,
    'X-RateLimit-Limit': String(d.limit),
    'X-RateLimit-Remaining': String(d.remaining),
    'X-RateLimit-Reset': String(d.resetAt),
  };
}

/** The same headers written into `out` under lower-case names (a plain header object on the hot path). */
export function addRateLimitHeaders(out: Record<string, string>, d: RateDecision): Record<string, string> {
  out['ratelimit-policy'] = `"default";q=${d.limit};w=${d.windowSeconds}`;
  out.ratelimit = `"default";r=${d.remaining};t=${d.resetSeconds}`;
  out['x-ratelimit-limit'] = String(d.limit);
  out['x-ratelimit-remaining'] = String(d.remaining);
  out['x-ratelimit-reset'] = String(d.resetAt);
  return out;
}
