// Switches metrics and tracing on for a served process (runtime/server.ts), as config.observability
// says, and off again when the last server of the process closes. prom-client and the OpenTelemetry
// SDK are imported here, and only when asked for: a server with both off loads neither.
import type { Database } from '../data/client.ts';
import { openStreamCount } from '../events/stream.ts';
import type { ObservabilityConfig } from './config.ts';
import { observedDatabase } from './database.ts';
import { inSpan, setMetricsHooks, setTracing } from './index.ts';
import { setStatementObserver } from '../data/statement-observer.ts';
import type { MetricsListener } from './listener.ts';
import type { TracingHandle } from './tracing.ts';

export interface ObservabilityOptions {
  config: ObservabilityConfig;
  database: Database;
  versions: { contractVersion: string; apiVersion: string; eventTypes: readonly string[] };
  /** Report the outbox gauges (the webhook fan-out runs only when webhooks are on). */
  webhooksEnabled: boolean;
  /** Tests: where spans go instead of OTLP (an InMemorySpanExporter); turns tracing on. */
  traceExporter?: unknown;
}

export interface Observability {
  /** The database with its transactions observed (the same object when metrics and tracing are off). */
  database: Database;
  /** Where this server's metrics are scraped, or null. */
  metricsUrl: string | null;
  tracing: boolean;
  close(): Promise<void>;
}

// Per process: how many servers use each, so the last one to close switches it off.
let metricsUsers = 0;
let tracingUsers = 0;
let tracingHandle: Promise<TracingHandle> | null = null;

export async function startObservability(options: ObservabilityOptions): Promise<Observability> {
  const { config } = options;
  const wantTracing = config.tracing || options.traceExporter !== undefined;
  const wantMetrics = config.metricsPort !== null;
  if (!wantTracing && !wantMetrics) return { database: options.database, metricsUrl: null, tracing: false, close: async () => undefined };

  let listener: MetricsListener | null = null;
  let usesTracing = false;
  let usesMetrics = false;
  const close = async () => {
    await listener?.close();
    if (usesMetrics && --metricsUsers === 0) setMetricsHooks(null);
    if (usesTracing && --tracingUsers === 0) {
      const handle = tracingHandle;
      tracingHandle = null;
      setTracing(null);
      setStatementObserver(null);
      await (await handle)?.shutdown().catch(() => undefined);
    }
  };
  try {
    if (wantTracing) {
      tracingHandle ??= import('./tracing.ts').then(({ startTracing }) =>
        startTracing({ exporter: options.traceExporter as Parameters<typeof startTracing>[0]['exporter'], serviceVersion: options.versions.contractVersion }),
      );
      tracingUsers++;
      usesTracing = true;
      setTracing(await tracingHandle);
      // A span per statement inside a traced transaction: a write's time split into its statements.
      setStatementObserver((operation, run) => inSpan('db.statement', { 'db.system': 'postgresql', 'db.operation.name': operation }, run, true));
    }
    if (wantMetrics) {
      const [{ processMetrics }, { startMetricsListener }] = await Promise.all([import('./metrics.ts'), import('./listener.ts')]);
      const made = processMetrics(options.versions);
      made.useDatabase(options.database, { webhooksEnabled: options.webhooksEnabled });
      made.setOpenStreams(openStreamCount);
      metricsUsers++;
      usesMetrics = true;
      setMetricsHooks(made.hooks);
      listener = await startMetricsListener(made.registry, { port: config.metricsPort!, host: config.metricsHost, token: config.metricsToken });
    }
  } catch (err) {
    await close();
    throw err;
  }
  return { database: observedDatabase(options.database), metricsUrl: listener?.url ?? null, tracing: usesTracing, close };
}
