// Types of the operation registry the generator emits and the runtime receives (Registry, from
// bin/wiring.ts). The generator emits values of these types; the runtime reads only them, never the YAML.

/**
 * The principal kinds the runtime authenticates (runtime/auth): a contract's principals are among
 * these, or its operations could never be called (svc generate refuses any other, generator/check.ts).
 */
export const PRINCIPAL_KINDS = ['operator', 'client_admin', 'service_account'] as const;
export type PrincipalKind = (typeof PRINCIPAL_KINDS)[number];
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
export type ParamLocation = 'path' | 'query' | 'body';
export type RetryClass = 'after_fix' | 'after_delay' | 'now';

/** An event type of the contract (one of service.eventTypes): the runtime checks it at run time. */
export type EventType = string;

/** A JSON Schema (2020-12) as plain data. */
export type JsonSchema = { [key: string]: unknown };

/** svc.yaml mcpToolPrefix when the contract declares none: its tools are named `svc.<operation id>`. */
export const DEFAULT_MCP_TOOL_PREFIX = 'svc';
/** svc.yaml apiVersionHeader when the contract declares none: the response header carrying apiVersion. */
export const DEFAULT_API_VERSION_HEADER = 'X-Svc-Api-Version';

export interface McpToolDef {
  /** `<service.mcpToolPrefix>.<id>`, by default `svc.<id>` */
  name: string;
  title: string;
  description: string;
  /** Dereferenced: no $ref, no top-level union. Commands add idempotencyKey/ifMatch/dryRun. */
  inputSchema: JsonSchema;
  /**
   * The outcome envelope, dereferenced: {outcome: ran|planned|proposed|error, result?, plan?,
   * approval?, error?}. Error results carry outcome "error" so the SDK client's outputSchema check passes.
   */
  outputSchema: JsonSchema;
  annotations: {
    readOnlyHint: boolean;
    /** Commands only: the MCP spec gives them meaning only when readOnlyHint is false. */
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint: boolean;
  };
}

/** What a meta-tool of the dynamic MCP mode does (runtime/mcp/dynamic.ts implements each). */
export type McpDynamicRole = 'search' | 'describe' | 'read' | 'invoke';

/**
 * A meta-tool of `/mcp?mode=dynamic` (svc.yaml mcpDynamic): published as a tool like any other
 * (the McpToolDef members), run by the runtime's implementation of its role.
 */
export interface McpDynamicToolDef extends McpToolDef {
  role: McpDynamicRole;
}

/** One row of the REST route table (generated/routes.ts): the one route row type. */
export interface RouteDef {
  /** Operation id. */
  id: string;
  method: HttpMethod;
  /** Contract path, e.g. /v1/tasks/{task_id}:complete. */
  path: string;
  /** Hono path from toRouterPath (runtime/http/route-path.ts), e.g. /v1/tasks/:task_id/~complete. */
  routerPath: string;
}

export interface Deprecation {
  /** RFC 3339 instant it became deprecated. */
  since: string;
  /** RFC 3339 instant it stops answering. */
  sunset: string;
  /** Notice URL. */
  link: string;
  /** Successor operation id or version. */
  successor: string;
  /** Successor's address, for the Link rel="successor-version" header. */
  successorLink: string;
}

export interface OperationDef {
  id: string;
  family: string;
  kind: 'read' | 'command';
  /** Commands only; null for reads. */
  tier: 1 | 2 | 3 | null;
  /**
   * Tier 2/3 only: how the proposal's subject is found (the contract's `subject:`): the resource
   * type and the input member naming its id. Null for Tier 1, reads, and `subject: { none }`.
   */
  subject: { resource: string; from: string } | null;
  /** Required scope, or null when any credential will do. */
  scope: string | null;
  audience: PrincipalKind[];
  summary: string;
  method: HttpMethod;
  /** Contract path, e.g. `/v1/tasks/{task_id}:complete`. */
  path: string;
  /** Where each top-level input property travels on REST. */
  params: Record<string, ParamLocation>;
  /** JSON Schema type of each query/path parameter ('string' | 'integer' | 'number' | 'boolean' | 'array'), for coercion. */
  paramTypes: Record<string, string>;
  /** Status when a command ran (200 or 201) or a read answered (200). */
  successStatus: number;
  paged: boolean;
  stream: 'sse' | null;
  idempotency: 'required' | 'honoured' | 'none';
  ifMatch: 'required' | 'none';
  emits: string[];
  /** Every problem code the operation can answer, sorted. */
  problems: string[];
  /** Null when the operation is not an MCP tool. */
  mcp: McpToolDef | null;
  /** Why it is not a tool (null when it is). */
  mcpReason: string | null;
  deprecated: Deprecation | null;
}

