-- Issue 42: the runtime's files and outbound_messages name no domain record. A file's project and intake
-- record move to file_links, an outbound message's campaign to campaign_messages (handlers/data/schema.ts);
-- the rows are copied before the old columns go, so a live database keeps every link. files.extraction_id
-- goes without a copy: extractions.file_id (a foreign key, written with it by files.register and the
-- seed) holds the same pair, now indexed (extractions_file).
CREATE TABLE "campaign_messages" (
	"message_id" text PRIMARY KEY NOT NULL,
	"campaign_id" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "file_links" (
	"file_id" text PRIMARY KEY NOT NULL,
	"project_id" text,
	"intake_id" text
);
--> statement-breakpoint
ALTER TABLE "files" DROP CONSTRAINT "files_project_id_projects_id_fk";
--> statement-breakpoint
ALTER TABLE "files" DROP CONSTRAINT "files_intake_id_intake_records_id_fk";
--> statement-breakpoint
ALTER TABLE "outbound_messages" DROP CONSTRAINT "outbound_messages_campaign_id_campaigns_id_fk";
--> statement-breakpoint
ALTER TABLE "campaign_messages" ADD CONSTRAINT "campaign_messages_message_id_outbound_messages_id_fk" FOREIGN KEY ("message_id") REFERENCES "public"."outbound_messages"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "campaign_messages" ADD CONSTRAINT "campaign_messages_campaign_id_campaigns_id_fk" FOREIGN KEY ("campaign_id") REFERENCES "public"."campaigns"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "file_links" ADD CONSTRAINT "file_links_file_id_files_id_fk" FOREIGN KEY ("file_id") REFERENCES "public"."files"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "file_links" ADD CONSTRAINT "file_links_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "file_links" ADD CONSTRAINT "file_links_intake_id_intake_records_id_fk" FOREIGN KEY ("intake_id") REFERENCES "public"."intake_records"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
INSERT INTO "file_links" ("file_id", "project_id", "intake_id")
  SELECT "id", "project_id", "intake_id" FROM "files" WHERE "project_id" IS NOT NULL OR "intake_id" IS NOT NULL;--> statement-breakpoint
INSERT INTO "campaign_messages" ("message_id", "campaign_id")
  SELECT "id", "campaign_id" FROM "outbound_messages" WHERE "campaign_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "campaign_messages_campaign" ON "campaign_messages" USING btree ("campaign_id");--> statement-breakpoint
CREATE INDEX "file_links_project" ON "file_links" USING btree ("project_id");--> statement-breakpoint
CREATE INDEX "file_links_intake" ON "file_links" USING btree ("intake_id");--> statement-breakpoint
CREATE INDEX "extractions_file" ON "extractions" USING btree ("file_id");--> statement-breakpoint
ALTER TABLE "files" DROP COLUMN "project_id";--> statement-breakpoint
ALTER TABLE "files" DROP COLUMN "intake_id";--> statement-breakpoint
ALTER TABLE "files" DROP COLUMN "extraction_id";--> statement-breakpoint
ALTER TABLE "outbound_messages" DROP COLUMN "campaign_id";