// The identity provider's key set, cached by us around jose's createLocalJWKSet.
//
// jose's createRemoteJWKSet does not keep the last good set after its cache age and has no cooldown
// after a failed fetch (PITFALLS.md), so the spec's rules (Authentication 11, Limits) live here:
// - a fetch is abandoned after 5 s (AbortController + timer; a fetch that ignores the signal is
//   raced against the same timer);
// - a fetched set replaces the cached one only when it holds at least one usable signing key
//   (kty RSA (>= 2048 bits)/EC/OKP, use absent or "sig", key_ops absent or containing "verify", an allowed alg, a
//   public key that imports); only the usable keys are kept;
// - fetches are single-flight and rate-limited: at most one fetch starts per 30 s (retryIntervalMs),
//   whatever triggered it (first use, unknown kid, periodic refresh) and whether it failed or not;
// - while a fetch fails, the cached set keeps being served;
// - the good set is refreshed every 10 min (in the background, the request is not held up) and
//   on a token whose kid the cached set does not know (awaited, so a rotated key works at once);
// - with no set cached: ProblemError not_configured with Retry-After: 30.
import { createLocalJWKSet, importJWK, type JSONWebKeySet, type JWK, type JWSHeaderParameters, type FlattenedJWSInput } from 'jose';
import { errors as joseErrors } from 'jose';
import { ProblemError } from '../problem-error.ts';
import { contractLimits } from '../contract-facts.ts';

/** The production values (the installed contract's limits); tests override them only where a test says so. */
export function keySetDefaults() {
  const limits = contractLimits();
  return {
    /** A hanging key-set fetch is abandoned after this (limits.jwksFetchTimeoutSeconds). */
    timeoutMs: limits.jwksFetchTimeoutSeconds * 1000,
    /** At most one fetch starts per this interval, failure retry and rate limit (limits.jwksRetryIntervalSeconds). */
    retryIntervalMs: limits.jwksRetryIntervalSeconds * 1000,
    /** A good set is refetched once it is this old. */
    refreshIntervalMs: 600_000,
    /** Retry-After (seconds) on not_configured (limits.notConfiguredRetryAfterSeconds). */
    retryAfterSeconds: limits.notConfiguredRetryAfterSeconds,
  };
}

/** Asymmetric JWS algorithms we verify. Never "none", never HMAC. */
export const ALLOWED_ALGS: readonly string[] = Object.freeze([
  'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519',
]);

export type FetchLike = (input: string, init: { signal: AbortSignal; headers?: Record<string, string> }) => Promise<Response>;

export interface KeySetCacheOptions {
  url: string;
  fetch?: FetchLike;
  /** Milliseconds since the epoch. */
  now?: () => number;
  timeoutMs?: number;
  retryIntervalMs?: number;
  refreshIntervalMs?: number;
  algorithms?: readonly string[];
  /** Called with a short reason when a fetch fails or a set is refused (never with key material). */
  onProblem?: (reason: string) => void;
}

export interface KeySetStatus {
  hasKeys: boolean;
  kids: string[];
  /** Fetches started (successful or not). */
  fetches: number;
  lastAttemptAt: number | null;
  lastSuccessAt: number | null;
  lastError: string | null;
}

function notConfigured(detail: string): ProblemError {
  return new ProblemError('not_configured', detail, {
    headers: { 'Retry-After': String(keySetDefaults().retryAfterSeconds) },
  });
}

