// Environment -> configuration, read once at start. Every variable is documented in the README.
import { observabilityConfigFrom, type ObservabilityConfig } from './observability/config.ts';
import { auditRetentionDays } from './pipeline/audit-retention.ts';
import { transactionBoundsFrom, type TransactionBounds } from './data/transaction-bounds.ts';
import { preparedStatementsFrom, type PreparedStatementsSetting } from './data/prepared-statements.ts';

export interface Config {
  port: number;
  baseUrl: string;
  /** PostgreSQL URL; null means embedded PGlite in dataDir. */
  databaseUrl: string | null;
  /** DATABASE_DIRECT_URL: PostgreSQL itself for LISTEN and migrations when DATABASE_URL is a pooler (docs/fleet.md). */
  databaseDirectUrl: string | null;
  /** SVC_DB_STATEMENT_TIMEOUT_MS, SVC_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: every transaction's bounds on PostgreSQL (runtime/data/transaction-bounds.ts). */
  transactionBounds: TransactionBounds;
  /** SVC_DB_PREPARED_STATEMENTS: named prepared statements on PostgreSQL (runtime/data/prepared-statements.ts). */
  preparedStatements: PreparedStatementsSetting;
  dataDir: string;
  writesEnabled: boolean;
  /** Feature flags (spec Versioning 1), default on; off answers 404 not_found like the write switch. */
  mcpEnabled: boolean;
  webhooksEnabled: boolean;
  eventStreamEnabled: boolean;
  /** Origins besides baseUrl's that may call /mcp from a browser (SVC_ALLOWED_ORIGINS, comma-separated). */
  allowedOrigins: string[];
  audLegacyMode: 'accept' | 'reject';
  oauthClientMode: 'open' | 'allowlist';
  oauthIssuer: string | null;
  oauthJwksUrl: string | null;
  webhookAllowPrivate: boolean;
  /** Publish underscore aliases (svc_tasks_create) of MCP tool names for clients that reject dots. */
  mcpUnderscoreAliases: boolean;
  /** Requests a credential may make a minute (SVC_RATE_LIMIT_PER_MINUTE); null: the contract's limits.rateLimitPerMinute. */
  rateLimitPerMinute: number | null;
  /** Audit rows are kept this many days (SVC_AUDIT_RETENTION_DAYS, default 365, at least 30), then swept. */
  auditRetentionDays: number;
  /** Redis URL (REDIS_URL): the per-credential rate limit is shared by every process through it; null: each process limits alone. */
  redisUrl: string | null;
  /** SMTP URL the outbox sends e-mail through (nodemailer); null: outbound messages stay queued. */
  smtpUrl: string | null;
  /** From address of outbound e-mail (SVC_SMTP_FROM). */
  smtpFrom: string;
  /** SVC_SECRET_KEY's 32 bytes (seals stored bearer secrets); null: a key generated once into the database. */
  secretKey: Buffer | null;
  /**
   * Check every handler result against the operation's output schema (SVC_VALIDATE_RESPONSES; always
   * on in the test suite). A mismatch is logged with the request id and answered 500 internal_error.
   */
  validateResponses: boolean;
  /** Background workers (the file worker and its jobs, upload purge, the API's own workers) in this process (SVC_WORKERS, default on). */
  workersEnabled: boolean;
  /** Seconds an event stream may stay full (its reader not reading) before it is cut off (SVC_EVENT_STREAM_STALL_SECONDS, default 30). */
  eventStreamStallSeconds: number;
  /** Seconds a worker's claim on a run lasts without a heartbeat before another worker takes it over (SVC_WORKER_LEASE_SECONDS, default 30). */
  workerLeaseSeconds: number;
  /** S3-compatible file storage (SVC_S3_BUCKET and the standard AWS variables); null: the local data directory. */
  s3: S3Config | null;
  /** Metrics listener and tracing (SVC_METRICS_*, OTEL_*): runtime/observability/config.ts. */
  observability: ObservabilityConfig;
}

export interface S3Config {
  bucket: string;
  /** Key prefix inside the bucket (SVC_S3_PREFIX), e.g. `svc/`; empty by default. */
  prefix: string;
  /** AWS_REGION (or AWS_DEFAULT_REGION); `us-east-1` when neither is set (most S3-compatible servers ignore it). */
  region: string;
  /** AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL: a non-AWS endpoint (MinIO, R2, Ceph, …); null: AWS itself. */
  endpoint: string | null;
  /** Path-style addressing (`{endpoint}/{bucket}/{key}`): SVC_S3_FORCE_PATH_STYLE, default true when an endpoint is set. */
  forcePathStyle: boolean;
  /** AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN); null: the SDK's default credential chain. */
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | null;
}

