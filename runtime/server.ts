// The HTTP server: the svc app on @hono/node-server. Port 0 takes a free port; the base URL then
// follows the port actually bound (unless SVC_BASE_URL set one).
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { createApp, type CreateAppOptions, type Registry, type SvcApp } from './app.ts';
import type { Config } from './config.ts';
import { openDatabase, type Database } from './data/client.ts';
import { answerClientErrors } from './http/headers/client-error.ts';
import { newRequestId } from './http/headers/trace.ts';
import { PROBLEM_MEDIA_TYPE, problemBody, problemHeaders } from './problem-documents.ts';
import { ProblemError } from './problem-error.ts';
import { errorSummary, logLine, stderrLog } from './observability/log.ts';
import { startWebhookWorker, type WebhookWorker } from './events/webhooks/worker.ts';
import { startEventHub } from './events/stream.ts';
import type { StandardLimits } from './contract-types.ts';
import { installContractFacts, installMigrationsFolder } from './contract-facts.ts';
import { startWorkers, type RunningWorker } from './workers.ts';
import { startObservability, type Observability } from './observability/start.ts';
import { LIVE_PATH, livenessResponse } from './observability/health.ts';
import { startHorizonWatch } from './observability/horizon-watch.ts';

/**
 * What a project's demo seeder returns and `svc seed --json` prints: its own values (the Platform API's
 * are demo/seed.ts SeedCredentials). The banner shows operatorKey, an API key to try the API with, and
 * clientId, a client that key's tenancy examples use, when the seeder gives them.
 */
export interface SeedCredentials {
  operatorKey?: string;
  clientId?: string;
}

/** True when the database holds no users yet (a fresh workspace). */
export async function isEmptyWorkspace(database: Database): Promise<boolean> {
  const [row] = await database.execute<{ n: number | string }>('select count(*) as n from users');
  return Number(row?.n ?? 0) === 0;
}

/**
 * Seeds the demo workspace (demo/workspace.ts seedDemoWorkspace): the library holds no demo data, so whoever
 * wants the demo passes its seeder.
 */
export type DemoSeeder<C extends SeedCredentials = SeedCredentials> = (database: Database, config: Config, registry: Registry, baseUrl: string) => Promise<C>;

export interface StartServerOptions<C extends SeedCredentials = SeedCredentials> {
  config: Config;
  /** The generated registry with its handlers (bin/wiring.ts svcRegistry, or a test's fixture). */
  registry: Registry;
  /**
   * Seed the demo workspace: created when the database is empty; on an existing one the seed is
   * idempotent and only issues fresh demo keys (a key secret cannot be shown twice).
   */
  seedDemo?: DemoSeeder<C>;
  /** An already open database (tests); otherwise opened from config and closed with the server. */
  database?: Database;
  /** Bind address; default 0.0.0.0 (127.0.0.1 for tests). */
  hostname?: string;
  app?: Omit<CreateAppOptions, 'database' | 'config' | 'registry'>;
  /** How long a client may take to send its headers and its whole request; default the contract's limits (tests shorten them). */
  timeouts?: Partial<RequestTimeouts>;
  /** Run the webhook worker in this process (default: when webhooks are enabled); tests drive their own. */
  webhookWorker?: boolean;
  /** Tests: an OpenTelemetry SpanExporter (InMemorySpanExporter) that turns tracing on instead of OTLP. */
  traceExporter?: unknown;
}

export interface RequestTimeouts {
  headersMs: number;
  requestMs: number;
}

/** The contract's limits.requestHeadersTimeoutSeconds and limits.requestTimeoutSeconds. */
export function contractTimeouts(limits: Pick<StandardLimits, 'requestHeadersTimeoutSeconds' | 'requestTimeoutSeconds'>): RequestTimeouts {
  return { headersMs: limits.requestHeadersTimeoutSeconds * 1000, requestMs: limits.requestTimeoutSeconds * 1000 };
}

export interface RunningServer<C extends SeedCredentials = SeedCredentials> {
  url: string;
  port: number;
  config: Config;
  database: Database;
  svc: SvcApp;
  /** The registry's background workers running in this process, by name (none when SVC_WORKERS=false). */
  workers: ReadonlyMap<string, RunningWorker>;
  /** Set when this start seeded the demo workspace (fresh demo keys). */
  credentials?: C;
  /** True when the demo workspace was created by this start (the database was empty). */
  seededFresh: boolean;
  /** The metrics listener's URL (SVC_METRICS_PORT), or null when metrics are off. */
  metricsUrl: string | null;
  /** True when this process exports traces. */
  tracing: boolean;
  close(): Promise<void>;
}

/**
 * What a request gets before the app is ready (the port opens first): 503 unavailable, a problem
 * document with Retry-After; the liveness check answers (the process is alive, only not ready).
 */
function startingProblem(request: Request, baseUrl: string): Response {
  if (new URL(request.url).pathname === LIVE_PATH) return livenessResponse();
  const err = new ProblemError('unavailable', 'The service is starting; retry in a few seconds.');
  const body = problemBody(err, new URL(request.url).pathname, newRequestId(), baseUrl);
  return new Response(JSON.stringify(body), { status: body.status, headers: { ...problemHeaders(err), 'Content-Type': PROBLEM_MEDIA_TYPE } });
}

