// The database schema (drizzle-orm, PostgreSQL; the same on PGlite). Migrations are made from it by
// drizzle-kit (`npx drizzle-kit generate`) into runtime/data/migrations and applied at start.
import { sql } from 'drizzle-orm';
import {
  type AnyPgColumn,
  bigint,
  bigserial,
  boolean,
  customType,
  date,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import type { PrincipalKind } from '../contract-types.ts';

// The value types of the columns the runtime's own machinery writes (keys, approvals, events,
// operations, pipelines, webhooks, files). The runtime imports nothing from generated/: a column of
// a contract's domain table is a plain string here, and its handlers narrow it to the contract's enum.
// test/governance/runtime-domainless.test.ts checks these unions against the contract's.
export type ApiKeyMode = 'live' | 'test';
export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'expired' | 'failed';
export type MembershipStatus = 'invited' | 'active' | 'revoked' | 'expired';
export type OperationStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
export type PipelineRunStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
export type PipelineStepStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'skipped';
export type PipelineEventType =
  | 'run_queued'
  | 'run_started'
  | 'step_started'
  | 'step_succeeded'
  | 'step_failed'
  | 'step_skipped'
  | 'run_succeeded'
  | 'run_failed'
  | 'run_cancelled'
  | 'log';
export type PipelineLevel = 'debug' | 'info' | 'warning' | 'error';
export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed';
export type WebhookEndpointStatus = 'enabled' | 'disabled';
export type FileStatus = 'scanning' | 'available' | 'rejected';
export type ExtractionStatus = 'queued' | 'running' | 'succeeded' | 'failed';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
const textArray = (name: string) => text(name).array().notNull().default(sql`'{}'::text[]`);

// -------------------------------------------------------------------------------------------------
// Full-text search (search.query, handlers/search.ts): each searchable table keeps a tsvector column
// the database computes itself (GENERATED ALWAYS AS … STORED) from the row's searchable text, with a
// GIN index. The 'simple' configuration (no stemming, no stop words: names, e-mails and codes match
// as typed, in any language); the title-like text weighs A, the rest D (ts_rank_cd scores A higher).
// A searchable column's text must hold no personal data unless the column is a contact's searchPii.

const tsvector = customType<{ data: string; driverData: string }>({
  dataType() {
    return 'tsvector';
  },
});

/** setweight(to_tsvector('simple', coalesce(col, '')), 'W') for each [column, weight], joined with ||. */
export function searchVectorSql(parts: readonly (readonly [column: string, weight: 'A' | 'B' | 'C' | 'D'])[]): string {
  return parts.map(([column, weight]) => `setweight(to_tsvector('simple'::regconfig, coalesce(${column}, '')), '${weight}')`).join(' || ');
}

/** The searchable text of a row (the same columns as its vector, space-joined): ts_headline cuts the snippet from it. */
export function searchTextSql(columns: readonly string[]): string {
  return columns.map((c) => `coalesce(${c}, '')`).join(` || ' ' || `);
}

/** The columns each table's search vector is made of (handlers/search.ts reads the same lists). */
export const SEARCH_PARTS = {
  clients: [['name', 'A'], ['industry', 'D']],
  projects: [['name', 'A'], ['description', 'D']],
  tasks: [['title', 'A'], ['description', 'D']],
  intake_records: [['title', 'A'], ['template', 'D']],
  reviews: [['title', 'A'], ['summary', 'D']],
  leads: [['title', 'A'], ['company', 'B']],
  accounts: [['name', 'A'], ['domain', 'B'], ['industry', 'D']],
  /** Without pii:read only this one is matched: the job title. */
  contacts_public: [['job_title', 'A']],
  /** With pii:read: name, e-mail, phone (as written and its digits) and job title. */
  contacts_pii: [['name', 'A'], ['email', 'B'], ['phone', 'B'], ['phone_digits', 'B'], ['job_title', 'C']],
  opportunities: [['name', 'A']],
  campaigns: [['name', 'A'], ['subject', 'D']],
  files: [['name', 'A']],
} as const satisfies Record<string, readonly (readonly [string, 'A' | 'B' | 'C' | 'D'])[]>;

const searchVector = (name: string, parts: keyof typeof SEARCH_PARTS) =>
  tsvector(name).generatedAlwaysAs(sql.raw(searchVectorSql(SEARCH_PARTS[parts])));


export const clients = pgTable(
  'clients',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    status: text('status').$type<string>().notNull(),
    industry: text('industry'),
    primaryContactName: text('primary_contact_name'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    search: searchVector('search', 'clients'),
  },
  (t) => [index('clients_search').using('gin', t.search), index('clients_name').on(sql`${t.name} collate "C"`, t.id)],
);

/** People: operators (staff) and client admins. OAuth subjects map here. */
export const users = pgTable(
  'users',
  {
    id: text('id').primaryKey(),
    kind: text('kind').$type<'operator' | 'client_admin'>().notNull(),
    name: text('name').notNull(),
    email: text('email').notNull(),
    /** Operator role label (owner, admin, operator, viewer); client admins take their membership role. */
    role: text('role').notNull(),
    /** Operators only: true when the operator's client scope is every client. */
    allClients: boolean('all_clients').notNull().default(false),
    oauthSubject: text('oauth_subject').notNull(),
    disabledAt: ts('disabled_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [uniqueIndex('users_oauth_subject').on(t.oauthSubject)],
);

/**
 * Who belongs to which client: a scoped operator's client scope (kind staff), a client admin's
 * organisation (kind client_admin, one permission label per row). An invitation has no user until
 * it is accepted; (email, client, role) is unique while invited or active.
 */
export const memberships = pgTable(
  'memberships',
  {
    id: text('id').primaryKey(),
    /** Null until the invitation is accepted. */
    userId: text('user_id').references(() => users.id),
    clientId: text('client_id').references(() => clients.id).notNull(),
    /** staff (a scoped operator's reach) | client_admin. Client admins never see or revoke staff rows. */
    kind: text('kind').$type<'staff' | 'client_admin'>().notNull().default('client_admin'),
    /** Lower-cased e-mail address the invitation went to (the user's, for seeded rows). */
    email: text('email'),
    name: text('name'),
    /** For client admins the permission label (read as a scope when it is one). */
    role: text('role').notNull(),
    status: text('status').$type<MembershipStatus>().notNull(),
    invitedByKind: text('invited_by_kind'),
    invitedById: text('invited_by_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
    acceptedAt: ts('accepted_at'),
    /** Invitations: 14 days after creation; past it the sweep marks them expired. */
    expiresAt: ts('expires_at'),
    revokedAt: ts('revoked_at'),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [
    index('memberships_user').on(t.userId),
    index('memberships_client').on(t.clientId, t.createdAt, t.id),
    // The invitation-expiry sweep (handlers/memberships.ts): open invitations past their expiry.
    index('memberships_invited_expiry').on(t.expiresAt).where(sql`status = 'invited'`),
    uniqueIndex('memberships_open_invitation')
      .on(t.email, t.clientId, t.role)
      .where(sql`status in ('invited', 'active')`),
  ],
);

/** API keys: only a SHA-256 hash of the secret is kept. */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    ownerUserId: text('owner_user_id').references(() => users.id).notNull(),
    name: text('name').notNull(),
    mode: text('mode').$type<ApiKeyMode>().notNull(),
    /** First characters of the secret, for display (svc_sk_live_ab12). */
    prefix: text('prefix').notNull(),
    secretHash: text('secret_hash').notNull(),
    scopes: textArray('scopes'),
    /** Empty: acts with its owner's client scope (operator). Non-empty: a service account bound to these clients. */
    clientIds: textArray('client_ids'),
    ipAllowlist: textArray('ip_allowlist'),
    createdAt: ts('created_at').notNull().defaultNow(),
    expiresAt: ts('expires_at').notNull(),
    lastUsedAt: ts('last_used_at'),
    /** The last approved keys.rotate (a new secret and prefix; expiresAt restarts at 90 days). */
    rotatedAt: ts('rotated_at'),
    revokedAt: ts('revoked_at'),
  },
  (t) => [uniqueIndex('api_keys_secret_hash').on(t.secretHash), index('api_keys_owner').on(t.ownerUserId, t.createdAt, t.id)],
);

/** OAuth clients registered with the identity provider; in allowlist mode a row is the policy with its scope ceiling. */
export const oauthClients = pgTable('oauth_clients', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  allowlisted: boolean('allowlisted').notNull().default(false),
  scopeCeiling: textArray('scope_ceiling'),
  createdAt: ts('created_at').notNull().defaultNow(),
});

/** Scopes a user consented to grant an OAuth client. */
export const oauthGrants = pgTable(
  'oauth_grants',
  {
    id: text('id').primaryKey(),
    userId: text('user_id').references(() => users.id).notNull(),
    /** No foreign key: in the open client mode a grant may name an OAuth client without a row. */
    oauthClientId: text('oauth_client_id').notNull(),
    scopes: textArray('scopes'),
    createdAt: ts('created_at').notNull().defaultNow(),
    /** Written at most once a minute when a token issued under the grant authenticates. */
    lastUsedAt: ts('last_used_at'),
    revokedAt: ts('revoked_at'),
  },
  (t) => [index('oauth_grants_user_client').on(t.userId, t.oauthClientId)],
);

export const projects = pgTable(
  'projects',
  {
    id: text('id').primaryKey(),
    clientId: text('client_id').references(() => clients.id).notNull(),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    stage: text('stage').$type<string>().notNull(),
    status: text('status').$type<string>().notNull(),
    startDate: date('start_date', { mode: 'string' }),
    targetDate: date('target_date', { mode: 'string' }),
    version: integer('version').notNull().default(1),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    search: searchVector('search', 'projects'),
  },
  // Lists page by (created_at, id), every client or the caller's clients (lists at scale, issue 16).
  (t) => [
    index('projects_client_created').on(t.clientId, t.createdAt, t.id),
    index('projects_created').on(t.createdAt, t.id),
    index('projects_search').using('gin', t.search),
  ],
);

export const tasks = pgTable(
  'tasks',
  {
    id: text('id').primaryKey(),
    /** Null for an internal (team-board) task. */
    clientId: text('client_id').references(() => clients.id),
    projectId: text('project_id').references(() => projects.id),
    title: text('title').notNull(),
    description: text('description').notNull().default(''),
    status: text('status').$type<string>().notNull(),
    priority: text('priority').$type<string>().notNull(),
    ownerId: text('owner_id'),
    /** Owner plus co-assignees. */
    assigneeIds: textArray('assignee_ids'),
    dueDate: date('due_date', { mode: 'string' }),
    version: integer('version').notNull().default(1),
    createdBy: text('created_by').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    completedAt: ts('completed_at'),
    search: searchVector('search', 'tasks'),
  },
  // tasks.list pages by (created_at, id): every task (an unbound operator), a client's (a key's scope)
  // or a project's (the projectId filter). actions.list finds a person's due tasks as owner or assignee.
  (t) => [
    index('tasks_client_created').on(t.clientId, t.createdAt, t.id),
    index('tasks_created').on(t.createdAt, t.id),
    index('tasks_project_created').on(t.projectId, t.createdAt, t.id),
    index('tasks_owner_due').on(t.ownerId, t.dueDate),
    index('tasks_assignees').using('gin', t.assigneeIds),
    index('tasks_search').using('gin', t.search),
  ],
);

export const taskComments = pgTable(
  'task_comments',
  {
    id: text('id').primaryKey(),
    taskId: text('task_id').references(() => tasks.id).notNull(),
    authorKind: text('author_kind').notNull(),
    authorId: text('author_id').notNull(),
    authorName: text('author_name'),
    body: text('body').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  // A task's comments in order; every comment newest first (timeline.list's comment entries).
  (t) => [index('task_comments_task').on(t.taskId, t.createdAt), index('task_comments_created').on(t.createdAt, t.id)],
);

/** Tier 2/3 proposals. The proposed input is kept so the write can run as the proposer on approval. */
export const approvals = pgTable(
  'approvals',
  {
    id: text('id').primaryKey(),
    operationId: text('operation_id').notNull(),
    tier: integer('tier').notNull(),
    status: text('status').$type<ApprovalStatus>().notNull(),
    /** Client the proposed write concerns (visibility); null for internal. */
    clientId: text('client_id'),
    /** What the proposed write would change (runtime/pipeline/approval-subjects.ts); null when the input names none. */
    subjectType: text('subject_type'),
    subjectId: text('subject_id'),
    proposerKind: text('proposer_kind').notNull(),
    proposerId: text('proposer_id').notNull(),
    proposerName: text('proposer_name'),
    proposerCredentialId: text('proposer_credential_id').notNull(),
    proposerLoginMethod: text('proposer_login_method').notNull(),
    input: jsonb('input').notNull(),
    requiredApprovals: integer('required_approvals').notNull(),
    decisions: jsonb('decisions').notNull().default(sql`'[]'::jsonb`),
    result: jsonb('result'),
    error: jsonb('error'),
    version: integer('version').notNull().default(1),
    createdAt: ts('created_at').notNull().defaultNow(),
    expiresAt: ts('expires_at').notNull(),
    decidedAt: ts('decided_at'),
  },
  // approvals_pending: the svc_approvals_pending gauge counts pending proposals by tier at each scrape.
  (t) => [index('approvals_created').on(t.createdAt, t.id), index('approvals_pending').on(t.tier, t.expiresAt).where(sql`status = 'pending'`)],
);

/** Idempotency store shared by REST and MCP: keyed by (credential, operation, key). */
export const idempotencyRecords = pgTable(
  'idempotency_records',
  {
    /** The credential that sent the key (API key id, OAuth grant id): never shared by two keys of one owner. */
    credentialId: text('credential_id').notNull(),
    operationId: text('operation_id').notNull(),
    key: text('key').notNull(),
    fingerprint: text('fingerprint').notNull(),
    state: text('state').notNull(), // in_progress | done
    /** The request holding an in_progress claim (a random token); its completion must still hold it. */
    holder: text('holder'),
    /** An in_progress claim is live until then; the holder renews it while it runs, a crash lets it lapse. */
    leaseUntil: ts('lease_until').notNull().default(sql`now() + interval '10 seconds'`),
    responseStatus: integer('response_status'),
    responseBody: jsonb('response_body'),
    responseHeaders: jsonb('response_headers'),
    createdAt: ts('created_at').notNull().defaultNow(),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.credentialId, t.operationId, t.key] }), index('idempotency_expires').on(t.expiresAt)],
);