const DEFAULT_ALG_BY_KTY: Record<string, (jwk: JWK) => string | undefined> = {
  RSA: () => 'RS256',
  EC: (jwk) => ({ 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' } as Record<string, string>)[jwk.crv ?? ''],
  OKP: (jwk) => (jwk.crv === 'Ed25519' ? 'EdDSA' : undefined),
};

/** The keys of a fetched document that can verify our tokens (empty when none can). */
export async function usableSigningKeys(doc: unknown, algorithms: readonly string[] = ALLOWED_ALGS): Promise<JWK[]> {
  if (!doc || typeof doc !== 'object' || !Array.isArray((doc as { keys?: unknown }).keys)) return [];
  const usable: JWK[] = [];
  for (const raw of (doc as { keys: unknown[] }).keys) {
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) continue;
    const jwk = raw as JWK;
    if (jwk.kty !== 'RSA' && jwk.kty !== 'EC' && jwk.kty !== 'OKP') continue;
    if (jwk.use !== undefined && jwk.use !== 'sig') continue;
    if (jwk.key_ops !== undefined && !(Array.isArray(jwk.key_ops) && jwk.key_ops.includes('verify'))) continue;
    if ('d' in jwk || 'p' in jwk || 'k' in jwk) continue; // private material published: not a key we trust
    // jose refuses RSA keys under 2048 bits at verification; such a key is not usable.
    if (jwk.kty === 'RSA' && (typeof jwk.n !== 'string' || Buffer.from(jwk.n, 'base64url').length < 256)) continue;
    const alg = jwk.alg ?? DEFAULT_ALG_BY_KTY[jwk.kty]?.(jwk);
    if (!alg || !algorithms.includes(alg)) continue;
    try {
      await importJWK({ ...jwk, ext: true }, alg);
    } catch {
      continue;
    }
    usable.push(jwk);
  }
  return usable;
}

type LocalSet = ReturnType<typeof createLocalJWKSet>;

export class KeySetCache {
  readonly url: string;
  readonly timeoutMs: number;
  readonly retryIntervalMs: number;
  readonly refreshIntervalMs: number;
  readonly algorithms: readonly string[];
  private readonly fetchImpl: FetchLike;
  private readonly now: () => number;
  private readonly onProblem: (reason: string) => void;
  private local: LocalSet | null = null;
  private kids: string[] = [];
  private inFlight: Promise<void> | null = null;
  private fetches = 0;
  private lastAttemptAt: number | null = null;
  private lastSuccessAt: number | null = null;
  private lastError: string | null = null;
  private closed = false;

  constructor(options: KeySetCacheOptions) {
    this.url = options.url;
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
    this.now = options.now ?? Date.now;
    const defaults = keySetDefaults();
    this.timeoutMs = options.timeoutMs ?? defaults.timeoutMs;
    this.retryIntervalMs = options.retryIntervalMs ?? defaults.retryIntervalMs;
    this.refreshIntervalMs = options.refreshIntervalMs ?? defaults.refreshIntervalMs;
    this.algorithms = options.algorithms ?? ALLOWED_ALGS;
    this.onProblem = options.onProblem ?? (() => {});
  }

  status(): KeySetStatus {
    return {
      hasKeys: this.local !== null,
      kids: [...this.kids],
      fetches: this.fetches,
      lastAttemptAt: this.lastAttemptAt,
      lastSuccessAt: this.lastSuccessAt,
      lastError: this.lastError,
    };
  }

  /** True when a new fetch may start now (nothing in flight is checked separately). */
  private mayFetch(): boolean {
    return !this.closed && (this.lastAttemptAt === null || this.now() - this.lastAttemptAt >= this.retryIntervalMs);
  }

  /**
   * Fetch now if the rate limit allows, or join the fetch in flight. Resolves when that fetch is
   * over (never rejects: a failure keeps the cached set). Returns false when no fetch was allowed.
   */
  refresh(): Promise<boolean> {
    if (this.inFlight) return this.inFlight.then(() => true);
    if (!this.mayFetch()) return Promise.resolve(false);
    this.lastAttemptAt = this.now();
    this.fetches += 1;
    const flight = this.fetchOnce()
      .catch((error: unknown) => {
        this.lastError = error instanceof Error ? error.message : String(error);
        this.onProblem(`key set fetch failed: ${this.lastError}`);
      })
      .finally(() => {
        if (this.inFlight === flight) this.inFlight = null;
      });
    this.inFlight = flight;
    return flight.then(() => true);
  }

  private async fetchOnce(): Promise<void> {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new Error(`key set fetch abandoned after ${this.timeoutMs} ms`));
      }, this.timeoutMs);
    });
    try {
      const doc = await Promise.race([
        (async () => {
          const response = await this.fetchImpl(this.url, { signal: controller.signal, headers: { accept: 'application/json' } });
          if (!response.ok) throw new Error(`key set endpoint answered ${response.status}`);
          return (await response.json()) as unknown;
        })(),
        timeout,
      ]);
      const keys = await usableSigningKeys(doc, this.algorithms);
      if (keys.length === 0) throw new Error('key set has no usable signing key; keeping the cached set');
      const set: JSONWebKeySet = { keys };
      this.local = createLocalJWKSet(set);
      this.kids = keys.map((k) => k.kid ?? '').filter(Boolean);
      this.lastSuccessAt = this.now();
      this.lastError = null;
    } finally {
      clearTimeout(timer);
      timeout.catch(() => {});
    }
  }

  /** Key resolver for jose's jwtVerify. Throws ProblemError not_configured when nothing is cached. */
  readonly getKey = async (protectedHeader: JWSHeaderParameters, token: FlattenedJWSInput) => {
    if (!this.local) {
      await this.refresh();
      if (!this.local) throw notConfigured('Token verification has no usable key set yet; retry later.');
    } else if (this.lastSuccessAt !== null && this.now() - this.lastSuccessAt >= this.refreshIntervalMs) {
      void this.refresh(); // background: the cached set answers this request
    }
    const local = this.local;
    try {
      return await local(protectedHeader, token);
    } catch (error) {
      if (!(error instanceof joseErrors.JWKSNoMatchingKey)) throw error;
      // Unknown kid: perhaps the provider rotated. Refetch (rate-limited, shared) and look again.
      const fetched = await this.refresh();
      if (!fetched || this.local === local) throw error;
      return this.local!(protectedHeader, token);
    }
  };

  close(): void {
    this.closed = true;
  }
}
