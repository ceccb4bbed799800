// The svc application: one Hono app with the app-wide headers middleware, the REST routes of the
// generated registry, the MCP endpoint, the published documents, 404/405 and error handling.
import { readFileSync, readdirSync } from 'node:fs';
import { Hono } from 'hono';
import { getPath } from 'hono/utils/url';
import { createAuthenticator, credentialInUrl, type Authenticator } from './auth/authenticate.ts';
import { Auditor } from './audit.ts';
import { purgeExpiredIdempotency } from './idempotency.ts';
import type { Config } from './config.ts';
import type { McpToolDef, OperationDef, ServiceDef } from './contract-types.ts';
import type { Database } from './db/client.ts';
import { mountDocuments } from './documents.ts';
import type { Principal } from './handler-types.ts';
import { clientIp, commonHeaders, limitCredential, RateLimiter } from './headers/index.ts';
import { MCP_PATH, mountMcp } from './mcp/index.ts';
import { createExecutor, type AnyHandler, type PipelineDeps, type PipelineExecutor } from './pipeline/executor.ts';
import type { AppEnv, RequestAuthenticator } from './pipeline/types.ts';
import type { ValidateFn } from './pipeline/validate.ts';
import { ProblemError } from './problem-error.ts';
import { isUnexpected, problemBody, problemStatus, registerProblemCatalogue, toProblemError } from './problems.ts';
import { mountRest, notFoundHandler, type RestRoute } from './rest/index.ts';
import { problemResponse } from './rest/problem.ts';
import { rewriteRequestPath } from './route-path.ts';
import { operationsById as generatedOperations, secretPointers as generatedSecretPointers, service as generatedService } from '../generated/registry.ts';
import { routes as generatedRoutes } from '../generated/routes.ts';
import { mcpTools as generatedTools } from '../generated/mcp-tools.ts';
import { validators as generatedValidators } from '../generated/validators.js';
import { handlers as generatedHandlers } from '../handlers/index.ts';
import { createSecretFields, type SecretPointers } from './secret-fields.ts';

export interface Registry {
  service: ServiceDef;
  operationsById: Readonly<Record<string, OperationDef>>;
  validators: Readonly<Record<string, ValidateFn>>;
  routes: readonly RestRoute[];
  tools: readonly McpToolDef[];
  handlers: Readonly<Record<string, AnyHandler>>;
  /** Each operation's bearer-secret pointers (x-svc-secret fields of its result). */
  secretPointers: SecretPointers;
}

export interface CreateAppOptions {
  database: Database;
  config: Config;
  /** Default: createAuthenticator over the database and the generated scopes. */
  authenticator?: Authenticator;
  /** Replace parts of the generated registry (tests: fixture operations and handlers). */
  registry?: Partial<Registry>;
  /** Default limits.rateLimitPerMinute a minute. */
  rateLimit?: { limit?: number; windowSeconds?: number };
  /** Unexpected errors and background failures; default console.error. Never receives a body or secret. */
  log?: (message: string) => void;
  now?: () => Date;
  /** How an approval's proposer is rebuilt at approval time (default: from the database). */
  rebuildProposer?: PipelineDeps['rebuildProposer'];
}

export interface SvcApp {
  app: Hono<AppEnv>;
  executor: PipelineExecutor;
  auditor: Auditor;
  authenticator: Authenticator;
  limiter: RateLimiter;
  /** Writes queued audit entries (tests read the table after it). */
  flushAudit(): Promise<void>;
  close(): Promise<void>;
}

const GENERATED_DIR = new URL('../generated/', import.meta.url);

function readGenerated(path: string): string {
  return readFileSync(new URL(path, GENERATED_DIR), 'utf8');
}

export function generatedRegistry(): Registry {
  return {
    service: generatedService,
    operationsById: generatedOperations,
    validators: generatedValidators as Readonly<Record<string, ValidateFn>>,
    routes: generatedRoutes,
    tools: generatedTools,
    handlers: generatedHandlers as unknown as Readonly<Record<string, AnyHandler>>,
    secretPointers: generatedSecretPointers,
  };
}

