ALTER TABLE "approvals" ADD COLUMN "subject_type" text;--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "subject_id" text;