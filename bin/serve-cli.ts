// `svc serve` and `svc seed` (dispatched from bin/cli.ts, which passes the wired registry).
//   svc serve [--demo] [--port N]   opens the database (migrations applied), with --demo seeds the demo
//                                   workspace (created when empty; otherwise only fresh demo keys) and
//                                   prints a demo operator key, then serves until SIGINT/SIGTERM.
//   svc seed [--json]               creates the demo workspace; --json prints the credentials as one line.
import { loadConfig, type Config } from '../runtime/config.ts';
import { openDatabase, type Database } from '../runtime/data/client.ts';
import { MIGRATIONS_FOLDER } from './paths.ts';
import type { Registry } from '../runtime/app.ts';
import type { DemoSeeder, RunningServer } from '../runtime/server.ts';

/** What a project other than this repository changes (bin/project-serve.ts): its migrations and its demo seed. */
export interface ServeProjectOptions {
  /** The project's migration history (absolute); default this repository's. */
  migrationsFolder?: string;
  /** The project's demo seed; default this repository's demo workspace (demo/workspace.ts). */
  seedDemo?: DemoSeeder;
}

const platformSeed: () => Promise<DemoSeeder> = async () => (await import('../demo/workspace.ts')).seedDemoWorkspace;

/** A GET route without parameters to try first: /v1/meta when the contract has it. */
function tryPath(registry: Registry): string | null {
  const gets = registry.routes.filter((r) => r.method === 'GET' && !r.path.includes('{'));
  return (gets.find((r) => r.path === '/v1/meta') ?? gets[0])?.path ?? null;
}

function configFrom(argv: string[]): Config {
  const overrides: Partial<Config> = {};
  const i = argv.indexOf('--port');
  if (i >= 0) {
    const port = Number(argv[i + 1]);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port needs a port number`);
    overrides.port = port;
    if (!process.env.SVC_BASE_URL) overrides.baseUrl = `http://localhost:${port}`;
  }
  return loadConfig(process.env, overrides);
}

/**
 * `svc serve`. The registry may still be loading (a promise): the database is opened (PGlite's start,
 * the migration check) while the server's modules and the registry load, not after them.
 */
export async function runServe(argv: string[], registry: Registry | Promise<Registry>, project: ServeProjectOptions = {}): Promise<number> {
  const demo = argv.includes('--demo');
  let config: Config;
  try {
    config = configFrom(argv);
  } catch (err) {
    console.error(`svc serve: ${(err as Error).message}`);
    return 2;
  }
  const opening = openDatabase({ databaseUrl: config.databaseUrl, directUrl: config.databaseDirectUrl, dataDir: config.dataDir, transactionBounds: config.transactionBounds, preparedStatements: config.preparedStatements, migrationsFolder: project.migrationsFolder ?? MIGRATIONS_FOLDER });
  let database: Database | null = null;
  let wiredRegistry: Registry;
  let server: RunningServer;
  try {
    const [{ startServer }, wired, opened] = await Promise.all([import('../runtime/server.ts'), registry, opening]);
    database = opened;
    wiredRegistry = wired;
    server = await startServer({ config, registry: wired, seedDemo: demo ? (project.seedDemo ?? (await platformSeed())) : undefined, database });
  } catch (err) {
    await (database ?? (await opening.catch(() => null)))?.close().catch(() => undefined);
    console.error(`svc serve: ${(err as Error).message}`);
    return 1;
  }
  const db = database;
  const base = server.config.baseUrl;
  const lines = [
    `svc is serving ${base} (${config.databaseUrl ? 'PostgreSQL' : `PGlite in ${config.dataDir}`}; writes ${config.writesEnabled ? 'on' : 'off'})`,
    `  REST        ${base}/v1${tryPath(wiredRegistry) ? `  (try ${base}${tryPath(wiredRegistry)})` : ''}`,
    `  MCP         ${base}/mcp`,
    `  OpenAPI     ${base}/v1/openapi.json   Agent guide ${base}/v1/agent-guide.md   (bearer credential)`,
    `  Agent map   ${base}/llms.txt   Health ${base}/v1/health (ready)  ${base}/v1/health/live`,
    `  Portal      ${base}/   Interactive reference ${base}/v1/docs`,
    `  ${db.notifications.description}`,
  ];
  if (server.metricsUrl) lines.push(`  Metrics     ${server.metricsUrl}  (SVC_METRICS_PORT; not on the public port)`);
  if (server.tracing) lines.push('  Traces      exported over OTLP/HTTP (OTEL_EXPORTER_OTLP_ENDPOINT)');
  if (server.credentials) {
    const { operatorKey, clientId } = server.credentials;
    const tryIt = tryPath(wiredRegistry);
    lines.push('', `Demo workspace ${server.seededFresh ? 'created' : 'found; fresh demo keys issued'}.`);
    if (operatorKey) {
      lines.push(`Operator API key (every scope; shown once, keep it):`, `  ${operatorKey}`);
      if (tryIt) lines.push(`  curl -H "Authorization: Bearer ${operatorKey}" ${base}${tryIt}`);
    }
    if (clientId) lines.push(`Demo client id: ${clientId}`);
  }
  console.log(lines.join('\n'));
  return new Promise<number>((resolve) => {
    const stop = (signal: string) => {
      console.log(`svc serve: ${signal}, stopping`);
      server
        .close()
        .then(() => db.close())
        .then(
          () => resolve(0),
          () => resolve(1),
        );
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
}

export async function runSeed(argv: string[], registry?: Registry, project: ServeProjectOptions = {}): Promise<number> {
  const json = argv.includes('--json');
  let config: Config;
  try {
    config = configFrom(argv);
  } catch (err) {
    console.error(`svc seed: ${(err as Error).message}`);
    return 2;
  }
  let database;
  try {
    database = await openDatabase({ databaseUrl: config.databaseUrl, directUrl: config.databaseDirectUrl, dataDir: config.dataDir, role: 'seed', transactionBounds: config.transactionBounds, preparedStatements: config.preparedStatements, migrationsFolder: project.migrationsFolder ?? MIGRATIONS_FOLDER });
  } catch (err) {
    console.error(`svc seed: ${(err as Error).message}`);
    return 1;
  }
  try {
    const [{ isEmptyWorkspace }, { installContractFacts, installMigrationsFolder }] = await Promise.all([import('../runtime/server.ts'), import('../runtime/contract-facts.ts')]);
    // The seed runs pipelines and writes problems without an app: it reads the contract from here too.
    if (registry) installContractFacts(registry.service);
    installMigrationsFolder(registry?.migrationsFolder ?? project.migrationsFolder ?? MIGRATIONS_FOLDER);
    const empty = await isEmptyWorkspace(database);
    const credentials = project.seedDemo
      ? await project.seedDemo(database, config, registry!, config.baseUrl)
      : await (await import('../demo/workspace.ts')).seedDemoWorkspace(database, config, registry ?? null);
    if (json) console.log(JSON.stringify(credentials));
    else {
      console.log(`Demo workspace ${empty ? 'created' : 'extended'} in ${config.databaseUrl ? 'PostgreSQL' : config.dataDir}.`);
      for (const [k, v] of Object.entries(credentials)) console.log(`  ${k}: ${String(v)}`);
    }
    return 0;
  } catch (err) {
    console.error(`svc seed: ${(err as Error).message}`);
    return 1;
  } finally {
    await database.close();
  }
}
