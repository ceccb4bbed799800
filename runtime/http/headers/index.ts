// App-wide response headers, applied to EVERY response (errors, unknown routes and /mcp included):
// X-Request-Id, traceparent, the API version (X-Svc-Api-Version unless the contract names another:
// service.apiVersionHeader) and the rate-limit family.
import type { Context, MiddlewareHandler } from 'hono';
import { DEFAULT_API_VERSION_HEADER } from '../../contract-types.ts';
import type { Principal } from '../../handler-types.ts';
import { ProblemError } from '../../problem-error.ts';
import type { AppEnv } from '../app-env.ts';
import { addRateLimitHeaders, RateLimiter, rateLimitHeaders, type RateDecision } from './rate-limit.ts';
import { requestIdFrom, traceContext } from './trace.ts';
import { metrics } from '../../observability/index.ts';

export { RateLimiter, rateLimitHeaders, type RateDecision } from './rate-limit.ts';
export { parseTraceparent, requestIdFrom, traceContext, newRequestId, type TraceContext } from './trace.ts';

export interface CommonHeadersOptions {
  /** service.apiVersion (major.minor), e.g. "1.0". */
  apiVersion: string;
  /** The header apiVersion is sent in (service.apiVersionHeader; default DEFAULT_API_VERSION_HEADER), any case. */
  apiVersionHeader?: string;
  limiter: RateLimiter;
}

/** Client IP as the node server saw it (null under app.request in tests). No proxy header is trusted. */
export function clientIp(c: Context): string | null {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress ?? null;
}

/**
 * Rate decisions taken outside the Hono context (the MCP transport's authenticate callback), keyed
 * by the per-request principal object the transport then records as c.var.principal.
 */
const decisions = new WeakMap<object, RateDecision>();

export function recordDecision(principal: object, decision: RateDecision): void {
  decisions.set(principal, decision);
}

/** The app-wide headers of a response to c, as a plain object (the values commonHeaders writes). */
export type AppHeaders = (c: Context<AppEnv>) => Record<string, string>;

/**
 * The first middleware of the app. Sets c.var.requestId / trace before anything runs and writes
 * the headers after everything ran. A request that never reached an authenticated stage (public
 * documents, unknown routes, 401s) is counted against its client IP's window.
 *
 * A route on the hot path (REST's successful answers) can build its Response with these headers
 * already in a plain object (c.var.appHeaders, then c.var.appHeadersSent = true): @hono/node-server
 * then writes it without materialising a Headers object, which the profile showed costs more than
 * the route itself.
 */
export function commonHeaders(options: CommonHeadersOptions): MiddlewareHandler<AppEnv> {
  const { apiVersion, limiter } = options;
  const versionHeader = (options.apiVersionHeader ?? DEFAULT_API_VERSION_HEADER).toLowerCase();
  /** The rate decision of the request: its credential's once authenticated, else its IP's (counted now). */
  const decisionOf = (c: Context<AppEnv>): RateDecision => {
    const principal = c.get('principal');
    return c.get('rateLimit') ?? (principal ? decisions.get(principal) : undefined) ?? limiter.take(`ip:${clientIp(c) ?? 'unknown'}`);
  };
  const appHeaders: AppHeaders = (c) =>
    addRateLimitHeaders({ 'x-request-id': c.get('requestId'), traceparent: c.get('trace').header, [versionHeader]: apiVersion }, decisionOf(c));
  return async (c, next) => {
    const requestId = requestIdFrom(c.req.header('x-request-id'));
    const trace = traceContext(c.req.header('traceparent'));
    c.set('requestId', requestId);
    c.set('trace', trace);
    c.set('appHeaders', appHeaders);
    await next();
    if (c.get('appHeadersSent')) return;
    const headers = c.res.headers;
    headers.set('X-Request-Id', requestId);
    headers.set('traceparent', trace.header);
    headers.set(versionHeader, apiVersion);
    // A 429 already carries the headers of the decision that refused it.
    if (headers.has('RateLimit')) return;
    for (const [name, value] of Object.entries(rateLimitHeaders(decisionOf(c)))) headers.set(name, value);
  };
}

/**
 * Counts an authenticated request against its credential's window and records the decision for
 * the headers. Throws 429 rate_limited (Retry-After = seconds to the reset) when the window is used up.
 */
export function limitCredential(c: Context<AppEnv> | null, limiter: RateLimiter, principal: Principal): RateDecision {
  return settleDecision(c, principal, limiter.take(credentialKey(principal)));
}

/** The rate-limit key of a principal's credential. */
export function credentialKey(principal: Principal): string {
  return `cred:${principal.credentialId}`;
}

/** Records a credential's rate decision (however it was taken) for the headers; throws 429 rate_limited when refused. */
export function settleDecision(c: Context<AppEnv> | null, principal: Principal, decision: RateDecision): RateDecision {
  c?.set('rateLimit', decision);
  recordDecision(principal, decision);
  if (!decision.allowed) {
    metrics.rateLimited('credential');
    throw new ProblemError('rate_limited', `This credential may make ${decision.limit} requests every ${decision.windowSeconds} s; retry after ${decision.resetSeconds} s.`, {
      headers: { ...rateLimitHeaders(decision), 'Retry-After': String(decision.resetSeconds) },
    });
  }
  return decision;
}
