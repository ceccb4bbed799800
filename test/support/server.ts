// A real svc server for end-to-end tests: a fresh database (PGlite in memory, or a new PostgreSQL
// database when DATABASE_URL is set), the demo seed, and the node server on a free loopback port.
// Everything the server logs is captured (logs) so a test can prove no secret reaches it.
import { loadConfig, type Config } from '../../runtime/config.ts';
import type { Database } from '../../runtime/data/client.ts';
import type { CreateAppOptions, Registry, SvcApp } from '../../runtime/app.ts';
import { startServer, type StartServerOptions } from '../../runtime/server.ts';
import type { SeedCredentials } from '../../demo/seed.ts';
import { loadSeed } from '../../demo/workspace.ts';
import { svcRegistry } from '../../bin/wiring.ts';
import { freshDatabase } from './db.ts';
import { createAuthenticator } from '../../runtime/auth/authenticate.ts';
import { service } from '../../generated/registry.ts';
import { freePort } from './process.ts';

export interface TestServerOptions extends Partial<Config> {
  /** App options; `registry` defaults to the wired one (bin/wiring.ts). */
  app?: Omit<CreateAppOptions, 'database' | 'config' | 'log' | 'registry'> & { registry?: Registry };
  /** Shorter request timeouts than the contract's (slow-client tests). */
  timeouts?: StartServerOptions['timeouts'];
  /** Run the webhook worker in the server (default: when webhooks are enabled). */
  webhookWorker?: boolean;
  /** An already open database (closed with the server); default a fresh one (freshDatabase). */
  database?: Database;
  /** An OpenTelemetry SpanExporter (InMemorySpanExporter): tracing on, spans kept in the test. */
  traceExporter?: StartServerOptions['traceExporter'];
}

export interface TestServer {
  url: string;
  credentials: SeedCredentials;
  database: Database;
  config: Config;
  svc: SvcApp;
  /** The metrics listener (config.observability.metricsPort), or null. */
  metricsUrl: string | null;
  /** What the server logged. */
  logs: string[];
  flushAudit(): Promise<void>;
  close(): Promise<void>;
}

export async function startTestServer(overrides: TestServerOptions = {}): Promise<TestServer> {
  const { app, timeouts, webhookWorker, database: given, traceExporter, ...configOverrides } = overrides;
  const database = given ?? (await freshDatabase());
  const logs: string[] = [];
  try {
    const base = loadConfig({ SVC_VALIDATE_RESPONSES: process.env.SVC_VALIDATE_RESPONSES }, { port: 0, ...configOverrides });
    const server = await startServer({
      config: base,
      database,
      hostname: '127.0.0.1',
      registry: app?.registry ?? svcRegistry(),
      timeouts,
      webhookWorker,
      traceExporter,
      app: { ...app, log: (m) => logs.push(m) },
    });
    // Seeded after the server knows its base URL (the seed may record it, e.g. OAuth audiences).
    const credentials = await (await loadSeed())(database, { baseUrl: server.config.baseUrl });
    return {
      url: server.url,
      credentials,
      database,
      config: server.config,
      svc: server.svc,
      metricsUrl: server.metricsUrl,
      logs,
      flushAudit: () => server.svc.flushAudit(),
      async close() {
        await server.close();
        await database.close();
        // Result validation is on in the suite (vitest.config.ts): a handler whose result does not
        // match the contract fails the file here, with the operation, the pointer and the message.
        const mismatches = logs.filter((line) => line.includes('does not match the contract'));
        if (mismatches.length > 0) throw new Error(`handler results that do not match the contract:\n${mismatches.join('\n')}`);
        // Suite-wide: whatever a test made the server log is one structured line (runtime/observability/log.ts).
        const loose = logs.filter((line) => {
          try {
            const parsed = JSON.parse(line) as { event?: unknown };
            return typeof parsed.event !== 'string';
          } catch {
            return true;
          }
        });
        if (loose.length > 0) throw new Error(`the server logged lines that are not runtime/observability/log.ts JSON: ${loose.slice(0, 3).join(' | ')}`);
      },
    };
  } catch (err) {
    await database.close().catch(() => undefined);
    throw err;
  }
}

/**
 * A test server caught while starting: its port is open but its authenticator is not ready until
 * open() is called (the window in which every request but liveness answers 503).
 */
export async function startGatedTestServer(): Promise<{ port: number; open(): void; started: Promise<TestServer>; closeAuthenticator(): Promise<void> }> {
  const port = await freePort();
  const database = await freshDatabase();
  const config = loadConfig({}, { port });
  const authenticator = createAuthenticator({ db: database.db, database, config, scopes: service.scopes, roleScopes: service.roleScopes });
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const gated = { ...authenticator, ready: () => gate.then(() => authenticator.ready()) };
  const started = startTestServer({ port, database, app: { authenticator: gated } });
  started.catch(() => undefined);
  return { port, open, started, closeAuthenticator: () => authenticator.close() };
}
