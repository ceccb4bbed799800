// The Hono environment shared by the transports mounted on one app (runtime/app.ts): the per-request
// values the app-wide middleware (runtime/http/headers) sets, and the authenticate step both transports
// call. Transport concerns only: the pipeline (runtime/pipeline/) never imports this file.
import type { Context } from 'hono';
import type { RateDecision } from './headers/rate-limit.ts';
import type { TraceContext } from './headers/trace.ts';
import type { Principal } from '../handler-types.ts';

/** Hono environment of the svc app: c.get('requestId') etc. */
export interface AppVariables {
  /** X-Request-Id of this request (the caller's, when it sent a short token, else a new one). */
  requestId: string;
  /** W3C trace context; its header is sent back as traceparent. */
  trace: TraceContext;
  /** The rate-limit decision taken for this request (per credential once authenticated). */
  rateLimit: RateDecision | undefined;
  /** The authenticated caller, once known (for audit of failures after authentication). */
  principal: Principal | undefined;
  /** The app-wide response headers of this request as a plain object (runtime/http/headers commonHeaders). */
  appHeaders: ((c: Context<AppEnv>) => Record<string, string>) | undefined;
  /** Set by a route whose Response already carries appHeaders: the middleware then leaves it alone. */
  appHeadersSent: boolean | undefined;
}

export interface AppEnv {
  Variables: AppVariables;
}

/**
 * Authenticates the request's `Authorization` header (and client IP), then counts it against the
 * credential's rate limit. Resolves to the principal and records it on the context; throws
 * ProblemError unauthorized / invalid_token / not_configured / rate_limited. A failure is audited
 * (transport from the path: /mcp -> mcp, else rest) so that refused calls leave a trace too.
 */
export type RequestAuthenticator = (c: Context<AppEnv>) => Promise<Principal>;