/** Every call, REST and MCP. Never a request body, a token or a secret. */
export const auditLog = pgTable(
  'audit_log',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    at: ts('at').notNull().defaultNow(),
    requestId: text('request_id').notNull(),
    transport: text('transport').notNull(), // rest | mcp
    operationId: text('operation_id'),
    toolName: text('tool_name'),
    method: text('method').notNull(),
    path: text('path').notNull(),
    principalKind: text('principal_kind').$type<PrincipalKind>(),
    principalId: text('principal_id'),
    credentialId: text('credential_id'),
    loginMethod: text('login_method'), // api_key | oauth
    status: integer('status').notNull(),
    outcome: text('outcome').notNull(), // ran | planned | proposed | read | error
    problemCode: text('problem_code'),
    durationMs: integer('duration_ms').notNull(),
  },
  (t) => [index('audit_request').on(t.requestId)],
);

/** Outbox of domain events: the feed, the SSE stream and webhook deliveries read it. */
export const events = pgTable(
  'events',
  {
    seq: bigserial('seq', { mode: 'number' }).primaryKey(),
    id: text('id').notNull(),
    type: text('type').$type<string>().notNull(),
    occurredAt: ts('occurred_at').notNull().defaultNow(),
    clientId: text('client_id'),
    subjectId: text('subject_id').notNull(),
    actorKind: text('actor_kind'),
    actorId: text('actor_id'),
    data: jsonb('data').notNull(),
    /** The W3C traceparent of the span that emitted it (tracing on), so webhook attempts join the request's trace; never served. */
    traceparent: text('traceparent'),
    /**
     * The id of the transaction that wrote it (pg_current_xact_id(), xid8 as bigint; the default, so
     * every insert gets it without a round trip). The feed's order is (txid, seq), published only below
     * the oldest transaction still running (runtime/events/feed.ts; docs/writes.md).
     */
    txid: bigint('txid', { mode: 'number' })
      .notNull()
      .default(sql`(pg_current_xact_id()::text)::bigint`),
  },
  // The feed pages by (txid, seq) (events_client_order for a client's); timeline.list pages the same
  // rows by (occurred_at, id), every client's or one client's.
  (t) => [
    uniqueIndex('events_id').on(t.id),
    index('events_order').on(t.txid, t.seq),
    index('events_client_order').on(t.clientId, t.txid, t.seq),
    index('events_occurred').on(t.occurredAt, t.id),
    index('events_client_occurred').on(t.clientId, t.occurredAt, t.id),
  ],
);

