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
	"scanned_at" timestamp with time zone
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
	"finalized_at" timestamp with time zone
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
CREATE INDEX "extractions_status" ON "extractions" USING btree ("status","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "files_upload" ON "files" USING btree ("upload_id");--> statement-breakpoint
CREATE INDEX "files_status" ON "files" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "intake_records_client_created" ON "intake_records" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE INDEX "uploads_status_created" ON "uploads" USING btree ("status","created_at");