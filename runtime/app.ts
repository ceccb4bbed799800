// The svc application: one Hono app with the app-wide headers middleware, the REST routes of the
// generated registry, the MCP endpoint, the published documents, 404/405 and error handling.
import { readFileSync, readdirSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Hono, type Context } from 'hono';
import { getPath } from 'hono/utils/url';
import { createAuthenticator, credentialInUrl, type Authenticator } from './auth/authenticate.ts';
import { auditEntry, Auditor, failedWith } from './pipeline/audit.ts';
import { purgeExpiredIdempotency } from './pipeline/idempotency.ts';
import { auditRetentionDays, purgeExpiredAudit } from './pipeline/audit-retention.ts';
import type { Config } from './config.ts';
import type { McpToolDef, OperationDef, RouteDef, RuntimeService } from './contract-types.ts';
import { installContractFacts, installMigrationsFolder } from './contract-facts.ts';
import type { Database } from './data/client.ts';
import { mountDocuments } from './portal/documents.ts';
import { mountPortal, portalOidcFromEnv, type PortalOidcConfig } from './portal/index.ts';
import type { Principal } from './handler-types.ts';
import { clientIp, commonHeaders, credentialKey, limitCredential, RateLimiter, settleDecision } from './http/headers/index.ts';
import type { CredentialLimiter } from './http/headers/shared-rate-limit.ts';
import { lazyRedisCredentialLimiter } from './http/headers/lazy-credential-limiter.ts';
import { MCP_PATH, mountMcpLazily } from './mcp/lazy.ts';
import { createExecutor, type AnyHandler, type PipelineDeps, type PipelineExecutor } from './pipeline/executor.ts';
import type { AppEnv, RequestAuthenticator } from './http/app-env.ts';
import type { ValidateFn } from './pipeline/validate.ts';
import type { SubjectLoaders } from './pipeline/approval-subjects.ts';
import { ProblemError } from './problem-error.ts';
import { isUnexpected, problemBody } from './problem-documents.ts';
import { mountRest, notFoundHandler } from './http/rest/index.ts';
import { problemResponse } from './http/rest/problem-response.ts';
import { rewriteRequestPath } from './http/route-path.ts';
import { createSecretFields, type SecretPointers } from './auth/secret-fields.ts';
import type { BackgroundWorker } from './workers.ts';
import type { OutboxHooks } from './events/outbox.ts';
import { errorSummary, logLine, setLogRedactions, stderrLog } from './observability/log.ts';
import { mountFileRoutes, type UploadTimeouts } from './files/routes.ts';
import { S3FileStore } from './files/s3-store.ts';
import { LocalFileStore, type FileStore } from './files/store.ts';
import { startFileWorker, type FileJob, type FileWorker } from './files/worker.ts';
import { PROJECT_ROOT } from './project-root.ts';
import { metrics, tracing } from './observability/index.ts';
import { routeResolver, tracedExecutor, tracedHandlers, tracedValidators } from './observability/app-hooks.ts';
import { createReadiness, type Readiness } from './observability/health.ts';

/**
 * Everything the runtime knows of a contract and its handlers (bin/wiring.ts svcRegistry(), or a
 * test's fixture): runtime/ imports nothing from generated/, every contract fact arrives here.
 */
export interface Registry {
  /** Title, versions, scopes, roles, principals, event types, problem catalogue, limits. */
  service: RuntimeService;
  /**
   * The project's one migration history (an absolute path): drizzle-kit's output over the runtime's
   * machinery schema and the API's domain schema (drizzle.config.ts). The runtime names no folder.
   */
  migrationsFolder: string;
  operationsById: Readonly<Record<string, OperationDef>>;
  validators: Readonly<Record<string, ValidateFn>>;
  /** Validators of each operation's handler result (its output schema). */
  resultValidators: Readonly<Record<string, ValidateFn>>;
  routes: readonly RouteDef[];
  tools: readonly McpToolDef[];
  handlers: Readonly<Record<string, AnyHandler>>;
  /** Each operation's bearer-secret pointers (x-svc-secret fields of its result). */
  secretPointers: SecretPointers;
  /** Family -> its description (the dynamic MCP mode's search and describe). */
  familyDescriptions: Readonly<Record<string, string>>;
  /** Field names whose values a log line never shows (x-svc-redact and secret fields). */
  redactedFieldNames: readonly string[];
  /** The API's background workers (runtime/workers.ts): started in each served process when workers are on. */
  workers?: readonly BackgroundWorker[];
  /** The API's jobs over scanned files (runtime/files/worker.ts FileJob), run by each process's file worker. */
  fileJobs?: readonly FileJob[];
  /** What the API does as the outbound-message outbox settles its operations (runtime/events/outbox.ts). */
  outbox?: OutboxHooks;
  /** The loaders of the API's approval-subject types (runtime/pipeline/approval-subjects.ts); the runtime loads `client` itself. */
  approvalSubjects?: SubjectLoaders;
  /**
   * The contract's generated output folder (absolute): the published documents (openapi.json,
   * docs/, CHANGELOG.md) are read from it. Given by the project's wiring, as migrationsFolder is.
   */
  generatedDir: string;
}

