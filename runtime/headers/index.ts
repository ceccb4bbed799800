// App-wide response headers, applied to EVERY response (errors, unknown routes and /mcp included):
// X-Request-Id, traceparent, X-Svc-Api-Version and the rate-limit family.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context, MiddlewareHandler } from 'hono';
import type { Principal } from '../handler-types.ts';
import { ProblemError } from '../problem-error.ts';
import type { AppEnv } from '../pipeline/types.ts';
import { RateLimiter, rateLimitHeaders, type RateDecision } from './rate-limit.ts';
import { requestIdFrom, traceContext } from './trace.ts';

export { RateLimiter, rateLimitHeaders, type RateDecision } from './rate-limit.ts';
export { parseTraceparent, requestIdFrom, traceContext, newRequestId, type TraceContext } from './trace.ts';

export interface CommonHeadersOptions {
  /** service.apiVersion (major.minor), e.g. "1.0". */
  apiVersion: string;
  limiter: RateLimiter;
}

/** Client IP as the node server saw it (null under app.request in tests). No proxy header is trusted. */
export function clientIp(c: Context): string | null {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress ?? null;
}

/** Per-request store, for stages that run without the Hono context (the MCP authenticate callback). */
export interface RequestStore {
  requestId: string;
  method: string;
  /** Path as received. */
  path: string;
  rateLimit: RateDecision | undefined;
}
const requestStore = new AsyncLocalStorage<RequestStore>();

/** The current request (inside the app's middleware), or undefined. */
export function currentRequest(): RequestStore | undefined {
  return requestStore.getStore();
}

/**
 * The first middleware of the app. Sets c.var.requestId / trace before anything runs and writes
 * the headers after everything ran. A request that never reached an authenticated stage (public
 * documents, unknown routes, 401s) is counted against its client IP's window.
 */
export function commonHeaders(options: CommonHeadersOptions): MiddlewareHandler<AppEnv> {
  const { apiVersion, limiter } = options;
  return async (c, next) => {
    const requestId = requestIdFrom(c.req.header('x-request-id'));
    const trace = traceContext(c.req.header('traceparent'));
    c.set('requestId', requestId);
    c.set('trace', trace);
    const store: RequestStore = { requestId, method: c.req.method, path: new URL(c.req.url).pathname, rateLimit: undefined };
    await requestStore.run(store, next);
    const decision = c.get('rateLimit') ?? store.rateLimit ?? limiter.take(`ip:${clientIp(c) ?? 'unknown'}`);
    const headers = c.res.headers;
    headers.set('X-Request-Id', requestId);
    headers.set('traceparent', trace.header);
    headers.set('X-Svc-Api-Version', apiVersion);
    for (const [name, value] of Object.entries(rateLimitHeaders(decision))) headers.set(name, value);
  };
}

/**
 * Counts an authenticated request against its credential's window and records the decision for
 * the headers. Throws 429 rate_limited (Retry-After = seconds to the reset) when the window is used up.
 */
export function limitCredential(c: Context<AppEnv> | null, limiter: RateLimiter, principal: Principal): RateDecision {
  const decision = limiter.take(`cred:${principal.credentialId}`);
  c?.set('rateLimit', decision);
  const store = requestStore.getStore();
  if (store) store.rateLimit = decision;
  if (!decision.allowed) {
    throw new ProblemError('rate_limited', `This credential may make ${decision.limit} requests every ${decision.windowSeconds} s; retry after ${decision.resetSeconds} s.`, {
      headers: { 'Retry-After': String(decision.resetSeconds) },
    });
  }
  return decision;
}