/** The S3 settings of an environment, or null when SVC_S3_BUCKET is not set. */
export function s3ConfigFrom(env: Record<string, string | undefined>): S3Config | null {
  const bucket = env.SVC_S3_BUCKET?.trim();
  if (!bucket) return null;
  const endpoint = (env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || '').trim() || null;
  if (endpoint !== null && !/^https?:\/\/[^/]/.test(endpoint)) throw new Error(`AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL must be an http(s) URL; got "${endpoint}"`);
  const accessKeyId = env.AWS_ACCESS_KEY_ID?.trim();
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY?.trim();
  if (!!accessKeyId !== !!secretAccessKey) throw new Error('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together');
  return {
    bucket,
    prefix: env.SVC_S3_PREFIX ?? '',
    region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
    endpoint,
    forcePathStyle: flag(env.SVC_S3_FORCE_PATH_STYLE, endpoint !== null),
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey, ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}) } : null,
  };
}

function flag(value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  return /^(1|true|yes|on)$/i.test(value);
}

function oneOf<T extends string>(name: string, value: string | undefined, allowed: readonly T[], fallback: T): T {
  if (value === undefined || value === '') return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new Error(`${name} must be one of ${allowed.join(', ')}; got "${value}"`);
}

function positiveInteger(name: string, value: string | undefined): number | null {
  if (value === undefined || value === '') return null;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a whole number of at least 1; got "${value}"`);
  return n;
}

/** SVC_SECRET_KEY -> 32 key bytes, or a message saying what is wrong with it. */
export function parseSecretKey(value: string): Buffer {
  const text = value.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (key.length !== 32) {
    throw new Error('SVC_SECRET_KEY must be 32 random bytes as 64 hex digits or base64 (e.g. `openssl rand -base64 32`)');
  }
  return key;
}

export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<Config> = {}): Config {
  const port = Number(env.PORT ?? 8787);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be a port number; got "${env.PORT}"`);
  const config: Config = {
    port,
    baseUrl: (env.SVC_BASE_URL || `http://localhost:${port}`).replace(/\/+$/, ''),
    databaseUrl: env.DATABASE_URL || null,
    databaseDirectUrl: env.DATABASE_DIRECT_URL || null,
    transactionBounds: transactionBoundsFrom(env),
    preparedStatements: preparedStatementsFrom(env),
    dataDir: env.SVC_DATA_DIR || '.svc-data',
    writesEnabled: flag(env.API_WRITES_ENABLED, true),
    mcpEnabled: flag(env.API_MCP_ENABLED, true),
    webhooksEnabled: flag(env.API_WEBHOOKS_ENABLED, true),
    eventStreamEnabled: flag(env.API_EVENT_STREAM_ENABLED, true),
    allowedOrigins: (env.SVC_ALLOWED_ORIGINS ?? '')
      .split(',')
      .map((o) => o.trim().replace(/\/+$/, ''))
      .filter((o) => o !== ''),
    audLegacyMode: oneOf('API_AUD_LEGACY_MODE', env.API_AUD_LEGACY_MODE, ['accept', 'reject'] as const, 'accept'),
    oauthClientMode: oneOf('API_OAUTH_CLIENT_MODE', env.API_OAUTH_CLIENT_MODE, ['open', 'allowlist'] as const, 'open'),
    oauthIssuer: env.SVC_OAUTH_ISSUER || null,
    oauthJwksUrl: env.SVC_OAUTH_JWKS_URL || null,
    validateResponses: flag(env.SVC_VALIDATE_RESPONSES, false),
    webhookAllowPrivate: flag(env.SVC_WEBHOOK_ALLOW_PRIVATE, false),
    mcpUnderscoreAliases: flag(env.SVC_MCP_UNDERSCORE_ALIASES, false),
    rateLimitPerMinute: positiveInteger('SVC_RATE_LIMIT_PER_MINUTE', env.SVC_RATE_LIMIT_PER_MINUTE),
    auditRetentionDays: auditRetentionDays(env.SVC_AUDIT_RETENTION_DAYS),
    redisUrl: env.REDIS_URL || null,
    smtpUrl: env.SVC_SMTP_URL || null,
    smtpFrom: env.SVC_SMTP_FROM || 'no-reply@svc.example',
    secretKey: env.SVC_SECRET_KEY ? parseSecretKey(env.SVC_SECRET_KEY) : null,
    workersEnabled: flag(env.SVC_WORKERS, true),
    eventStreamStallSeconds: positiveInteger('SVC_EVENT_STREAM_STALL_SECONDS', env.SVC_EVENT_STREAM_STALL_SECONDS) ?? 30, // not a contract limit
    workerLeaseSeconds: positiveInteger('SVC_WORKER_LEASE_SECONDS', env.SVC_WORKER_LEASE_SECONDS) ?? 30, // not a contract limit
    s3: s3ConfigFrom(env),
    observability: observabilityConfigFrom(env, port),
  };
  return { ...config, ...overrides };
}
