// The Platform API's domain tables (drizzle-orm, PostgreSQL; the same on PGlite), beside its handlers:
// projects and tasks, reviews and hub publications, the CRM, campaigns, pipeline runs, execution
// requests and jobs, intake records and extractions. The runtime's own tables (tenancy, keys,
// idempotency, audit, events, webhooks, approvals, operations, files...) are runtime/data/schema.ts;
// drizzle-kit generates the project's one migration history (handlers/data/migrations) over both
// (drizzle.config.ts). runtime/ never imports this file (docs/layout.md).
import { sql } from 'drizzle-orm';
import { type AnyPgColumn, bigserial, date, doublePrecision, index, integer, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { clients, files, operations, outboundMessages, RUNTIME_SEARCH_PARTS, searchVector, textArray, ts, type SearchParts } from '../../runtime/data/schema.ts';

// The value types of the domain's status columns the pipeline and file workers write
// (test/governance/runtime-domainless.test.ts checks them against the contract's).
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

export type ExtractionStatus = 'queued' | 'running' | 'succeeded' | 'failed';

/** The columns each searchable table's vector is made of (handlers/search.ts reads the same lists). */
export const SEARCH_PARTS = {
  clients: RUNTIME_SEARCH_PARTS.clients,
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
  files: RUNTIME_SEARCH_PARTS.files,
} as const satisfies Record<string, SearchParts>;

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
    search: searchVector('search', SEARCH_PARTS.projects),
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
    search: searchVector('search', SEARCH_PARTS.tasks),
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
    search: searchVector('search', SEARCH_PARTS.reviews),
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
    search: searchVector('search', SEARCH_PARTS.accounts),
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
    searchPublic: searchVector('search_public', SEARCH_PARTS.contacts_public),
    /** Matched with pii:read only. */
    searchPii: searchVector('search_pii', SEARCH_PARTS.contacts_pii),
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
    search: searchVector('search', SEARCH_PARTS.leads),
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
    search: searchVector('search', SEARCH_PARTS.opportunities),
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
    search: searchVector('search', SEARCH_PARTS.campaigns),
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

/** Pipeline runs: a registered pipeline's steps executed by the pipeline worker (handlers/workers/pipeline-runs.ts). */
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
    search: searchVector('search', SEARCH_PARTS.intake_records),
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
  (t) => [index('extractions_status').on(t.status, t.createdAt), index('extractions_file').on(t.fileId)],
);

/**
 * A file's links to this API's records (files.register: projectId, intakeId): the runtime's files
 * table names no domain record. One row per file that has a link; a file's extraction is found by
 * extractions.file_id.
 */
export const fileLinks = pgTable(
  'file_links',
  {
    fileId: text('file_id').primaryKey().references(() => files.id),
    projectId: text('project_id').references(() => projects.id),
    intakeId: text('intake_id').references(() => intakeRecords.id),
  },
  (t) => [index('file_links_project').on(t.projectId), index('file_links_intake').on(t.intakeId)],
);

/** The campaign an outbound message (the runtime's outbox) was sent for, written with the message. */
export const campaignMessages = pgTable(
  'campaign_messages',
  {
    messageId: text('message_id').primaryKey().references(() => outboundMessages.id),
    campaignId: text('campaign_id').references(() => campaigns.id).notNull(),
  },
  (t) => [index('campaign_messages_campaign').on(t.campaignId)],
);
