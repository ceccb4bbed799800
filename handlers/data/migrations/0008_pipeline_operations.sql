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
CREATE INDEX "execution_jobs_status" ON "execution_jobs" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "execution_requests_created" ON "execution_requests" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "pipeline_events_seq" ON "pipeline_events" USING btree ("seq");--> statement-breakpoint
CREATE INDEX "pipeline_events_run" ON "pipeline_events" USING btree ("run_id","seq");--> statement-breakpoint
CREATE INDEX "pipeline_runs_created" ON "pipeline_runs" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "pipeline_runs_status" ON "pipeline_runs" USING btree ("status");