// The observability settings of the environment (runtime/config.ts carries them as config.observability).
//   SVC_METRICS_PORT   the port of the metrics listener (GET /metrics); unset: no metrics (prom-client
//                      is never loaded). Never the public PORT: metrics are not served there.
//   SVC_METRICS_HOST   the address it binds, default 127.0.0.1 (loopback); a private interface
//                      (e.g. 0.0.0.0 in a container whose port only Prometheus reaches) when told.
//   SVC_METRICS_TOKEN  when set, the listener answers only `Authorization: Bearer <token>`.
//   OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT   tracing on (the OpenTelemetry
//                      SDK is loaded only then); OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none
//                      keep it off. The SDK reads the other standard OTEL_* variables itself.
//   SVC_HORIZON_WARN_SECONDS   a transaction holding the events feed's horizon longer than this is
//                      named in a warning (horizon-watch.ts); default 10. A number above 0.
//   SVC_HORIZON_CHECK_SECONDS  how often each process reads the horizon for that warning; default 5.

export interface ObservabilityConfig {
  /** The metrics listener's port (0: any free port, for tests); null: metrics off. */
  metricsPort: number | null;
  metricsHost: string;
  metricsToken: string | null;
  /** Export traces over OTLP/HTTP. */
  tracing: boolean;
  /** The horizon watch (PostgreSQL): warn when a transaction holds the feed longer than warnSeconds, read every checkSeconds. */
  horizon: { warnSeconds: number; checkSeconds: number };
}

/** The defaults of SVC_HORIZON_WARN_SECONDS and SVC_HORIZON_CHECK_SECONDS (docs/observability.md). */
export const HORIZON_DEFAULTS = { warnSeconds: 10, checkSeconds: 5 }; // not a contract limit: the horizon watch's defaults

function positiveSeconds(name: string, raw: string | undefined, fallback: number): number {
  const text = raw?.trim();
  if (!text) return fallback;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a number of seconds above 0; got "${text}"`);
  return n;
}

export function observabilityConfigFrom(env: Record<string, string | undefined>, publicPort: number): ObservabilityConfig {
  let metricsPort: number | null = null;
  const raw = env.SVC_METRICS_PORT?.trim();
  if (raw) {
    metricsPort = Number(raw);
    if (!Number.isInteger(metricsPort) || metricsPort < 0 || metricsPort > 65535) throw new Error(`SVC_METRICS_PORT must be a port number; got "${raw}"`);
    if (metricsPort !== 0 && metricsPort === publicPort) {
      throw new Error(`SVC_METRICS_PORT must differ from PORT (${publicPort}): metrics are never served on the public port`);
    }
  }
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const disabled = /^true$/i.test(env.OTEL_SDK_DISABLED?.trim() ?? '') || /^none$/i.test(env.OTEL_TRACES_EXPORTER?.trim() ?? '');
  return {
    metricsPort,
    metricsHost: env.SVC_METRICS_HOST?.trim() || '127.0.0.1',
    metricsToken: env.SVC_METRICS_TOKEN?.trim() || null,
    tracing: Boolean(endpoint) && !disabled,
    horizon: {
      warnSeconds: positiveSeconds('SVC_HORIZON_WARN_SECONDS', env.SVC_HORIZON_WARN_SECONDS, HORIZON_DEFAULTS.warnSeconds),
      checkSeconds: positiveSeconds('SVC_HORIZON_CHECK_SECONDS', env.SVC_HORIZON_CHECK_SECONDS, HORIZON_DEFAULTS.checkSeconds),
    },
  };
}