/** Service-wide settings kept in the database (for example the per-database cursor signing secret). */
export const settings = pgTable('settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  createdAt: ts('created_at').notNull().defaultNow(),
});

// -------------------------------------------------------------------------------------------------
// Clients' reviews and hub, CRM, campaigns (issue 11).

/** Deliverables checked by the team before release. Actor columns keep who reviewed and released. */
export const reviews = pgTable(
  'reviews',
  {
    id: text('id').primaryKey(),
    clientId: text('client_id').references(() => clients.id).notNull(),
    projectId: text('project_id').references(() => projects.id),
    title: text('title').notNull(),
    kind: text('kind').$type<string>().notNull(),
    status: text('status').$type<string>().notNull(),
    summary: text('summary').notNull().default(''),
    fileIds: textArray('file_ids'),
    reviewerKind: text('reviewer_kind'),
    reviewerId: text('reviewer_id'),
    reviewerName: text('reviewer_name'),
    releaseNote: text('release_note'),
    releasedAt: ts('released_at'),
    releasedByKind: text('released_by_kind'),
    releasedById: text('released_by_id'),
    releasedByName: text('released_by_name'),
    version: integer('version').notNull().default(1),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    search: searchVector('search', 'reviews'),
  },
  (t) => [
    index('reviews_search').using('gin', t.search),
    index('reviews_created').on(t.createdAt, t.id),
    index('reviews_client_created').on(t.clientId, t.createdAt, t.id),
    // actions.list: the reviews awaiting their next step.
    index('reviews_status').on(t.status),
  ],
);

