CREATE TABLE "access_requests" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"email" text NOT NULL,
	"organisation" text NOT NULL,
	"audience" text NOT NULL,
	"message" text DEFAULT '' NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "accounts" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text,
	"name" text NOT NULL,
	"domain" text,
	"industry" text,
	"status" text NOT NULL,
	"owner_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"search" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, coalesce(name, '')), 'A') || setweight(to_tsvector('simple'::regconfig, coalesce(domain, '')), 'B') || setweight(to_tsvector('simple'::regconfig, coalesce(industry, '')), 'D')) STORED
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"owner_user_id" text NOT NULL,
	"name" text NOT NULL,
	"mode" text NOT NULL,
	"prefix" text NOT NULL,
	"secret_hash" text NOT NULL,
	"scopes" text[] DEFAULT '{}'::text[] NOT NULL,
	"client_ids" text[] DEFAULT '{}'::text[] NOT NULL,
	"ip_allowlist" text[] DEFAULT '{}'::text[] NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"last_used_at" timestamp with time zone,
	"rotated_at" timestamp with time zone,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "approvals" (
	"id" text PRIMARY KEY NOT NULL,
	"operation_id" text NOT NULL,
	"tier" integer NOT NULL,
	"status" text NOT NULL,
	"client_id" text,
	"subject_type" text,
	"subject_id" text,
	"proposer_kind" text NOT NULL,
	"proposer_id" text NOT NULL,
	"proposer_name" text,
	"proposer_credential_id" text NOT NULL,
	"proposer_login_method" text NOT NULL,
	"input" jsonb NOT NULL,
	"required_approvals" integer NOT NULL,
	"decisions" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"result" jsonb,
	"error" jsonb,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"decided_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "audit_log" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"request_id" text NOT NULL,
	"transport" text NOT NULL,
	"operation_id" text,
	"tool_name" text,
	"method" text NOT NULL,
	"path" text NOT NULL,
	"principal_kind" text,
	"principal_id" text,
	"credential_id" text,
	"login_method" text,
	"status" integer NOT NULL,
	"outcome" text NOT NULL,
	"problem_code" text,
	"duration_ms" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "campaign_recipients" (
	"id" text PRIMARY KEY NOT NULL,
	"campaign_id" text NOT NULL,
	"name" text,
	"address" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "campaigns" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"name" text NOT NULL,
	"kind" text NOT NULL,
	"channel" text NOT NULL,
	"status" text NOT NULL,
	"subject" text DEFAULT '' NOT NULL,
	"body" text DEFAULT '' NOT NULL,
	"enrollment_start" date,
	"enrollment_end" date,
	"scheduled_at" timestamp with time zone,
	"sent_at" timestamp with time zone,
	"operation_id" text,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"search" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, coalesce(name, '')), 'A') || setweight(to_tsvector('simple'::regconfig, coalesce(subject, '')), 'D')) STORED
);
--> statement-breakpoint
CREATE TABLE "clients" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"status" text NOT NULL,
	"industry" text,
	"primary_contact_name" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"search" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, coalesce(name, '')), 'A') || setweight(to_tsvector('simple'::regconfig, coalesce(industry, '')), 'D')) STORED
);
--> statement-breakpoint
CREATE TABLE "contacts" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text,
	"account_id" text,
	"name" text NOT NULL,
	"email" text,
	"phone" text,
	"phone_digits" text,
	"job_title" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"search_public" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, coalesce(job_title, '')), 'A')) STORED,
	"search_pii" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, coalesce(name, '')), 'A') || setweight(to_tsvector('simple'::regconfig, coalesce(email, '')), 'B') || setweight(to_tsvector('simple'::regconfig, coalesce(phone, '')), 'B') || setweight(to_tsvector('simple'::regconfig, coalesce(phone_digits, '')), 'B') || setweight(to_tsvector('simple'::regconfig, coalesce(job_title, '')), 'C')) STORED
);
--> statement-breakpoint
CREATE TABLE "events" (
	"seq" bigserial PRIMARY KEY NOT NULL,
	"id" text NOT NULL,
	"type" text NOT NULL,
	"occurred_at" timestamp with time zone DEFAULT now() NOT NULL,
	"client_id" text,
	"subject_id" text NOT NULL,
	"actor_kind" text,
	"actor_id" text,
	"data" jsonb NOT NULL,
	"traceparent" text,
	"txid" bigint DEFAULT (pg_current_xact_id()::text)::bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "execution_jobs" (
	"id" text PRIMARY KEY NOT NULL,
	"request_id" text NOT NULL,
	"client_id" text,
	"runner" text,
	"status" text NOT NULL,
	"result" jsonb,
	"error" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "execution_requests" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text,
	"kind" text NOT NULL,
	"title" text NOT NULL,
	"instructions" text NOT NULL,
	"parameters" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"status" text NOT NULL,
	"job_id" text,
	"requested_by_kind" text NOT NULL,
	"requested_by_id" text NOT NULL,
	"requested_by_name" text,
	"requested_by_credential_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"decided_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "extractions" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"file_id" text NOT NULL,
	"intake_id" text,
	"operation_id" text,
	"status" text NOT NULL,
	"fields" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"error" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "files" (
	"id" text PRIMARY KEY NOT NULL,
	"upload_id" text NOT NULL,
	"client_id" text,
	"project_id" text,
	"intake_id" text,
	"name" text NOT NULL,
	"content_type" text NOT NULL,
	"size_bytes" integer NOT NULL,
	"sha256" text NOT NULL,
	"purpose" text NOT NULL,
	"status" text NOT NULL,
	"storage_key" text NOT NULL,
	"extraction_id" text,
	"uploaded_by_kind" text NOT NULL,
	"uploaded_by_id" text NOT NULL,
	"uploaded_by_name" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"scanned_at" timestamp with time zone,
	"search" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, coalesce(name, '')), 'A')) STORED
);
--> statement-breakpoint
CREATE TABLE "hub_publications" (
	"client_id" text NOT NULL,
	"version" integer NOT NULL,
	"content_hash" text NOT NULL,
	"content" jsonb NOT NULL,
	"url" text NOT NULL,
	"note" text,
	"published_at" timestamp with time zone DEFAULT now() NOT NULL,
	"published_by_kind" text NOT NULL,
	"published_by_id" text NOT NULL,
	"published_by_name" text,
	CONSTRAINT "hub_publications_client_id_version_pk" PRIMARY KEY("client_id","version")
);
--> statement-breakpoint
CREATE TABLE "idempotency_records" (
	"credential_id" text NOT NULL,
	"operation_id" text NOT NULL,
	"key" text NOT NULL,
	"fingerprint" text NOT NULL,
	"state" text NOT NULL,
	"holder" text,
	"lease_until" timestamp with time zone DEFAULT now() + interval '10 seconds' NOT NULL,
	"response_status" integer,
	"response_body" jsonb,
	"response_headers" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "idempotency_records_credential_id_operation_id_key_pk" PRIMARY KEY("credential_id","operation_id","key")
);
--> statement-breakpoint
CREATE TABLE "intake_records" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"project_id" text,
	"title" text NOT NULL,
	"template" text NOT NULL,
	"status" text NOT NULL,
	"fields" jsonb NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"created_by_kind" text NOT NULL,
	"created_by_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finalized_at" timestamp with time zone,
	"search" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, coalesce(title, '')), 'A') || setweight(to_tsvector('simple'::regconfig, coalesce(template, '')), 'D')) STORED
);
--> statement-breakpoint
CREATE TABLE "leads" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text,
	"title" text NOT NULL,
	"company" text NOT NULL,
	"source" text NOT NULL,
	"status" text NOT NULL,
	"account_id" text,
	"contact_id" text,
	"owner_id" text,
	"estimated_value" double precision,
	"currency" text NOT NULL,
	"notes" text DEFAULT '' NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"search" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, coalesce(title, '')), 'A') || setweight(to_tsvector('simple'::regconfig, coalesce(company, '')), 'B')) STORED
);
--> statement-breakpoint
CREATE TABLE "memberships" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text,
	"client_id" text NOT NULL,
	"kind" text DEFAULT 'client_admin' NOT NULL,
	"email" text,
	"name" text,
	"role" text NOT NULL,
	"status" text NOT NULL,
	"invited_by_kind" text,
	"invited_by_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"accepted_at" timestamp with time zone,
	"expires_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "notifications" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"kind" text NOT NULL,
	"title" text NOT NULL,
	"body" text DEFAULT '' NOT NULL,
	"client_id" text,
	"subject_id" text,
	"path" text,
	"read_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "oauth_clients" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"allowlisted" boolean DEFAULT false NOT NULL,
	"scope_ceiling" text[] DEFAULT '{}'::text[] NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "oauth_grants" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"oauth_client_id" text NOT NULL,
	"scopes" text[] DEFAULT '{}'::text[] NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "operations" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"status" text NOT NULL,
	"progress" integer DEFAULT 0 NOT NULL,
	"requested_by_kind" text NOT NULL,
	"requested_by_id" text NOT NULL,
	"requested_by_name" text,
	"requested_by_credential_id" text NOT NULL,
	"subject_id" text,
	"result" jsonb,
	"error" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	"cancel_requested_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "opportunities" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text,
	"account_id" text,
	"lead_id" text,
	"name" text NOT NULL,
	"stage" text NOT NULL,
	"amount" double precision,
	"currency" text NOT NULL,
	"close_date" date,
	"owner_id" text,
	"converted_project_id" text,
	"converted_at" timestamp with time zone,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"search" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, coalesce(name, '')), 'A')) STORED
);
--> statement-breakpoint
CREATE TABLE "outbound_messages" (
	"id" text PRIMARY KEY NOT NULL,
	"operation_id" text,
	"campaign_id" text,
	"channel" text NOT NULL,
	"recipient" text NOT NULL,
	"subject" text DEFAULT '' NOT NULL,
	"body" text NOT NULL,
	"status" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"not_before" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"sent_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "pipeline_events" (
	"id" text PRIMARY KEY NOT NULL,
	"seq" bigserial NOT NULL,
	"run_id" text NOT NULL,
	"client_id" text,
	"step" text,
	"type" text NOT NULL,
	"level" text NOT NULL,
	"level_rank" integer NOT NULL,
	"message" text NOT NULL,
	"occurred_at" timestamp with time zone DEFAULT now() NOT NULL,
	"data" jsonb DEFAULT '{}'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pipeline_runs" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text,
	"pipeline" text NOT NULL,
	"status" text NOT NULL,
	"trigger" text NOT NULL,
	"parent_run_id" text,
	"operation_id" text,
	"parameters" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"requested_by_kind" text NOT NULL,
	"requested_by_id" text NOT NULL,
	"requested_by_name" text,
	"requested_by_credential_id" text NOT NULL,
	"claimed_by" text,
	"heartbeat_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"error" jsonb
);
--> statement-breakpoint
CREATE TABLE "pipeline_steps" (
	"run_id" text NOT NULL,
	"position" integer NOT NULL,
	"name" text NOT NULL,
	"status" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"output" jsonb,
	"error" jsonb,
	CONSTRAINT "pipeline_steps_run_id_position_pk" PRIMARY KEY("run_id","position")
);
--> statement-breakpoint
CREATE TABLE "portal_sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"secret_hash" text NOT NULL,
	"user_id" text NOT NULL,
	"login_method" text NOT NULL,
	"api_key_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "portal_sign_ins" (
	"id" text PRIMARY KEY NOT NULL,
	"state" text NOT NULL,
	"nonce" text NOT NULL,
	"code_verifier" text NOT NULL,
	"next" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "projects" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"stage" text NOT NULL,
	"status" text NOT NULL,
	"start_date" date,
	"target_date" date,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"search" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, coalesce(name, '')), 'A') || setweight(to_tsvector('simple'::regconfig, coalesce(description, '')), 'D')) STORED
);
--> statement-breakpoint
CREATE TABLE "reviews" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text NOT NULL,
	"project_id" text,
	"title" text NOT NULL,
	"kind" text NOT NULL,
	"status" text NOT NULL,
	"summary" text DEFAULT '' NOT NULL,
	"file_ids" text[] DEFAULT '{}'::text[] NOT NULL,
	"reviewer_kind" text,
	"reviewer_id" text,
	"reviewer_name" text,
	"release_note" text,
	"released_at" timestamp with time zone,
	"released_by_kind" text,
	"released_by_id" text,
	"released_by_name" text,
	"version" integer DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"search" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, coalesce(title, '')), 'A') || setweight(to_tsvector('simple'::regconfig, coalesce(summary, '')), 'D')) STORED
);
--> statement-breakpoint
CREATE TABLE "settings" (
	"key" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "task_comments" (
	"id" text PRIMARY KEY NOT NULL,
	"task_id" text NOT NULL,
	"author_kind" text NOT NULL,
	"author_id" text NOT NULL,
	"author_name" text,
	"body" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tasks" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text,
	"project_id" text,
	"title" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"status" text NOT NULL,
	"priority" text NOT NULL,
	"owner_id" text,
	"assignee_ids" text[] DEFAULT '{}'::text[] NOT NULL,
	"due_date" date,
	"version" integer DEFAULT 1 NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone,
	"search" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, coalesce(title, '')), 'A') || setweight(to_tsvector('simple'::regconfig, coalesce(description, '')), 'D')) STORED
);
--> statement-breakpoint
CREATE TABLE "touchpoints" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text,
	"lead_id" text,
	"contact_id" text,
	"account_id" text,
	"opportunity_id" text,
	"channel" text NOT NULL,
	"direction" text NOT NULL,
	"summary" text NOT NULL,
	"occurred_at" timestamp with time zone NOT NULL,
	"logged_by_kind" text NOT NULL,
	"logged_by_id" text NOT NULL,
	"logged_by_name" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "uploads" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text,
	"name" text NOT NULL,
	"content_type" text NOT NULL,
	"max_bytes" integer NOT NULL,
	"status" text NOT NULL,
	"size_bytes" integer,
	"sha256" text,
	"storage_key" text NOT NULL,
	"requested_by_kind" text NOT NULL,
	"requested_by_id" text NOT NULL,
	"requested_by_credential_id" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"received_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"name" text NOT NULL,
	"email" text NOT NULL,
	"role" text NOT NULL,
	"all_clients" boolean DEFAULT false NOT NULL,
	"oauth_subject" text NOT NULL,
	"disabled_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_attempts" (
	"delivery_id" text NOT NULL,
	"attempt" integer NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"response_status" integer,
	"error" text,
	"duration_ms" integer NOT NULL,
	CONSTRAINT "webhook_attempts_delivery_id_attempt_pk" PRIMARY KEY("delivery_id","attempt")
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"endpoint_id" text NOT NULL,
	"event_id" text NOT NULL,
	"event_type" text NOT NULL,
	"payload" jsonb NOT NULL,
	"status" text NOT NULL,
	"test" boolean DEFAULT false NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_attempt_at" timestamp with time zone,
	"next_attempt_at" timestamp with time zone,
	"locked_until" timestamp with time zone,
	"response_status" integer,
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_endpoints" (
	"id" text PRIMARY KEY NOT NULL,
	"owner_user_id" text NOT NULL,
	"widened" boolean DEFAULT false NOT NULL,
	"client_id" text,
	"url" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"event_types" text[] DEFAULT '{}'::text[] NOT NULL,
	"status" text NOT NULL,
	"version" integer DEFAULT 1 NOT NULL,
	"start_seq" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_secrets" (
	"id" text PRIMARY KEY NOT NULL,
	"endpoint_id" text NOT NULL,
	"sealed" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"valid_until" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "notes" (
	"id" text PRIMARY KEY NOT NULL,
	"body" text NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp (6) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_owner_user_id_users_id_fk" FOREIGN KEY ("owner_user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaign_recipients" ADD CONSTRAINT "campaign_recipients_campaign_id_campaigns_id_fk" FOREIGN KEY ("campaign_id") REFERENCES "public"."campaigns"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaigns" ADD CONSTRAINT "campaigns_operation_id_operations_id_fk" FOREIGN KEY ("operation_id") REFERENCES "public"."operations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "execution_jobs" ADD CONSTRAINT "execution_jobs_request_id_execution_requests_id_fk" FOREIGN KEY ("request_id") REFERENCES "public"."execution_requests"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "execution_jobs" ADD CONSTRAINT "execution_jobs_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "execution_requests" ADD CONSTRAINT "execution_requests_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "extractions" ADD CONSTRAINT "extractions_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "extractions" ADD CONSTRAINT "extractions_file_id_files_id_fk" FOREIGN KEY ("file_id") REFERENCES "public"."files"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "extractions" ADD CONSTRAINT "extractions_intake_id_intake_records_id_fk" FOREIGN KEY ("intake_id") REFERENCES "public"."intake_records"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "extractions" ADD CONSTRAINT "extractions_operation_id_operations_id_fk" FOREIGN KEY ("operation_id") REFERENCES "public"."operations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "files" ADD CONSTRAINT "files_upload_id_uploads_id_fk" FOREIGN KEY ("upload_id") REFERENCES "public"."uploads"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "files" ADD CONSTRAINT "files_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "files" ADD CONSTRAINT "files_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "files" ADD CONSTRAINT "files_intake_id_intake_records_id_fk" FOREIGN KEY ("intake_id") REFERENCES "public"."intake_records"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "hub_publications" ADD CONSTRAINT "hub_publications_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "intake_records" ADD CONSTRAINT "intake_records_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "intake_records" ADD CONSTRAINT "intake_records_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "leads" ADD CONSTRAINT "leads_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "leads" ADD CONSTRAINT "leads_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "leads" ADD CONSTRAINT "leads_contact_id_contacts_id_fk" FOREIGN KEY ("contact_id") REFERENCES "public"."contacts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oauth_grants" ADD CONSTRAINT "oauth_grants_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "opportunities" ADD CONSTRAINT "opportunities_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "opportunities" ADD CONSTRAINT "opportunities_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "opportunities" ADD CONSTRAINT "opportunities_lead_id_leads_id_fk" FOREIGN KEY ("lead_id") REFERENCES "public"."leads"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "opportunities" ADD CONSTRAINT "opportunities_converted_project_id_projects_id_fk" FOREIGN KEY ("converted_project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "outbound_messages" ADD CONSTRAINT "outbound_messages_operation_id_operations_id_fk" FOREIGN KEY ("operation_id") REFERENCES "public"."operations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "outbound_messages" ADD CONSTRAINT "outbound_messages_campaign_id_campaigns_id_fk" FOREIGN KEY ("campaign_id") REFERENCES "public"."campaigns"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_events" ADD CONSTRAINT "pipeline_events_run_id_pipeline_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."pipeline_runs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_runs" ADD CONSTRAINT "pipeline_runs_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_runs" ADD CONSTRAINT "pipeline_runs_parent_run_id_pipeline_runs_id_fk" FOREIGN KEY ("parent_run_id") REFERENCES "public"."pipeline_runs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_runs" ADD CONSTRAINT "pipeline_runs_operation_id_operations_id_fk" FOREIGN KEY ("operation_id") REFERENCES "public"."operations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pipeline_steps" ADD CONSTRAINT "pipeline_steps_run_id_pipeline_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."pipeline_runs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "portal_sessions" ADD CONSTRAINT "portal_sessions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "portal_sessions" ADD CONSTRAINT "portal_sessions_api_key_id_api_keys_id_fk" FOREIGN KEY ("api_key_id") REFERENCES "public"."api_keys"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "projects" ADD CONSTRAINT "projects_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reviews" ADD CONSTRAINT "reviews_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reviews" ADD CONSTRAINT "reviews_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "task_comments" ADD CONSTRAINT "task_comments_task_id_tasks_id_fk" FOREIGN KEY ("task_id") REFERENCES "public"."tasks"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "touchpoints" ADD CONSTRAINT "touchpoints_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "touchpoints" ADD CONSTRAINT "touchpoints_lead_id_leads_id_fk" FOREIGN KEY ("lead_id") REFERENCES "public"."leads"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "touchpoints" ADD CONSTRAINT "touchpoints_contact_id_contacts_id_fk" FOREIGN KEY ("contact_id") REFERENCES "public"."contacts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "touchpoints" ADD CONSTRAINT "touchpoints_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "touchpoints" ADD CONSTRAINT "touchpoints_opportunity_id_opportunities_id_fk" FOREIGN KEY ("opportunity_id") REFERENCES "public"."opportunities"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "uploads" ADD CONSTRAINT "uploads_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_delivery_id_webhook_deliveries_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "public"."webhook_deliveries"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_id_webhook_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."webhook_endpoints"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_owner_user_id_users_id_fk" FOREIGN KEY ("owner_user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_client_id_clients_id_fk" FOREIGN KEY ("client_id") REFERENCES "public"."clients"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_secrets" ADD CONSTRAINT "webhook_secrets_endpoint_id_webhook_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."webhook_endpoints"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "access_requests_created" ON "access_requests" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "accounts_search" ON "accounts" USING gin ("search");--> statement-breakpoint
CREATE INDEX "accounts_name" ON "accounts" USING btree ("name" collate "C","id");--> statement-breakpoint
CREATE INDEX "accounts_client_name" ON "accounts" USING btree ("client_id","name" collate "C","id");--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_secret_hash" ON "api_keys" USING btree ("secret_hash");--> statement-breakpoint
CREATE INDEX "api_keys_owner" ON "api_keys" USING btree ("owner_user_id","created_at","id");--> statement-breakpoint
CREATE INDEX "approvals_created" ON "approvals" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "approvals_pending" ON "approvals" USING btree ("tier","expires_at") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "audit_request" ON "audit_log" USING btree ("request_id");--> statement-breakpoint
CREATE INDEX "campaign_recipients_campaign" ON "campaign_recipients" USING btree ("campaign_id");--> statement-breakpoint
CREATE INDEX "campaigns_search" ON "campaigns" USING gin ("search");--> statement-breakpoint
CREATE INDEX "campaigns_created" ON "campaigns" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "campaigns_client_created" ON "campaigns" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE INDEX "clients_search" ON "clients" USING gin ("search");--> statement-breakpoint
CREATE INDEX "clients_name" ON "clients" USING btree ("name" collate "C","id");--> statement-breakpoint
CREATE INDEX "contacts_search_public" ON "contacts" USING gin ("search_public");--> statement-breakpoint
CREATE INDEX "contacts_search_pii" ON "contacts" USING gin ("search_pii");--> statement-breakpoint
CREATE INDEX "contacts_created" ON "contacts" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "contacts_client_created" ON "contacts" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE INDEX "contacts_account" ON "contacts" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "contacts_email_lower" ON "contacts" USING btree (lower("email"));--> statement-breakpoint
CREATE INDEX "contacts_phone_digits" ON "contacts" USING btree ("phone_digits");--> statement-breakpoint
CREATE UNIQUE INDEX "events_id" ON "events" USING btree ("id");--> statement-breakpoint
CREATE INDEX "events_order" ON "events" USING btree ("txid","seq");--> statement-breakpoint
CREATE INDEX "events_client_order" ON "events" USING btree ("client_id","txid","seq");--> statement-breakpoint
CREATE INDEX "events_occurred" ON "events" USING btree ("occurred_at","id");--> statement-breakpoint
CREATE INDEX "events_client_occurred" ON "events" USING btree ("client_id","occurred_at","id");--> statement-breakpoint
CREATE INDEX "execution_jobs_status" ON "execution_jobs" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "execution_requests_created" ON "execution_requests" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "extractions_status" ON "extractions" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "files_search" ON "files" USING gin ("search");--> statement-breakpoint
CREATE UNIQUE INDEX "files_upload" ON "files" USING btree ("upload_id");--> statement-breakpoint
CREATE INDEX "files_status" ON "files" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "idempotency_expires" ON "idempotency_records" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "intake_records_search" ON "intake_records" USING gin ("search");--> statement-breakpoint
CREATE INDEX "intake_records_client_created" ON "intake_records" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE INDEX "intake_records_created" ON "intake_records" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "intake_records_creator_status" ON "intake_records" USING btree ("created_by_id","status");--> statement-breakpoint
CREATE INDEX "leads_search" ON "leads" USING gin ("search");--> statement-breakpoint
CREATE INDEX "leads_created" ON "leads" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "leads_client_created" ON "leads" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE INDEX "leads_status_created" ON "leads" USING btree ("status","created_at","id");--> statement-breakpoint
CREATE INDEX "memberships_user" ON "memberships" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "memberships_client" ON "memberships" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE INDEX "memberships_invited_expiry" ON "memberships" USING btree ("expires_at") WHERE status = 'invited';--> statement-breakpoint
CREATE UNIQUE INDEX "memberships_open_invitation" ON "memberships" USING btree ("email","client_id","role") WHERE status in ('invited', 'active');--> statement-breakpoint
CREATE INDEX "notifications_user_created" ON "notifications" USING btree ("user_id","created_at","id");--> statement-breakpoint
CREATE INDEX "oauth_grants_user_client" ON "oauth_grants" USING btree ("user_id","oauth_client_id");--> statement-breakpoint
CREATE INDEX "operations_requester_created" ON "operations" USING btree ("requested_by_credential_id","created_at","id");--> statement-breakpoint
CREATE INDEX "opportunities_search" ON "opportunities" USING gin ("search");--> statement-breakpoint
CREATE INDEX "opportunities_created" ON "opportunities" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "opportunities_client_created" ON "opportunities" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE INDEX "opportunities_account" ON "opportunities" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "outbound_messages_queue" ON "outbound_messages" USING btree ("status","not_before");--> statement-breakpoint
CREATE INDEX "outbound_messages_operation" ON "outbound_messages" USING btree ("operation_id");--> statement-breakpoint
CREATE INDEX "pipeline_events_seq" ON "pipeline_events" USING btree ("seq");--> statement-breakpoint
CREATE INDEX "pipeline_events_run" ON "pipeline_events" USING btree ("run_id","seq");--> statement-breakpoint
CREATE INDEX "pipeline_events_occurred" ON "pipeline_events" USING btree ("occurred_at","seq");--> statement-breakpoint
CREATE INDEX "pipeline_events_client_occurred" ON "pipeline_events" USING btree ("client_id","occurred_at","seq");--> statement-breakpoint
CREATE INDEX "pipeline_runs_created" ON "pipeline_runs" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "pipeline_runs_client_created" ON "pipeline_runs" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE INDEX "pipeline_runs_status" ON "pipeline_runs" USING btree ("status");--> statement-breakpoint
CREATE INDEX "pipeline_runs_parent" ON "pipeline_runs" USING btree ("parent_run_id");--> statement-breakpoint
CREATE UNIQUE INDEX "portal_sessions_secret_hash" ON "portal_sessions" USING btree ("secret_hash");--> statement-breakpoint
CREATE INDEX "portal_sessions_user" ON "portal_sessions" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "projects_client_created" ON "projects" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE INDEX "projects_created" ON "projects" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "projects_search" ON "projects" USING gin ("search");--> statement-breakpoint
CREATE INDEX "reviews_search" ON "reviews" USING gin ("search");--> statement-breakpoint
CREATE INDEX "reviews_created" ON "reviews" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "reviews_client_created" ON "reviews" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE INDEX "reviews_status" ON "reviews" USING btree ("status");--> statement-breakpoint
CREATE INDEX "task_comments_task" ON "task_comments" USING btree ("task_id","created_at");--> statement-breakpoint
CREATE INDEX "task_comments_created" ON "task_comments" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "tasks_client_created" ON "tasks" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE INDEX "tasks_created" ON "tasks" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "tasks_project_created" ON "tasks" USING btree ("project_id","created_at","id");--> statement-breakpoint
CREATE INDEX "tasks_owner_due" ON "tasks" USING btree ("owner_id","due_date");--> statement-breakpoint
CREATE INDEX "tasks_assignees" ON "tasks" USING gin ("assignee_ids");--> statement-breakpoint
CREATE INDEX "tasks_search" ON "tasks" USING gin ("search");--> statement-breakpoint
CREATE INDEX "touchpoints_lead" ON "touchpoints" USING btree ("lead_id");--> statement-breakpoint
CREATE INDEX "touchpoints_client_created" ON "touchpoints" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE INDEX "uploads_status_created" ON "uploads" USING btree ("status","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "users_oauth_subject" ON "users" USING btree ("oauth_subject");--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_endpoint_event" ON "webhook_deliveries" USING btree ("endpoint_id","event_id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due" ON "webhook_deliveries" USING btree ("status","next_attempt_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_endpoint" ON "webhook_deliveries" USING btree ("endpoint_id","created_at");--> statement-breakpoint
CREATE INDEX "webhook_endpoints_client" ON "webhook_endpoints" USING btree ("client_id");--> statement-breakpoint
CREATE INDEX "webhook_secrets_endpoint" ON "webhook_secrets" USING btree ("endpoint_id");--> statement-breakpoint
CREATE INDEX "notes_created_at" ON "notes" USING btree ("created_at","id");