export function createApp(options: CreateAppOptions): SvcApp {
  const { database, config } = options;
  const registry: Registry = { ...generatedRegistry(), ...options.registry };
  const { service } = registry;
  const log = options.log ?? ((m: string) => console.error(m));
  registerProblemCatalogue(service.problems);

  const ownAuthenticator = !options.authenticator;
  const authenticator =
    options.authenticator ??
    createAuthenticator({
      db: database.db,
      database,
      config,
      scopes: service.scopes,
      roleScopes: service.roleScopes,
      onEvent: () => undefined,
    });
  const limiter = new RateLimiter({
    limit: options.rateLimit?.limit ?? config.rateLimitPerMinute ?? service.limits.rateLimitPerMinute,
    windowSeconds: options.rateLimit?.windowSeconds ?? 60,
  });
  const auditor = new Auditor(database, { log });
  const executor = createExecutor({
    database,
    config,
    service,
    operationsById: registry.operationsById,
    validators: registry.validators,
    handlers: registry.handlers,
    secrets: createSecretFields({ pointers: registry.secretPointers, key: config.secretKey }),
    auditor,
    log,
    now: options.now,
    rebuildProposer: options.rebuildProposer,
  });

  /** Authorization header (never a URL credential) -> principal, then the credential's rate limit. */
  async function authenticateRequest(authorization: string | undefined, ip: string | null, url: string): Promise<Principal> {
    if (url.includes('?') && credentialInUrl(url)) {
      throw new ProblemError('unauthorized', 'A credential goes only in the Authorization: Bearer header, never in a URL.');
    }
    // A fresh object per request: the authenticator may hand out one cached principal, and the
    // rate decision is recorded against this request's principal (headers/index.ts).
    const principal = { ...(await authenticator.authenticate(authorization, ip)) };
    limitCredential(null, limiter, principal);
    return principal;
  }

  const authenticateRest: RequestAuthenticator = async (c) => {
    const principal = await authenticateRequest(c.req.header('authorization'), clientIp(c), c.req.url);
    c.set('principal', principal);
    return principal;
  };

  const app = new Hono<AppEnv>({ getPath: (request) => rewriteRequestPath(getPath(request)) });
  app.use(commonHeaders({ apiVersion: service.apiVersion, limiter }));

  mountDocuments(app, {
    config,
    service,
    database,
    authenticate: authenticateRest,
    openapi: JSON.parse(readGenerated('openapi.json')) as Record<string, unknown>,
    agentGuide: readGenerated('docs/agent-guide.md'),
    llmsTxt: readGenerated('docs/llms.txt'),
    references: Object.fromEntries(
      readdirSync(new URL('docs/reference/', GENERATED_DIR))
        .filter((f) => f.endsWith('.md'))
        .sort()
        .map((f) => [f.slice(0, -3), readGenerated(`docs/reference/${f}`)]),
    ),
    changelog: readGenerated('CHANGELOG.md'),
  });

  /** The MCP transport's authenticate step: as REST, and a refusal is audited (the executor audits the rest). */
  const authenticateMcp: RequestAuthenticator = async (c) => {
    const started = performance.now();
    try {
      return await authenticateRest(c);
    } catch (err) {
      const p = toProblemError(err);
      auditor.record({
        requestId: c.get('requestId'),
        transport: 'mcp',
        operationId: null,
        toolName: null,
        method: c.req.method,
        path: MCP_PATH,
        principal: null,
        status: problemStatus(p),
        outcome: 'error',
        problemCode: p.code,
        durationMs: performance.now() - started,
      });
      throw err;
    }
  };

  if (config.mcpEnabled) mountMcp(app, {
    executor,
    config,
    tools: registry.tools,
    operationsById: registry.operationsById as Record<string, OperationDef>,
    problemBody: (err, instance, requestId, baseUrl) => problemBody(err, instance, requestId, baseUrl),
    getRequestId: (c) => (c.get('requestId') as string | undefined) ?? 'unknown',
    protocolVersions: service.mcpProtocolVersions,
    serverVersion: service.contractVersion,
    authenticateRequest: authenticateMcp,
    log,
    maxBodyBytes: service.limits.requestBodyMaxBytes ?? 1_048_576,
    maxJsonDepth: service.limits.maxJsonDepth!,
    spendRateLimit: (c, principal, units) => {
      for (let i = 0; i < units; i++) limitCredential(c, limiter, principal);
    },
  });

  mountRest(app, {
    executor,
    authenticate: authenticateRest,
    routes: registry.routes,
    operationsById: registry.operationsById,
    config,
    maxBodyBytes: service.limits.requestBodyMaxBytes ?? 1_048_576,
    maxJsonDepth: service.limits.maxJsonDepth!,
    auditor,
  });

  app.notFound(notFoundHandler(registry.routes, config.baseUrl, rewriteRequestPath));
  app.onError((err, c) => {
    if (isUnexpected(err)) {
      log(`[${c.get('requestId')}] ${c.req.method} ${new URL(c.req.url).pathname}: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    }
    return problemResponse(c, err, config.baseUrl);
  });

  // Expired idempotency records are swept every 10 minutes (lookups already ignore them).
  const sweep = setInterval(() => {
    purgeExpiredIdempotency(database.db).catch((err: Error) => log(`idempotency sweep failed: ${err.message}`));
  }, 10 * 60_000);
  sweep.unref();

  let closed = false;
  return {
    app,
    executor,
    auditor,
    authenticator,
    limiter,
    flushAudit: () => auditor.flush(),
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(sweep);
      await auditor.close();
      if (ownAuthenticator) await authenticator.close();
    },
  };
}