export interface CreateAppOptions {
  database: Database;
  config: Config;
  /** Default: createAuthenticator over the database and the generated scopes. */
  authenticator?: Authenticator;
  /** Operations, validators, routes, tools and handlers: bin/wiring.ts svcRegistry(), or a test's fixture. */
  registry: Registry;
  /** Default limits.rateLimitPerMinute a minute. */
  rateLimit?: { limit?: number; windowSeconds?: number };
  /** Log lines (runtime/observability/log.ts: one JSON object each, never a body, a bound value or a secret); default stderr. */
  log?: (message: string) => void;
  now?: () => Date;
  /** How an approval's proposer is rebuilt at approval time (default: from the database). */
  rebuildProposer?: PipelineDeps['rebuildProposer'];
  /** Where file bytes live (default: the local store under config.dataDir). */
  fileStore?: FileStore;
  /** The shared per-credential limiter; default: Redis when config.redisUrl is set, else none (per process). */
  sharedLimiter?: CredentialLimiter | null;
  /** The upload route's time rule (default the contract's limits.uploadIdleTimeoutSeconds and uploadTimeoutSeconds). */
  uploadTimeouts?: Partial<UploadTimeouts>;
  /** How often the file worker looks for work (default 1000 ms). */
  workerIntervalMs?: number;
  /** The portal's OpenID Connect provider; default from SVC_PORTAL_OIDC_* (null: API-key sign-in). */
  portalOidc?: PortalOidcConfig | null;
}

export interface SvcApp {
  app: Hono<AppEnv>;
  executor: PipelineExecutor;
  auditor: Auditor;
  authenticator: Authenticator;
  limiter: RateLimiter;
  /** The per-credential limiter shared through Redis (REDIS_URL), or null: counted in `limiter`. */
  sharedLimiter: CredentialLimiter | null;
  fileStore: FileStore;
  /** The file worker (null when config.workersEnabled is false). */
  fileWorker: FileWorker | null;
  /** What /v1/health answers a load balancer (runtime/observability/health.ts). */
  readiness: Readiness;
  /** Writes queued audit entries (tests read the table after it). */
  flushAudit(): Promise<void>;
  close(): Promise<void>;
}

/** This repository's generated output: the documents' folder when the registry names none. */

/** The configured file store: the S3-compatible bucket when SVC_S3_BUCKET is set, else the local data directory. */
export function fileStoreFor(config: Config): FileStore {
  return config.s3 ? new S3FileStore(config.s3) : new LocalFileStore(config.dataDir);
}

