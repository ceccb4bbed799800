// OpenTelemetry traces, loaded only when OTEL_EXPORTER_OTLP_ENDPOINT (or …_TRACES_ENDPOINT) is set:
// the official SDK (sdk-trace-node) with the OTLP/HTTP exporter, which reads the standard variables
// itself (endpoint, headers, timeout; OTEL_TRACES_SAMPLER*, OTEL_BSP_*, OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES are read here through the SDK). Tests give an in-memory exporter instead.
//
// The provider is not registered globally (a test process may start and stop several): spans come
// from this module's tracer, and only the context manager (AsyncLocalStorage) is global, so child
// spans find their parent across awaits. Span attributes follow the semantic conventions
// (http.request.method, http.route, http.response.status_code, db.system) plus svc.operation; no
// request or response body, header value, URL query, secret or personal data is ever recorded.
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context as OtelContext, type Span, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BatchSpanProcessor, NodeTracerProvider, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../http/app-env.ts';
import { parseTraceparent } from '../http/headers/trace.ts';
import { ProblemError } from '../problem-error.ts';
import type { RouteOf, SpanAttributes, SpanEnd, Tracing } from './index.ts';

export interface TracingHandle extends Tracing {
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** Where spans go; default the OTLP/HTTP exporter configured by the OTEL_* variables (batched). */
  exporter?: SpanExporter;
  serviceVersion: string;
}

let contextManager: AsyncLocalStorageContextManager | null = null;

/** The W3C traceparent naming a span (its trace, itself as the parent, its sampled flag). */
export function traceparentOf(span: Span): string {
  const sc = span.spanContext();
  return `00-${sc.traceId}-${sc.spanId}-${sc.traceFlags & 1 ? '01' : '00'}`;
}

/** A context whose parent is the remote span (traceId, spanId) with its sampled flag. */
function remoteContext(traceId: string, spanId: string, flags: string): OtelContext {
  return trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId, traceFlags: parseInt(flags, 16) & 1, isRemote: true });
}

/** A context whose remote parent is the given traceparent (ROOT_CONTEXT when it is absent or invalid). */
function remoteParent(traceparent: string | null | undefined): OtelContext {
  const parsed = parseTraceparent(traceparent);
  return parsed ? remoteContext(parsed.traceId, parsed.parentId, parsed.flags) : ROOT_CONTEXT;
}

/**
 * Marks a span failed by what was thrown. A problem (a refusal the caller caused) and the executor's
 * dry-run rollback are outcomes, not faults: they set error.type only; anything else sets the span's
 * status to ERROR. Only the code or the error's class is recorded, never its message.
 */
function recordThrown(span: Span, err: unknown): void {
  if (err instanceof ProblemError) {
    span.setAttribute('error.type', err.code);
    return;
  }
  if (err instanceof Error && err.message === 'dry-run rollback') {
    span.setAttribute('svc.rolled_back', true);
    return;
  }
  span.setAttribute('error.type', err instanceof Error ? err.name : 'unknown');
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/** Ends the span when the promise settles (after `onValue` saw its value), recording what it threw. */
function endWhenSettled<T>(span: Span, promise: Promise<T>, onValue?: (value: T) => void): Promise<T> {
  return promise.then(
    (value) => {
      onValue?.(value);
      span.end();
      return value;
    },
    (err: unknown) => {
      recordThrown(span, err);
      span.end();
      throw err;
    },
  );
}

export async function startTracing(options: TracingOptions): Promise<TracingHandle> {
  if (!contextManager) {
    contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
  }
  const detected = detectResources({ detectors: [envDetector] });
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': 'svc', 'service.version': options.serviceVersion }))
    .merge(process.env.OTEL_SERVICE_NAME ? resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME }) : null)
    .merge(detected);
  const processor = options.exporter ? new SimpleSpanProcessor(options.exporter) : new BatchSpanProcessor(new OTLPTraceExporter());
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  const tracer: Tracer = provider.getTracer('svc', options.serviceVersion);

  function inSpan<T>(name: string, attributes: SpanAttributes, fn: () => T, kind: SpanKind = SpanKind.INTERNAL, parent: OtelContext = context.active()): T {
    const span = tracer.startSpan(name, { kind, attributes }, parent);
    let value: T;
    try {
      value = context.with(trace.setSpan(parent, span), fn);
    } catch (err) {
      recordThrown(span, err);
      span.end();
      throw err;
    }
    if (value instanceof Promise) return endWhenSettled(span, value) as T;
    span.end();
    return value;
  }

  const handle: TracingHandle = {
    inSpan: (name, attributes, fn, childOnly) => (childOnly && !trace.getSpan(context.active()) ? fn() : inSpan(name, attributes, fn)),

    outbound(name, attributes, parent, fn, end) {
      const base = parent ? remoteParent(parent) : context.active();
      const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, base);
      const spanEnd: SpanEnd = {
        setAttributes: (a) => span.setAttributes(a),
        fail: (message) => span.setStatus({ code: SpanStatusCode.ERROR, message }),
      };
      return endWhenSettled(span, context.with(trace.setSpan(base, span), () => fn(traceparentOf(span))), (value) => end(spanEnd, value));
    },

    activeTraceparent() {
      const span = trace.getSpan(context.active());
      return span ? traceparentOf(span) : null;
    },

    annotate(attributes) {
      trace.getSpan(context.active())?.setAttributes(attributes);
    },

    serverSpans(routeOf: RouteOf): MiddlewareHandler<AppEnv> {
      return async (c, next) => {
        const incoming = c.get('trace');
        const method = c.req.method;
        // The caller's traceparent (already checked by headers/trace.ts) is the remote parent; the
        // response's traceparent then names this span, so the caller and the trace agree.
        const parent = incoming.parentId ? remoteContext(incoming.traceId, incoming.parentId, incoming.flags) : ROOT_CONTEXT;
        const span = tracer.startSpan(method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } }, parent);
        const sc = span.spanContext();
        const flags = sc.traceFlags & 1 ? '01' : '00';
        c.set('trace', { traceId: sc.traceId, spanId: sc.spanId, parentId: incoming.parentId, flags, header: `00-${sc.traceId}-${sc.spanId}-${flags}` });
        try {
          await context.with(trace.setSpan(parent, span), next);
        } finally {
          const route = routeOf(c);
          if (route) {
            span.updateName(`${method} ${route.route}`);
            span.setAttribute('http.route', route.route);
            if (route.operation) span.setAttribute('svc.operation', route.operation);
          }
          const status = c.res.status;
          span.setAttribute('http.response.status_code', status);
          if (status >= 500) {
            span.setAttribute('error.type', String(status));
            span.setStatus({ code: SpanStatusCode.ERROR });
          }
          span.end();
        }
      };
    },

    async shutdown() {
      await provider.shutdown();
    },
  };
  return handle;
}
