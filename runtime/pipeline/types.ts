// The seam between transports (REST in runtime/rest, MCP in runtime/mcp) and the one pipeline
// (runtime/pipeline). A transport authenticates, turns its request into a Call, and renders the
// CallResult or the thrown ProblemError in its own way. Everything in between runs once, here.
import type { OperationDef } from '../contract-types.ts';
import type { Principal } from '../handler-types.ts';

export type Transport = 'rest' | 'mcp';

/** The request controls REST carries as headers and MCP as optional tool arguments. */
export interface Controls {
  idempotencyKey: string | null;
  ifMatch: string | null;
  dryRun: boolean;
}

export interface Call {
  op: OperationDef;
  transport: Transport;
  /** MCP tool name as called (svc.tasks.create or its alias), null on REST. */
  toolName: string | null;
  /** The operation's input object, not yet validated (REST: path+query+body merged and coerced). */
  input: Record<string, unknown>;
  controls: Controls;
  principal: Principal;
  requestId: string;
  /** For audit: HTTP method and path as received (paths never carry personal data). */
  method: string;
  path: string;
}

export type Outcome = 'ran' | 'planned' | 'proposed';

export interface Plan {
  operationId: string;
  /** Human-readable effects the write would have. */
  effects: string[];
  /** Event types it would emit. */
  events: string[];
  approvalRequired: boolean;
  /** The result it would have returned, computed in a rolled-back transaction. */
  preview: unknown;
}

export interface CallResult {
  status: number;
  /** Reads: the output. Commands: {outcome:'ran', result} | {outcome:'planned', plan} | {outcome:'proposed', approval}. */
  body: unknown;
  outcome: Outcome | 'read';
  /** ETag, Location, Idempotency-Replayed, ... */
  headers: Record<string, string>;
}

export interface Executor {
  /** Runs the pipeline from operation checks to the handler and audit. Throws ProblemError. */
  execute(call: Call): Promise<CallResult>;
}

// ---------------------------------------------------------------------------------------------
// Shared by the transports mounted on one Hono app (runtime/app.ts): the per-request values the
// app-wide middleware (runtime/headers) sets, and the authenticate step both transports call.

/** Hono environment of the svc app: c.get('requestId') etc. */
export interface AppVariables {
  /** X-Request-Id of this request (the caller's, when it sent a short token, else a new one). */
  requestId: string;
  /** W3C trace context; its header is sent back as traceparent. */
  trace: import('../headers/trace.ts').TraceContext;
  /** The rate-limit decision taken for this request (per credential once authenticated). */
  rateLimit: import('../headers/rate-limit.ts').RateDecision | undefined;
  /** The authenticated caller, once known (for audit of failures after authentication). */
  principal: Principal | undefined;
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
export type RequestAuthenticator = (c: import('hono').Context<AppEnv>) => Promise<Principal>;
