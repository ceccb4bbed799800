// The small interface the rest of the runtime calls for metrics and traces (docs/observability.md).
// Nothing here loads prom-client or OpenTelemetry. With metrics and tracing off (the default) every
// metrics hook is an empty function, `inSpan` calls its function directly and `tracing` is null, so
// the request path pays one call to an empty function at most; start.ts swaps in the real ones
// (metrics.ts, tracing.ts), loaded only when SVC_METRICS_PORT or OTEL_EXPORTER_OTLP_ENDPOINT asks.
//
// Metrics and traces are per process (as Prometheus and OpenTelemetry see a process): these are
// module-level switches, not per app.
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from '../http/app-env.ts';
import type { CallResult } from '../pipeline/types.ts';

export type Transport = 'rest' | 'mcp';
/** Which limit refused a request: the credential's window, an address failing authentication, open event streams. */
export type RateLimitKind = 'credential' | 'failed_auth' | 'event_streams';
/** Span attributes: scalar values only, never a body, a secret or personal data. */
export type SpanAttributes = Record<string, string | number | boolean>;

export interface MetricsHooks {
  /**
   * An operation call ended, with its result or the problem thrown (err). `operationId` null: the
   * call was refused before its operation was known (an MCP request refused at authentication).
   * `startedMs` is performance.now() when the call began.
   */
  callEnded(transport: Transport, operationId: string | null, startedMs: number, result: CallResult | null, err?: unknown): void;
  /** Events of a transaction that has committed. */
  eventsCommitted(events: readonly { type: string }[]): void;
  rateLimited(kind: RateLimitKind): void;
  /** A request counted by this process's own window because Redis did not answer. */
  redisFallback(): void;
  /** A database transaction ended: seconds waited for its connection, seconds it ran, committed or not. */
  transactionEnded(waitSeconds: number, runSeconds: number, committed: boolean): void;
  /** A webhook attempt ended (this process sent it, or refused to before sending). */
  webhookAttempt(ok: boolean, seconds: number): void;
}

const NO_METRICS: MetricsHooks = {
  callEnded() {},
  eventsCommitted() {},
  rateLimited() {},
  redisFallback() {},
  transactionEnded() {},
  webhookAttempt() {},
};

/** The metrics hooks: empty functions unless metrics are on. */
export let metrics: MetricsHooks = NO_METRICS;

/** What tracing.ts provides once the OpenTelemetry SDK is loaded. */
export interface Tracing {
  /**
   * Runs fn in a span (a child of the active one); ends it when fn returns or its promise settles.
   * childOnly: only inside a span already (a worker's polling transactions start no trace of their own).
   */
  inSpan<T>(name: string, attributes: SpanAttributes, fn: () => T, childOnly?: boolean): T;
  /**
   * Runs fn in a CLIENT span whose parent is `parent` (a traceparent stored earlier) or else the
   * active span; fn gets the traceparent to send to the peer (it names this span).
   */
  outbound<T>(name: string, attributes: SpanAttributes, parent: string | null, fn: (traceparent: string) => Promise<T>, end: (span: SpanEnd, value: T) => void): Promise<T>;
  /** The traceparent of the active span, or null when there is none. */
  activeTraceparent(): string | null;
  /** Sets attributes on the active span (no-op without one). */
  annotate(attributes: SpanAttributes): void;
  /**
   * The app's middleware (after headers/commonHeaders): a SERVER span per request, continuing the
   * caller's traceparent; c.var.trace then names this span, so the response's traceparent agrees.
   */
  serverSpans(routeOf: RouteOf): MiddlewareHandler<AppEnv>;
}

/** The route template (http.route) a request was served by, and its operation id when it is an operation's route. */
export type RouteOf = (c: Context<AppEnv>) => { route: string; operation: string | null } | null;

/** What `outbound`'s end callback may set on the span before it ends. */
export interface SpanEnd {
  setAttributes(attributes: SpanAttributes): void;
  fail(message: string): void;
}

/** The tracing of this process: null unless tracing is on. */
export let tracing: Tracing | null = null;

/** Runs fn in a span when tracing is on, else just runs it (childOnly: see Tracing.inSpan). */
export function inSpan<T>(name: string, attributes: SpanAttributes, fn: () => T, childOnly = false): T {
  return tracing ? tracing.inSpan(name, attributes, fn, childOnly) : fn();
}

/** True when any of metrics or tracing is on (the database and app wrappers are applied only then). */
export function observing(): boolean {
  return metrics !== NO_METRICS || tracing !== null;
}

/** start.ts: switch metrics on (hooks) or off (null). */
export function setMetricsHooks(hooks: MetricsHooks | null): void {
  metrics = hooks ?? NO_METRICS;
}

/** start.ts: switch tracing on or off (null). */
export function setTracing(value: Tracing | null): void {
  tracing = value;
}

/** What one webhook attempt reports (runtime/events/webhooks/deliveries.ts AttemptOutcome). */
export interface AttemptLike {
  ok: boolean;
  responseStatus: number | null;
  error: string | null;
}

/**
 * One webhook attempt, observed: a CLIENT span (child of `parent`, the traceparent stored with the
 * event, or of the active span) whose traceparent `send` puts on the request, and the attempt
 * metrics. Off: `send({})`.
 */
export async function observeWebhookAttempt<T extends AttemptLike>(parent: string | null, send: (traceHeaders: Record<string, string>) => Promise<T>): Promise<T> {
  if (!observing()) return send({});
  const started = performance.now();
  const outcome = tracing
    ? await tracing.outbound('webhook.attempt', { 'http.request.method': 'POST' }, parent, (traceparent) => send({ traceparent }), (span, o) => {
        if (o.responseStatus !== null) span.setAttributes({ 'http.response.status_code': o.responseStatus });
        if (!o.ok) span.fail(o.responseStatus !== null ? `non-2xx answer (${o.responseStatus})` : 'no answer');
      })
    : await send({});
  metrics.webhookAttempt(outcome.ok, (performance.now() - started) / 1000);
  return outcome;
}
