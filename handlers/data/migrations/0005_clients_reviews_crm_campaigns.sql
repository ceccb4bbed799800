CREATE TABLE "accounts" (
	"id" text PRIMARY KEY NOT NULL,
	"client_id" text,
	"name" text NOT NULL,
	"domain" text,
	"industry" text,
	"status" text NOT NULL,
	"owner_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
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
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
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
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
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
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
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
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
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
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
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
CREATE INDEX "accounts_name" ON "accounts" USING btree ("name" collate "C","id");--> statement-breakpoint
CREATE INDEX "accounts_client_name" ON "accounts" USING btree ("client_id","name" collate "C","id");--> statement-breakpoint
CREATE INDEX "campaign_recipients_campaign" ON "campaign_recipients" USING btree ("campaign_id");--> statement-breakpoint
CREATE INDEX "campaigns_created" ON "campaigns" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "campaigns_client_created" ON "campaigns" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE INDEX "contacts_created" ON "contacts" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "contacts_client_created" ON "contacts" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE INDEX "contacts_account" ON "contacts" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "contacts_email_lower" ON "contacts" USING btree (lower("email"));--> statement-breakpoint
CREATE INDEX "contacts_phone_digits" ON "contacts" USING btree ("phone_digits");--> statement-breakpoint
CREATE INDEX "leads_created" ON "leads" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "leads_client_created" ON "leads" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE INDEX "leads_status_created" ON "leads" USING btree ("status","created_at","id");--> statement-breakpoint
CREATE INDEX "operations_requester_created" ON "operations" USING btree ("requested_by_credential_id","created_at","id");--> statement-breakpoint
CREATE INDEX "opportunities_created" ON "opportunities" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "opportunities_client_created" ON "opportunities" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE INDEX "opportunities_account" ON "opportunities" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "outbound_messages_queue" ON "outbound_messages" USING btree ("status","not_before");--> statement-breakpoint
CREATE INDEX "outbound_messages_operation" ON "outbound_messages" USING btree ("operation_id");--> statement-breakpoint
CREATE INDEX "reviews_created" ON "reviews" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "reviews_client_created" ON "reviews" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE INDEX "touchpoints_lead" ON "touchpoints" USING btree ("lead_id");--> statement-breakpoint
CREATE INDEX "touchpoints_client_created" ON "touchpoints" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE INDEX "clients_name" ON "clients" USING btree ("name" collate "C","id");