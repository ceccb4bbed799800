// The standard library of svc.yaml: every problem code the runtime (or an implied error of the
// generator) raises and every limit the runtime and the compiler read, each with the value
// contract/svc.yaml gives it. A contract declares only what it wants to change: model.ts takes a
// declared problem or limit from svc.yaml and every other one from here, so a contract that omits
// one still serves (without it a missing limit was NaN at start and a missing code answered 500).
// test/contract/standard-library.test.ts scans runtime/ so that a code or limit added there must be
// added here. docs/contract-authors.md prints both tables.
import { PRINCIPAL_KINDS, type PrincipalKind, type RetryClass, type ServiceFeatures, type StandardLimitName } from '../runtime/contract-types.ts';

export interface StandardProblem {
  status: number;
  title: string;
  retry: RetryClass;
  /** Retry-After seconds the runtime sends with it; null when it sends none (or computes one). */
  retryAfter: number | null;
  /** When the runtime raises it. */
  description: string;
}

export interface StandardLimit {
  value: number;
  /** What the runtime (or the compiler) bounds with it. */
  description: string;
}

function problem(status: number, title: string, retry: RetryClass, description: string, retryAfter: number | null = null): StandardProblem {
  return { status, title, retry, retryAfter, description };
}

export const STANDARD_PROBLEMS: Readonly<Record<string, StandardProblem>> = {
  validation_failed: problem(422, 'The input is not valid', 'after_fix', 'The input breaks its schema or a handler rule; `errors` lists each field.'),
  malformed_json: problem(400, 'The request body is not valid JSON', 'after_fix', 'The body of a command does not parse as JSON.'),
  idempotency_key_required: problem(400, 'An idempotency key is required', 'after_fix', 'A command with idempotency: required was sent without a key.'),
  idempotency_key_reused: problem(422, 'The Idempotency-Key was already used with a different request', 'after_fix', 'A key was replayed with another input.'),
  idempotency_key_in_progress: problem(409, 'A request with this Idempotency-Key is still in progress', 'after_delay', 'The first request with this key is still running.'),
  unauthorized: problem(401, 'A credential is required', 'after_fix', 'No credential was sent.'),
  invalid_token: problem(401, 'The credential was refused', 'after_fix', 'The API key or access token is unknown, expired or revoked.'),
  insufficient_scope: problem(403, 'The credential lacks the scope this operation needs', 'after_fix', "The caller's effective scopes lack the operation's scope."),
  forbidden: problem(403, 'This caller may not perform this operation', 'after_fix', 'The caller is known and in reach, but the act is barred.'),
  not_found: problem(404, 'Not found', 'after_fix', 'No such route, or the resource is not there or not visible to the caller.'),
  request_header_fields_too_large: problem(431, "The request's header fields are too large", 'after_fix', "Headers above Node's 16 KB limit."),
  request_timeout: problem(408, 'The request was not received in time', 'now', 'Headers or body did not arrive within the request timeouts.'),
  malformed_request: problem(400, 'The HTTP request cannot be read', 'after_fix', 'The HTTP parser refused the request.'),
  method_not_allowed: problem(405, 'Method not allowed on this path', 'after_fix', 'The path exists but not with this method.'),
  invalid_transition: problem(409, "The resource's state does not allow this transition", 'after_fix', 'A proposal or run is not in a state that allows the act.'),
  precondition_failed: problem(412, 'The If-Match ETag does not match the current version', 'after_fix', 'Implied for ifMatch: required commands: the ETag is stale.'),
  payload_too_large: problem(413, 'The request body is too large', 'after_fix', 'The body exceeds limits.requestBodyMaxBytes, or an upload the size it announced.'),
  unsupported_media_type: problem(415, 'The request body must be application/json', 'after_fix', 'A command body sent with another Content-Type.'),
  precondition_required: problem(428, 'An If-Match header with the current ETag is required', 'after_fix', 'An ifMatch: required command without If-Match, or with `*`.'),
  rate_limited: problem(429, 'Too many requests', 'after_delay', 'A credential, an address or a stream count went over its limit.'),
  internal_error: problem(500, 'Internal error', 'now', 'An unexpected failure; the detail carries no internals.'),
  not_implemented: problem(501, 'This operation is not implemented yet', 'after_fix', 'The operation has no handler yet.'),
  not_configured: problem(503, 'Token verification has no usable key set', 'after_delay', 'OAuth is configured but no JWKS could be fetched.', 30),
  unavailable: problem(503, 'The service is temporarily unavailable', 'after_delay', 'The database or a dependency is unreachable, or the server is shutting down.', 5),
};