/** Published versions of a client's hub: a snapshot of its released material and its content hash. */
export const hubPublications = pgTable(
  'hub_publications',
  {
    clientId: text('client_id').references(() => clients.id).notNull(),
    version: integer('version').notNull(),
    contentHash: text('content_hash').notNull(),
    content: jsonb('content').notNull(),
    url: text('url').notNull(),
    note: text('note'),
    publishedAt: ts('published_at').notNull().defaultNow(),
    publishedByKind: text('published_by_kind').notNull(),
    publishedById: text('published_by_id').notNull(),
    publishedByName: text('published_by_name'),
  },
  (t) => [primaryKey({ columns: [t.clientId, t.version] })],
);

/** CRM organisations. client_id null: the platform's own sales rows. */
export const accounts = pgTable(
  'accounts',
  {
    id: text('id').primaryKey(),
    clientId: text('client_id').references(() => clients.id),
    name: text('name').notNull(),
    domain: text('domain'),
    industry: text('industry'),
    status: text('status').$type<string>().notNull(),
    ownerId: text('owner_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    search: searchVector('search', 'accounts'),
  },
  (t) => [index('accounts_search').using('gin', t.search), 
    index('accounts_name').on(sql`${t.name} collate "C"`, t.id),
    index('accounts_client_name').on(t.clientId, sql`${t.name} collate "C"`, t.id),
  ],
);

/** CRM people. name, email and phone are personal data (redacted without pii:read). */
export const contacts = pgTable(
  'contacts',
  {
    id: text('id').primaryKey(),
    clientId: text('client_id').references(() => clients.id),
    accountId: text('account_id').references(() => accounts.id),
    name: text('name').notNull(),
    email: text('email'),
    phone: text('phone'),
    /** The phone's digits only, for exact phone search. */
    phoneDigits: text('phone_digits'),
    jobTitle: text('job_title'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    /** Matched without pii:read: no personal data. */
    searchPublic: searchVector('search_public', 'contacts_public'),
    /** Matched with pii:read only. */
    searchPii: searchVector('search_pii', 'contacts_pii'),
  },
  (t) => [index('contacts_search_public').using('gin', t.searchPublic), index('contacts_search_pii').using('gin', t.searchPii), 
    index('contacts_created').on(t.createdAt, t.id),
    index('contacts_client_created').on(t.clientId, t.createdAt, t.id),
    index('contacts_account').on(t.accountId),
    index('contacts_email_lower').on(sql`lower(${t.email})`),
    index('contacts_phone_digits').on(t.phoneDigits),
  ],
);

export const leads = pgTable(
  'leads',
  {
    id: text('id').primaryKey(),
    clientId: text('client_id').references(() => clients.id),
    title: text('title').notNull(),
    company: text('company').notNull(),
    source: text('source').$type<string>().notNull(),
    status: text('status').$type<string>().notNull(),
    accountId: text('account_id').references(() => accounts.id),
    contactId: text('contact_id').references(() => contacts.id),
    ownerId: text('owner_id'),
    estimatedValue: doublePrecision('estimated_value'),
    currency: text('currency').notNull(),
    notes: text('notes').notNull().default(''),
    version: integer('version').notNull().default(1),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    search: searchVector('search', 'leads'),
  },
  (t) => [index('leads_search').using('gin', t.search), 
    index('leads_created').on(t.createdAt, t.id),
    index('leads_client_created').on(t.clientId, t.createdAt, t.id),
    index('leads_status_created').on(t.status, t.createdAt, t.id),
  ],
);

export const opportunities = pgTable(
  'opportunities',
  {
    id: text('id').primaryKey(),
    clientId: text('client_id').references(() => clients.id),
    accountId: text('account_id').references(() => accounts.id),
    leadId: text('lead_id').references(() => leads.id),
    name: text('name').notNull(),
    stage: text('stage').$type<string>().notNull(),
    amount: doublePrecision('amount'),
    currency: text('currency').notNull(),
    closeDate: date('close_date', { mode: 'string' }),
    ownerId: text('owner_id'),
    convertedProjectId: text('converted_project_id').references(() => projects.id),
    convertedAt: ts('converted_at'),
    version: integer('version').notNull().default(1),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    search: searchVector('search', 'opportunities'),
  },
  (t) => [index('opportunities_search').using('gin', t.search), 
    index('opportunities_created').on(t.createdAt, t.id),
    index('opportunities_client_created').on(t.clientId, t.createdAt, t.id),
    index('opportunities_account').on(t.accountId),
  ],
);

export const touchpoints = pgTable(
  'touchpoints',
  {
    id: text('id').primaryKey(),
    clientId: text('client_id').references(() => clients.id),
    leadId: text('lead_id').references(() => leads.id),
    contactId: text('contact_id').references(() => contacts.id),
    accountId: text('account_id').references(() => accounts.id),
    opportunityId: text('opportunity_id').references(() => opportunities.id),
    channel: text('channel').notNull(),
    direction: text('direction').notNull(),
    summary: text('summary').notNull(),
    occurredAt: ts('occurred_at').notNull(),
    loggedByKind: text('logged_by_kind').notNull(),
    loggedById: text('logged_by_id').notNull(),
    loggedByName: text('logged_by_name'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [index('touchpoints_lead').on(t.leadId), index('touchpoints_client_created').on(t.clientId, t.createdAt, t.id)],
);

export const campaigns = pgTable(
  'campaigns',
  {
    id: text('id').primaryKey(),
    clientId: text('client_id').references(() => clients.id).notNull(),
    name: text('name').notNull(),
    kind: text('kind').$type<string>().notNull(),
    channel: text('channel').notNull(), // email | sms
    status: text('status').$type<string>().notNull(),
    subject: text('subject').notNull().default(''),
    body: text('body').notNull().default(''),
    enrollmentStart: date('enrollment_start', { mode: 'string' }),
    enrollmentEnd: date('enrollment_end', { mode: 'string' }),
    scheduledAt: ts('scheduled_at'),
    sentAt: ts('sent_at'),
    /** The campaign_send operation of the approved send. */
    operationId: text('operation_id').references(() => operations.id),
    version: integer('version').notNull().default(1),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    search: searchVector('search', 'campaigns'),
  },
  (t) => [index('campaigns_search').using('gin', t.search), index('campaigns_created').on(t.createdAt, t.id), index('campaigns_client_created').on(t.clientId, t.createdAt, t.id)],
);

/** Who a campaign goes to (an e-mail address or a phone number, by the campaign's channel). */
export const campaignRecipients = pgTable(
  'campaign_recipients',
  {
    id: text('id').primaryKey(),
    campaignId: text('campaign_id').references(() => campaigns.id).notNull(),
    name: text('name'),
    address: text('address').notNull(),
  },
  (t) => [index('campaign_recipients_campaign').on(t.campaignId)],
);

/** Long-running work (Operation resource): visible to the principal that requested it. */
export const operations = pgTable(
  'operations',
  {
    id: text('id').primaryKey(),
    kind: text('kind').$type<string>().notNull(),
    status: text('status').$type<OperationStatus>().notNull(),
    progress: integer('progress').notNull().default(0),
    requestedByKind: text('requested_by_kind').notNull(),
    requestedById: text('requested_by_id').notNull(),
    requestedByName: text('requested_by_name'),
    requestedByCredentialId: text('requested_by_credential_id').notNull(),
    subjectId: text('subject_id'),
    result: jsonb('result'),
    error: jsonb('error'),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    finishedAt: ts('finished_at'),
    cancelRequestedAt: ts('cancel_requested_at'),
  },
  (t) => [index('operations_requester_created').on(t.requestedByCredentialId, t.createdAt, t.id)],
);

/** Outbox of messages leaving the service (campaign sends). Sent by the delivery loop when SVC_SMTP_URL is set. */
export const outboundMessages = pgTable(
  'outbound_messages',
  {
    id: text('id').primaryKey(),
    operationId: text('operation_id').references(() => operations.id),
    campaignId: text('campaign_id').references(() => campaigns.id),
    channel: text('channel').notNull(), // email | sms
    recipient: text('recipient').notNull(),
    subject: text('subject').notNull().default(''),
    body: text('body').notNull(),
    status: text('status').$type<'queued' | 'sent' | 'failed'>().notNull(),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    /** Not before this time (a scheduled send). */
    notBefore: ts('not_before').notNull().defaultNow(),
    createdAt: ts('created_at').notNull().defaultNow(),
    sentAt: ts('sent_at'),
  },
  (t) => [index('outbound_messages_queue').on(t.status, t.notBefore), index('outbound_messages_operation').on(t.operationId)],
);

/**
 * Webhook endpoints (webhooks.*). Deliveries follow the owner's live reach at send time
 * (runtime/events/webhooks/worker.ts); `widened` is true when an operator created it signed in with OAuth
 * (internal events), never for an API key. `startSeq`: the outbox sequence at creation (only later
 * events are delivered).
 */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: text('id').primaryKey(),
    ownerUserId: text('owner_user_id').references(() => users.id).notNull(),
    widened: boolean('widened').notNull().default(false),
    clientId: text('client_id').references(() => clients.id),
    url: text('url').notNull(),
    description: text('description').notNull().default(''),
    eventTypes: textArray('event_types'),
    status: text('status').$type<WebhookEndpointStatus>().notNull(),
    version: integer('version').notNull().default(1),
    startSeq: bigint('start_seq', { mode: 'number' }).notNull().default(0),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
  },
  (t) => [index('webhook_endpoints_client').on(t.clientId)],
);

/** Signing secrets, sealed (runtime/auth/secret-fields.ts). validUntil null: current; else the rotation overlap's end. */
export const webhookSecrets = pgTable(
  'webhook_secrets',
  {
    id: text('id').primaryKey(),
    endpointId: text('endpoint_id').references(() => webhookEndpoints.id).notNull(),
    sealed: text('sealed').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    validUntil: ts('valid_until'),
  },
  (t) => [index('webhook_secrets_endpoint').on(t.endpointId)],
);

/** One event for one endpoint (unique: never delivered twice), claimed by workers with FOR UPDATE SKIP LOCKED. */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    endpointId: text('endpoint_id').references(() => webhookEndpoints.id).notNull(),
    eventId: text('event_id').notNull(),
    eventType: text('event_type').notNull(),
    /** The Event record sent (the body of every attempt). */
    payload: jsonb('payload').notNull(),
    status: text('status').$type<WebhookDeliveryStatus>().notNull(),
    test: boolean('test').notNull().default(false),
    attempts: integer('attempts').notNull().default(0),
    lastAttemptAt: ts('last_attempt_at'),
    nextAttemptAt: ts('next_attempt_at'),
    /** A worker's claim: another worker takes the row only after this instant (a killed worker's lease lapses). */
    lockedUntil: ts('locked_until'),
    responseStatus: integer('response_status'),
    error: text('error'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('webhook_deliveries_endpoint_event').on(t.endpointId, t.eventId),
    index('webhook_deliveries_due').on(t.status, t.nextAttemptAt),
    index('webhook_deliveries_endpoint').on(t.endpointId, t.createdAt),
  ],
);

/** Every attempt of a delivery (history). */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    deliveryId: text('delivery_id').references(() => webhookDeliveries.id).notNull(),
    attempt: integer('attempt').notNull(),
    at: ts('at').notNull(),
    responseStatus: integer('response_status'),
    error: text('error'),
    durationMs: integer('duration_ms').notNull(),
  },
  (t) => [primaryKey({ columns: [t.deliveryId, t.attempt] })],
);