export async function startServer<C extends SeedCredentials = SeedCredentials>(options: StartServerOptions<C>): Promise<RunningServer<C>> {
  // Before the port opens: the 503s answered while starting read the problem catalogue.
  installContractFacts(options.registry.service);
  installMigrationsFolder(options.registry.migrationsFolder);
  const ownDatabase = !options.database;
  const opened = options.database ?? (await openDatabase({ databaseUrl: options.config.databaseUrl, directUrl: options.config.databaseDirectUrl, dataDir: options.config.dataDir, transactionBounds: options.config.transactionBounds, preparedStatements: options.config.preparedStatements, migrationsFolder: options.registry.migrationsFolder }));
  // Metrics and tracing, when configured (loaded while the port opens); their database wrapper
  // observes every transaction of the server, workers included.
  const observing = startObservability({
    config: options.config.observability,
    database: opened,
    versions: options.registry.service,
    webhooksEnabled: options.config.webhooksEnabled,
    traceExporter: options.traceExporter,
  });
  observing.catch(() => undefined);
  let observability: Observability | null = null;
  let database = opened;
  let svc: SvcApp | null = null;
  /** The app requests go to: set once its authenticator and shared limiter are ready (503 until then). */
  let serving: SvcApp | null = null;
  let server: ServerType | null = null;
  let config: Config | null = null;
  try {
    const timeouts = { ...contractTimeouts(options.registry.service.limits), ...options.timeouts };
    const port = await new Promise<number>((resolve, reject) => {
      server = serve(
        {
          fetch: (request, env) => (serving ? serving.app.fetch(request, env) : startingProblem(request, options.config.baseUrl)),
          port: options.config.port,
          hostname: options.hostname ?? '0.0.0.0',
          // Slow clients are cut (408 request_timeout, headers/client-error.ts): headers within
          // headersMs, the whole request (body included) within requestMs. Node checks every
          // connectionsCheckingInterval, so keep that well under the shorter one.
          serverOptions: {
            headersTimeout: timeouts.headersMs,
            requestTimeout: timeouts.requestMs,
            connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(timeouts.headersMs / 4))), // not a contract limit
          },
        },
        (info: AddressInfo) => resolve(info.port),
      );
      server.once('error', reject);
      answerClientErrors(server, () => config?.baseUrl ?? options.config.baseUrl);
    });
    const explicitBase = options.config.port !== 0 || process.env.SVC_BASE_URL;
    const baseUrl = explicitBase ? options.config.baseUrl : `http://127.0.0.1:${port}`;
    config = { ...options.config, port, baseUrl };
    let credentials: C | undefined;
    let seededFresh = false;
    if (options.seedDemo) {
      seededFresh = await isEmptyWorkspace(database);
      credentials = await options.seedDemo(database, config, options.registry, baseUrl);
    }
    observability = await observing;
    database = observability.database;
    svc = createApp({ ...options.app, registry: options.registry, database, config });
    // Not ready (GET /v1/health 503) until the workers below have started.
    svc.readiness.setWorkers('starting');
    await svc.authenticator.ready();
    // With REDIS_URL, a request counted before the Redis connection is up would be counted by this
    // process alone (headers/shared-rate-limit.ts): serve only once it is.
    await svc.sharedLimiter?.ready();
    serving = svc;
    const log = options.app?.log ?? stderrLog;
    const worker: WebhookWorker | null =
      (options.webhookWorker ?? config.webhooksEnabled)
        ? startWebhookWorker({
            db: database.workers.db,
            onError: (err) => log(logLine('error', 'webhook_worker_failed', { error: errorSummary(err) })),
            log,
          })
        : null;
    // One LISTEN on svc_events per process for every open event stream.
    const stopHub = await startEventHub(database, { stallMs: config.eventStreamStallSeconds * 1000 });
    // The API's background workers (Registry.workers, runtime/workers.ts).
    const backgroundWorkers = startWorkers(config.workersEnabled ? (options.registry.workers ?? []) : [], {
      database: database.workers,
      config,
      log: options.app?.log ?? stderrLog,
    });
    const running = svc;
    // The outbound-message outbox is delivered only when a sender is configured (SVC_SMTP_URL);
    // outbox.ts (nodemailer) is loaded only then.
    const { smtpUrl, smtpFrom } = config;
    const delivery = smtpUrl
      ? await import('./events/outbox.ts').then(({ mailSender, startDeliveryLoop }) =>
          startDeliveryLoop(database.workers, mailSender(smtpUrl, smtpFrom), { log: options.app?.log ?? stderrLog, hooks: options.registry.outbox }),
        )
      : null;
    // Names the transaction that holds the events feed back (PostgreSQL: PGlite's one connection cannot be held).
    const horizonWatch =
      database.kind === 'postgres' ? startHorizonWatch({ database: database.workers, ...config.observability.horizon, log: options.app?.log ?? stderrLog }) : null;
    svc.readiness.setWorkers('ok');
    const httpServer = server!;
    const observed = observability;
    let closed = false;
    return {
      url: `http://127.0.0.1:${port}`,
      port,
      config,
      database,
      svc: running,
      workers: backgroundWorkers.running,
      credentials,
      seededFresh,
      metricsUrl: observed.metricsUrl,
      tracing: observed.tracing,
      async close() {
        if (closed) return;
        closed = true;
        running.readiness.setWorkers('stopping');
        await backgroundWorkers.stop();
        await new Promise<void>((resolve) => {
          (httpServer as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
          httpServer.close(() => resolve());
        });
        await delivery?.stop();
        await horizonWatch?.stop();
        await worker?.stop();
        await stopHub();
        await running.close();
        await observed.close();
        if (ownDatabase) await database.close();
      },
    };
  } catch (err) {
    if (server) (server as ServerType).close();
    await svc?.close().catch(() => undefined);
    await (observability ?? (await observing.catch(() => null)))?.close().catch(() => undefined);
    if (ownDatabase) await database.close().catch(() => undefined);
    throw err;
  }
}