export interface ProblemDef<C extends string = string> {
  code: C;
  status: number;
  title: string;
  retry: RetryClass;
  retryAfter: number | null;
}

/**
 * The service facts. The generator builds the loose form for any contract it compiles; the
 * generated registry states its contract's form, `ServiceDef<Limits, ProblemCode>`; the runtime
 * reads them as RuntimeService, handed over in the registry.
 */
export interface ServiceDef<L = Record<string, number>, C extends string = string> {
  title: string;
  /** svc.yaml info.description (the portal's opening line); absent when the contract has none. */
  description?: string;
  contractVersion: string;
  /** major.minor, sent in the apiVersionHeader response header. */
  apiVersion: string;
  /**
   * svc.yaml apiVersionHeader, present only when the contract declares it: the name of the response
   * header every answer carries apiVersion in. Absent: DEFAULT_API_VERSION_HEADER.
   */
  apiVersionHeader?: string;
  /**
   * svc.yaml mcpToolPrefix, present only when the contract declares it: operation tools are named
   * `<prefix>.<operation id>`. Absent: DEFAULT_MCP_TOOL_PREFIX.
   */
  mcpToolPrefix?: string;
  mcpProtocolVersions: string[];
  /** The meta-tools `/mcp?mode=dynamic` lists instead of the operation tools (svc.yaml mcpDynamic); empty: no dynamic mode. */
  mcpDynamicTools: McpDynamicToolDef[];
  versions: { version: string; status: 'current' | 'deprecated'; sunset: string | null }[];
  /** Canonical order. */
  scopes: string[];
  principals: PrincipalKind[];
  /** Role label -> scopes it allows ('staff' labels allow every scope). */
  roleScopes: Record<string, string[]>;
  eventTypes: string[];
  problems: { readonly [K in C]: ProblemDef<K> };
  limits: L;
  /** svc.yaml features: the machinery only some APIs want (both false when the contract says nothing). */
  features: ServiceFeatures;
  /**
   * svc.yaml personalData, present only when declared: the scope a credential needs to read personal
   * data unredacted (Policy.redactPersonalData). Absent: no scope gates it.
   */
  personalData?: { scope: string };
}

/**
 * svc.yaml `features` (docs/decisions.md, "Features a contract turns on"). Off unless the contract
 * turns them on; the Platform API turns both on.
 */
export interface ServiceFeatures {
  /**
   * Records and credentials bound to client organisations: the client_admin and service_account
   * principals, API keys bound to clients, client reach in visibility. Off: every principal is an
   * operator that reaches every record (svc generate refuses the other principals).
   */
  clientTenancy: boolean;
  /** Tier 2 and 3 commands become proposals a person approves. Off: svc generate refuses a Tier 2 or 3 command. */
  approvals: boolean;
}

/**
 * The limits the runtime (and the compiler) reads: generator/standard-library.ts gives each a value,
 * so every contract's limits hold them (test/contract/standard-library.test.ts keeps the two in step).
 */
export type StandardLimitName =
  | 'accessTokenLifetimeSeconds'
  | 'apiKeyLifetimeDays'
  | 'approvalExpiryHours'
  | 'eventRetentionDays'
  | 'eventStreamKeepAliveSeconds'
  | 'eventStreamsPerCredential'
  | 'failedAuthPerMinute'
  | 'idempotencyRetentionHours'
  | 'jwksFetchTimeoutSeconds'
  | 'jwksRetryIntervalSeconds'
  | 'maxJsonDepth'
  | 'mcpSearchMaxResults'
  | 'notConfiguredRetryAfterSeconds'
  | 'pageSizeDefault'
  | 'pageSizeMax'
  | 'priorMajorMinimumMonths'
  | 'rateLimitPerMinute'
  | 'requestBodyMaxBytes'
  | 'requestHeadersTimeoutSeconds'
  | 'requestTimeoutSeconds'
  | 'unregisteredUploadRetentionHours'
  | 'uploadIdleTimeoutSeconds'
  | 'uploadTimeoutSeconds'
  | 'webhookAttemptTimeoutSeconds'
  | 'webhookSecretOverlapHours';

/** The limits as the runtime reads them: the standard ones by name (a contract may declare more). */
export type StandardLimits = { readonly [K in StandardLimitName]: number };

/**
 * The service facts as the runtime receives them (Registry.service): any contract's ServiceDef, its
 * limits holding at least the standard ones, its problem codes plain strings. The runtime imports
 * nothing from generated/; the Platform API's typed form stays there (`Service`).
 */
export type RuntimeService = ServiceDef<StandardLimits, string>;