/** Pipeline runs: a registered pipeline's steps executed by the pipeline worker (runtime/events/workers.ts). */
export const pipelineRuns = pgTable(
  'pipeline_runs',
  {
    id: text('id').primaryKey(),
    /** Null for an internal run (operators only). */
    clientId: text('client_id').references(() => clients.id),
    pipeline: text('pipeline').notNull(),
    status: text('status').$type<PipelineRunStatus>().notNull(),
    trigger: text('trigger').notNull(), // manual | schedule | rerun
    parentRunId: text('parent_run_id').references((): AnyPgColumn => pipelineRuns.id),
    operationId: text('operation_id').references(() => operations.id),
    parameters: jsonb('parameters').notNull().default({}),
    requestedByKind: text('requested_by_kind').notNull(),
    requestedById: text('requested_by_id').notNull(),
    requestedByName: text('requested_by_name'),
    requestedByCredentialId: text('requested_by_credential_id').notNull(),
    /** The worker (process) that claimed the run; a crashed worker's run is resumed by the next claim. */
    claimedBy: text('claimed_by'),
    heartbeatAt: ts('heartbeat_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
    startedAt: ts('started_at'),
    finishedAt: ts('finished_at'),
    error: jsonb('error'),
  },
  // pipeline.runs.list pages by (created_at, id), every run or a client's; actions.list asks whether a
  // failed run was rerun (a child with parent_run_id).
  (t) => [
    index('pipeline_runs_created').on(t.createdAt, t.id),
    index('pipeline_runs_client_created').on(t.clientId, t.createdAt, t.id),
    index('pipeline_runs_status').on(t.status),
    index('pipeline_runs_parent').on(t.parentRunId),
  ],
);

export const pipelineSteps = pgTable(
  'pipeline_steps',
  {
    runId: text('run_id').references(() => pipelineRuns.id).notNull(),
    position: integer('position').notNull(),
    name: text('name').notNull(),
    status: text('status').$type<PipelineStepStatus>().notNull(),
    /** How many times the worker began this step (a crash mid-step leaves it running with attempts 1). */
    attempts: integer('attempts').notNull().default(0),
    startedAt: ts('started_at'),
    finishedAt: ts('finished_at'),
    output: jsonb('output'),
    error: jsonb('error'),
  },
  (t) => [primaryKey({ columns: [t.runId, t.position] })],
);

export const pipelineEvents = pgTable(
  'pipeline_events',
  {
    id: text('id').primaryKey(),
    seq: bigserial('seq', { mode: 'number' }).notNull(),
    runId: text('run_id').references(() => pipelineRuns.id).notNull(),
    clientId: text('client_id'),
    step: text('step'),
    type: text('type').$type<PipelineEventType>().notNull(),
    level: text('level').$type<PipelineLevel>().notNull(),
    /** 0 debug, 1 info, 2 warning, 3 error: the level filter is "this rank and above". */
    levelRank: integer('level_rank').notNull(),
    message: text('message').notNull(),
    occurredAt: ts('occurred_at').notNull().defaultNow(),
    data: jsonb('data').notNull().default({}),
  },
  // pipeline.events.list reads in (occurred_at, seq) order, every client's or one client's.
  (t) => [
    index('pipeline_events_seq').on(t.seq),
    index('pipeline_events_run').on(t.runId, t.seq),
    index('pipeline_events_occurred').on(t.occurredAt, t.seq),
    index('pipeline_events_client_occurred').on(t.clientId, t.occurredAt, t.seq),
  ],
);

/** Execution requests (operators only): recorded by execution.requests.propose, decided in the console. */
export const executionRequests = pgTable(
  'execution_requests',
  {
    id: text('id').primaryKey(),
    clientId: text('client_id').references(() => clients.id),
    kind: text('kind').$type<string>().notNull(),
    title: text('title').notNull(),
    instructions: text('instructions').notNull(),
    parameters: jsonb('parameters').notNull().default({}),
    status: text('status').$type<string>().notNull(),
    jobId: text('job_id'),
    requestedByKind: text('requested_by_kind').notNull(),
    requestedById: text('requested_by_id').notNull(),
    requestedByName: text('requested_by_name'),
    requestedByCredentialId: text('requested_by_credential_id').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    decidedAt: ts('decided_at'),
  },
  (t) => [index('execution_requests_created').on(t.createdAt, t.id)],
);

/** Execution jobs: an accepted request's work, claimed by a runner (FOR UPDATE SKIP LOCKED). */
export const executionJobs = pgTable(
  'execution_jobs',
  {
    id: text('id').primaryKey(),
    requestId: text('request_id').references(() => executionRequests.id).notNull(),
    clientId: text('client_id').references(() => clients.id),
    runner: text('runner'),
    status: text('status').$type<string>().notNull(),
    result: jsonb('result'),
    error: jsonb('error'),
    createdAt: ts('created_at').notNull().defaultNow(),
    startedAt: ts('started_at'),
    finishedAt: ts('finished_at'),
  },
  (t) => [index('execution_jobs_status').on(t.status, t.createdAt)],
);

/**
 * Portal sessions (runtime/portal/sessions.ts): a browser's sign-in, kept server-side behind an
 * HttpOnly cookie holding a random secret of which only the SHA-256 hash is stored. A session ends
 * at expires_at, on sign-out (revoked_at), when its user is disabled, and for an API-key sign-in
 * when that key is revoked or expires.
 */
export const portalSessions = pgTable(
  'portal_sessions',
  {
    id: text('id').primaryKey(),
    secretHash: text('secret_hash').notNull(),
    userId: text('user_id').references(() => users.id).notNull(),
    loginMethod: text('login_method').notNull(), // oidc | api_key
    /** The key used to sign in (login_method api_key). */
    apiKeyId: text('api_key_id').references(() => apiKeys.id),
    createdAt: ts('created_at').notNull().defaultNow(),
    expiresAt: ts('expires_at').notNull(),
    revokedAt: ts('revoked_at'),
  },
  (t) => [uniqueIndex('portal_sessions_secret_hash').on(t.secretHash), index('portal_sessions_user').on(t.userId)],
);

/** An OpenID Connect sign-in under way: state, nonce and PKCE verifier, keyed by a cookie's hash; single use. */
export const portalSignIns = pgTable('portal_sign_ins', {
  id: text('id').primaryKey(),
  state: text('state').notNull(),
  nonce: text('nonce').notNull(),
  codeVerifier: text('code_verifier').notNull(),
  next: text('next').notNull(),
  expiresAt: ts('expires_at').notNull(),
});

/** Requests for access to the developer portal (/request-access), reviewed by hand by operators. */
export const accessRequests = pgTable(
  'access_requests',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    email: text('email').notNull(),
    organisation: text('organisation').notNull(),
    /** operator_scripts | client_admin | other */
    audience: text('audience').notNull(),
    message: text('message').notNull().default(''),
    status: text('status').notNull().default('pending'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [index('access_requests_created').on(t.createdAt)],
);

/**
 * Intake records (issue 12). The fields live on the row as a JSON array (each with its template
 * definition, value, state and source), so one `SELECT … FOR UPDATE` of the record serialises
 * set_field, reopen_field and finalize.
 */
export const intakeRecords = pgTable(
  'intake_records',
  {
    id: text('id').primaryKey(),
    clientId: text('client_id').references(() => clients.id).notNull(),
    projectId: text('project_id').references(() => projects.id),
    title: text('title').notNull(),
    template: text('template').notNull(),
    status: text('status').$type<string>().notNull(),
    fields: jsonb('fields').notNull(),
    version: integer('version').notNull().default(1),
    createdByKind: text('created_by_kind').notNull(),
    createdById: text('created_by_id').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    updatedAt: ts('updated_at').notNull().defaultNow(),
    finalizedAt: ts('finalized_at'),
    search: searchVector('search', 'intake_records'),
  },
  // intake.list pages by (created_at, id), every client's or one client's; actions.list finds a
  // creator's records by status.
  (t) => [
    index('intake_records_search').using('gin', t.search),
    index('intake_records_client_created').on(t.clientId, t.createdAt, t.id),
    index('intake_records_created').on(t.createdAt, t.id),
    index('intake_records_creator_status').on(t.createdById, t.status),
  ],
);

/** Signed upload slots (files.upload_url): pending until bytes arrive, then received, then registered. */
export const uploads = pgTable(
  'uploads',
  {
    id: text('id').primaryKey(),
    clientId: text('client_id').references(() => clients.id),
    name: text('name').notNull(),
    contentType: text('content_type').notNull(),
    /** The size announced (and the most the signed URL accepts). */
    maxBytes: integer('max_bytes').notNull(),
    status: text('status').$type<'pending' | 'receiving' | 'received' | 'registered'>().notNull(),
    sizeBytes: integer('size_bytes'),
    sha256: text('sha256'),
    storageKey: text('storage_key').notNull(),
    requestedByKind: text('requested_by_kind').notNull(),
    requestedById: text('requested_by_id').notNull(),
    requestedByCredentialId: text('requested_by_credential_id').notNull(),
    expiresAt: ts('expires_at').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    receivedAt: ts('received_at'),
  },
  (t) => [index('uploads_status_created').on(t.status, t.createdAt)],
);

/** Registered files (files.register). */
export const files = pgTable(
  'files',
  {
    id: text('id').primaryKey(),
    uploadId: text('upload_id').references(() => uploads.id).notNull(),
    /** Null for an internal file (operators only). */
    clientId: text('client_id').references(() => clients.id),
    projectId: text('project_id').references(() => projects.id),
    intakeId: text('intake_id').references(() => intakeRecords.id),
    name: text('name').notNull(),
    contentType: text('content_type').notNull(),
    sizeBytes: integer('size_bytes').notNull(),
    sha256: text('sha256').notNull(),
    purpose: text('purpose').$type<string>().notNull(),
    status: text('status').$type<FileStatus>().notNull(),
    storageKey: text('storage_key').notNull(),
    extractionId: text('extraction_id'),
    uploadedByKind: text('uploaded_by_kind').notNull(),
    uploadedById: text('uploaded_by_id').notNull(),
    uploadedByName: text('uploaded_by_name'),
    createdAt: ts('created_at').notNull().defaultNow(),
    scannedAt: ts('scanned_at'),
    search: searchVector('search', 'files'),
  },
  (t) => [index('files_search').using('gin', t.search), uniqueIndex('files_upload').on(t.uploadId), index('files_status').on(t.status, t.createdAt)],
);

/** Values read out of an intake document, proposed for the record's fields. */
export const extractions = pgTable(
  'extractions',
  {
    id: text('id').primaryKey(),
    clientId: text('client_id').references(() => clients.id).notNull(),
    fileId: text('file_id').references(() => files.id).notNull(),
    intakeId: text('intake_id').references(() => intakeRecords.id),
    operationId: text('operation_id').references(() => operations.id),
    status: text('status').$type<ExtractionStatus>().notNull(),
    fields: jsonb('fields').notNull().default(sql`'[]'::jsonb`),
    error: jsonb('error'),
    createdAt: ts('created_at').notNull().defaultNow(),
    startedAt: ts('started_at'),
    completedAt: ts('completed_at'),
  },
  (t) => [index('extractions_status').on(t.status, t.createdAt)],
);


/**
 * Notifications (issue 13): messages to one person (users.id), written by runtime/events/notifications.ts
 * in the transaction of their cause. read_at is set once (the first notifications.read keeps it).
 */
export const notifications = pgTable(
  'notifications',
  {
    id: text('id').primaryKey(),
    userId: text('user_id').references(() => users.id).notNull(),
    kind: text('kind').$type<string>().notNull(),
    title: text('title').notNull(),
    body: text('body').notNull().default(''),
    clientId: text('client_id'),
    subjectId: text('subject_id'),
    /** The subject's API path (/v1/tasks/tsk_…); the read answers it as an absolute URL. */
    path: text('path'),
    readAt: ts('read_at'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [index('notifications_user_created').on(t.userId, t.createdAt, t.id)],
);