function limit(value: number, description: string): StandardLimit {
  return { value, description };
}

export const STANDARD_LIMITS: Readonly<Record<StandardLimitName, StandardLimit>> = {
  accessTokenLifetimeSeconds: limit(3600, 'Lifetime of an access token the service issues.'),
  apiKeyLifetimeDays: limit(90, 'Lifetime of a new API key.'),
  approvalExpiryHours: limit(168, 'A pending proposal expires after this many hours.'),
  eventRetentionDays: limit(30, 'Events are kept in the feed this many days.'),
  eventStreamKeepAliveSeconds: limit(15, 'Interval of keep-alive comments on an event stream.'),
  eventStreamsPerCredential: limit(5, 'Open event streams one credential may hold.'),
  failedAuthPerMinute: limit(100, 'Failed authentications an address may make a minute before 429.'),
  idempotencyRetentionHours: limit(24, 'How long an Idempotency-Key and its response are remembered.'),
  jwksFetchTimeoutSeconds: limit(5, 'Timeout of one JWKS fetch.'),
  jwksRetryIntervalSeconds: limit(30, 'Wait between JWKS fetches while none succeeded.'),
  maxJsonDepth: limit(64, 'Deepest nesting of an input (the input object is level 1).'),
  mcpSearchMaxResults: limit(10, 'Most tools the dynamic MCP mode search answers.'),
  notConfiguredRetryAfterSeconds: limit(30, 'Retry-After of not_configured.'),
  pageSizeDefault: limit(50, 'Page size of a paged read when none is asked.'),
  pageSizeMax: limit(200, 'Largest page size a paged read accepts.'),
  priorMajorMinimumMonths: limit(6, 'Least months between a successor major shipping and the sunset of the one it replaces (checked by svc generate).'),
  rateLimitPerMinute: limit(600, 'Requests a credential may make a minute.'),
  requestBodyMaxBytes: limit(1048576, 'Largest request body (1 MiB).'),
  requestHeadersTimeoutSeconds: limit(10, 'Time a client has to send its headers.'),
  requestTimeoutSeconds: limit(30, 'Time a client has to send its whole request (uploads excepted).'),
  unregisteredUploadRetentionHours: limit(24, 'An upload never registered is purged after this many hours.'),
  uploadIdleTimeoutSeconds: limit(30, 'Longest pause between chunks of an upload.'),
  uploadTimeoutSeconds: limit(3600, 'Time an upload has to complete.'),
  webhookAttemptTimeoutSeconds: limit(10, 'Timeout of one webhook delivery attempt.'),
  webhookSecretOverlapHours: limit(24, 'How long a rotated webhook secret still signs beside the new one.'),
};

/** What each principal kind the runtime authenticates is (runtime/auth). */
export const STANDARD_PRINCIPALS: Readonly<Record<PrincipalKind, string>> = {
  operator: 'A staff user signed in with OAuth, or an API key not bound to clients acting for its owner.',
  client_admin: 'An administrator of one client organisation, signed in with OAuth.',
  service_account: 'An API key its owner bound to clients.',
};

/**
 * svc.yaml mcpProtocolVersions when a contract declares none: the versions the runtime's /mcp serves
 * (newest first). Without them a contract that omits the key answered initialize with no
 * protocolVersion, and every MCP client refused the server.
 */
export const STANDARD_MCP_PROTOCOL_VERSIONS: readonly string[] = ['2025-11-25', '2025-06-18', '2025-03-26'];

/**
 * svc.yaml features, each off unless the contract turns it on (docs/decisions.md, "Features a
 * contract turns on"): a new API starts without client tenancy and approvals and asks for them.
 */
export function featuresOf(declared: unknown): ServiceFeatures {
  const f = declared !== null && typeof declared === 'object' ? (declared as Record<string, unknown>) : {};
  return { clientTenancy: f.clientTenancy === true, approvals: f.approvals === true };
}

/**
 * svc.yaml personalData: the scope that unlocks personal data, as the service facts carry it (present
 * only when declared; without it no scope gates personal data, docs/decisions.md "personal data").
 */
export function personalDataOf(declared: unknown): { personalData?: { scope: string } } {
  const scope = declared !== null && typeof declared === 'object' ? (declared as Record<string, unknown>).scope : undefined;
  return typeof scope === 'string' ? { personalData: { scope } } : {};
}

export { PRINCIPAL_KINDS };