export function createApp(options: CreateAppOptions): SvcApp {
  const { database, config } = options;
  const { registry } = options;
  const { service } = registry;
  installContractFacts(service);
  installMigrationsFolder(registry.migrationsFolder);
  const generatedDir = pathToFileURL(registry.generatedDir.endsWith('/') ? registry.generatedDir : `${registry.generatedDir}/`);
  const readGenerated = (path: string): string => readFileSync(new URL(path, generatedDir), 'utf8');
  auditRetentionDays(String(config.auditRetentionDays), service.limits.eventRetentionDays);
  // Approvals are a feature (svc.yaml features): without it nothing is ever proposed, so a Tier 2 or 3
  // command (svc generate refuses one, rule feature-off) must not reach a served registry either.
  if (!service.features.approvals) {
    const proposing = Object.values(registry.operationsById).find((op) => op.tier === 2 || op.tier === 3);
    if (proposing) throw new Error(`${proposing.id} is a Tier ${proposing.tier} command, but the contract does not turn approvals on (svc.yaml features: { approvals: true })`);
  }
  const log = options.log ?? stderrLog;
  setLogRedactions(registry.redactedFieldNames);

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
  // With REDIS_URL the credential windows live in Redis, shared by every process (headers/shared-rate-limit.ts).
  const shared: CredentialLimiter | null =
    options.sharedLimiter !== undefined
      ? options.sharedLimiter
      : config.redisUrl
        ? lazyRedisCredentialLimiter({ url: config.redisUrl, limit: limiter.limit, windowSeconds: limiter.windowSeconds, log })
        : null;
  /** Spends `units` of the principal's credential window, in Redis when shared, else in this process. */
  async function limitPrincipal(c: Context<AppEnv> | null, principal: Principal, units = 1): Promise<void> {
    if (!shared) {
      for (let i = 0; i < units; i++) limitCredential(c, limiter, principal);
      return;
    }
    settleDecision(c, principal, await shared.take(credentialKey(principal), units));
  }
  const failedAuth = new RateLimiter({ limit: service.limits.failedAuthPerMinute, windowSeconds: 60 });
  // Background work runs on the workers' pool (Database.workers): audit batches, the file worker, the sweeps.
  const auditor = new Auditor(database.workers, { log });
  // With tracing on, validation, handlers and MCP calls get spans of their own (observability/app-hooks.ts).
  const createTracedExecutor = tracing ? (deps: PipelineDeps) => tracedExecutor(createExecutor(deps)) : createExecutor;
  const executor = createTracedExecutor({
    database,
    config,
    service,
    operationsById: registry.operationsById,
    validators: tracing ? tracedValidators(registry.validators) : registry.validators,
    resultValidators: config.validateResponses ? registry.resultValidators : null,
    handlers: tracing ? tracedHandlers(registry.handlers) : registry.handlers,
    secrets: createSecretFields({ pointers: registry.secretPointers, key: config.secretKey }),
    auditor,
    log,
    now: options.now,
    rebuildProposer: options.rebuildProposer,
    approvalSubjects: registry.approvalSubjects,
  });

  /** Authorization header (never a URL credential) -> principal, then the credential's rate limit. */
  async function authenticateRequest(authorization: string | undefined, ip: string | null, url: string): Promise<Principal> {
    if (url.includes('?') && credentialInUrl(url)) {
      throw new ProblemError('unauthorized', 'A credential goes only in the Authorization: Bearer header, never in a URL.');
    }
    // An address that keeps failing authentication is refused before any lookup (limits.failedAuthPerMinute).
    const failKey = `authfail:${ip ?? 'unknown'}`;
    const failures = failedAuth.peek(failKey);
    // A fresh object per request: the authenticator may hand out one cached principal, and the
    // rate decision is recorded against this request's principal (headers/index.ts).
    let authenticated: Principal | null;
    try {
      // A throttled address keeps its cached, known-good keys; anything else waits for the reset.
      authenticated = failures.allowed ? await authenticator.authenticate(authorization, ip) : await authenticator.authenticateCached(authorization, ip);
      if (!authenticated) {
        metrics.rateLimited('failed_auth');
        throw new ProblemError(
          'rate_limited',
          `Too many requests from this address failed authentication (${failures.limit} a minute); retry after ${failures.resetSeconds} s.`,
          { headers: { 'Retry-After': String(failures.resetSeconds) } },
        );
      }
    } catch (err) {
      const code = err instanceof ProblemError ? err.code : null;
      if (code === 'unauthorized' || code === 'invalid_token') failedAuth.take(failKey);
      throw err;
    }
    const principal = { ...authenticated };
    await limitPrincipal(null, principal);
    return principal;
  }

  const authenticateRest: RequestAuthenticator = async (c) => {
    const principal = await authenticateRequest(c.req.header('authorization'), clientIp(c), c.req.url);
    c.set('principal', principal);
    return principal;
  };

  const app = new Hono<AppEnv>({ getPath: (request) => rewriteRequestPath(getPath(request)) });
  app.use(commonHeaders({ apiVersion: service.apiVersion, apiVersionHeader: service.apiVersionHeader, limiter }));
  if (tracing) app.use(tracing.serverSpans(routeResolver(registry.routes)));
  const readiness = createReadiness(database, registry.migrationsFolder);

  // The OpenAPI document as served (generated/openapi.json with this service as its server): almost
  // 1 MB of JSON, parsed and serialised on its first request instead of at start.
  let openapiDocument: string | null = null;
  const publishedOpenapi = () =>
    (openapiDocument ??= JSON.stringify({ ...(JSON.parse(readGenerated('openapi.json')) as object), servers: [{ url: config.baseUrl, description: 'This service.' }] }));

  // The developer portal (runtime/portal): pages, sign-in, sessions; before mountDocuments, whose
  // /problems pages it replaces (HTML, Markdown or JSON by Accept).
  mountPortal(app, {
    config,
    service,
    database,
    readiness,
    operations: Object.values(registry.operationsById),
    authenticate: authenticateRest,
    authenticateBearer: (authorization, ip) => authenticateRequest(authorization, ip, ''),
    clientIp,
    openapi: publishedOpenapi,
    oidc: options.portalOidc !== undefined ? options.portalOidc : portalOidcFromEnv(process.env, config),
    now: options.now,
    docsDir: new URL('docs/', generatedDir),
  });

  const agentGuide = readGenerated('docs/agent-guide.md');
  const llmsTxt = readGenerated('docs/llms.txt');
  mountDocuments(app, {
    config,
    service,
    database,
    readiness,
    authenticate: authenticateRest,
    openapi: publishedOpenapi,
    agentGuide,
    llmsTxt,
    references: Object.fromEntries(
      readdirSync(new URL('docs/reference/', generatedDir))
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
      const request = { requestId: c.get('requestId'), transport: 'mcp', operationId: null, toolName: null, method: c.req.method, path: MCP_PATH } as const;
      auditor.record(auditEntry(request, null, failedWith(err), started));
      metrics.callEnded('mcp', null, started, null, err);
      throw err;
    }
  };

  if (config.mcpEnabled) mountMcpLazily(app, {
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
    maxBodyBytes: service.limits.requestBodyMaxBytes,
    maxJsonDepth: service.limits.maxJsonDepth,
    spendRateLimit: (c, principal, units) => limitPrincipal(c, principal, units),
    dynamic: { tools: service.mcpDynamicTools, searchMaxResults: service.limits.mcpSearchMaxResults, familyDescriptions: registry.familyDescriptions },
    // The documents an agent orients itself with, at their own addresses (runtime/portal/documents.ts serves the same bytes).
    resources: [
      {
        uri: `${config.baseUrl}/v1/agent-guide.md`,
        name: 'agent-guide.md',
        title: 'Agent guide',
        description: 'Authentication, paging, the outcome envelope, dry-run, idempotency, If-Match, errors, scopes and every operation.',
        mimeType: 'text/markdown',
        text: agentGuide,
      },
      {
        uri: `${config.baseUrl}/llms.txt`,
        name: 'llms.txt',
        title: 'llms.txt',
        description: 'The map of the documentation for language models: guides, reference pages, the MCP modes.',
        mimeType: 'text/plain',
        text: llmsTxt,
      },
    ],
    // A dynamic read/invoke of a tool the caller may not call: audited under that tool, as the
    // executor audits a static call it refuses.
    auditRefusal: (c, principal, call, problem) =>
      auditor.record(auditEntry({ requestId: c.get('requestId'), transport: 'mcp', operationId: call.operationId, toolName: call.toolName, method: c.req.method, path: MCP_PATH }, principal, failedWith(problem), performance.now())),
  });

  mountRest(app, {
    executor,
    authenticate: authenticateRest,
    routes: registry.routes,
    operationsById: registry.operationsById,
    config,
    maxBodyBytes: service.limits.requestBodyMaxBytes,
    maxJsonDepth: service.limits.maxJsonDepth,
    auditor,
  });

  // Signed upload and download URLs land here, outside /v1 (runtime/files/routes.ts).
  // The store: the S3-compatible bucket when SVC_S3_BUCKET is set, else the local data directory.
  const ownStore = !options.fileStore;
  const fileStore: FileStore = options.fileStore ?? fileStoreFor(config);
  const { limits } = service;
  const uploadTimeouts = { idleMs: limits.uploadIdleTimeoutSeconds * 1000, totalMs: limits.uploadTimeoutSeconds * 1000, ...options.uploadTimeouts };
  mountFileRoutes(app, { database, store: fileStore, log, baseUrl: config.baseUrl, now: options.now, uploadTimeouts });
  const uploadRetentionHours = limits.unregisteredUploadRetentionHours;
  const fileWorker = config.workersEnabled ? startFileWorker({ database: database.workers, store: fileStore, log, baseUrl: config.baseUrl, intervalMs: options.workerIntervalMs, now: options.now, uploadRetentionHours, jobs: registry.fileJobs }) : null;

  app.notFound(notFoundHandler(registry.routes, config.baseUrl, rewriteRequestPath));
  app.onError((err, c) => {
    if (isUnexpected(err)) {
      log(logLine('error', 'unexpected_error', { requestId: c.get('requestId'), method: c.req.method, path: new URL(c.req.url).pathname, error: errorSummary(err) }));
    }
    return problemResponse(c, err, config.baseUrl);
  });

  // Expired idempotency records are swept every 10 minutes (lookups already ignore them), and audit
  // rows past SVC_AUDIT_RETENTION_DAYS (runtime/pipeline/audit-retention.ts).
  const sweep = setInterval(() => {
    purgeExpiredIdempotency(database.workers.db).catch((err: Error) => log(logLine('error', 'idempotency_sweep_failed', { error: errorSummary(err) })));
    purgeExpiredAudit(database.workers.db, config.auditRetentionDays).catch((err: Error) => log(logLine('error', 'audit_sweep_failed', { error: errorSummary(err) })));
  }, 10 * 60_000);
  sweep.unref();

  let closed = false;
  return {
    app,
    executor,
    auditor,
    authenticator,
    limiter,
    sharedLimiter: shared,
    fileStore,
    fileWorker,
    readiness,
    flushAudit: () => auditor.flush(),
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(sweep);
      await fileWorker?.close();
      if (ownStore) fileStore.close?.();
      await auditor.close();
      if (options.sharedLimiter === undefined) await shared?.close();
      if (ownAuthenticator) await authenticator.close();
    },
  };
}
