ALTER TABLE "files" DROP COLUMN "project_id";--> statement-breakpoint
ALTER TABLE "files" DROP COLUMN "intake_id";--> statement-breakpoint
ALTER TABLE "files" DROP COLUMN "extraction_id";--> statement-breakpoint
ALTER TABLE "outbound_messages" DROP COLUMN "campaign_id";