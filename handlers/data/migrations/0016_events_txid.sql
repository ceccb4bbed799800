DROP INDEX "events_client";--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "txid" bigint DEFAULT (pg_current_xact_id()::text)::bigint NOT NULL;--> statement-breakpoint
CREATE INDEX "events_order" ON "events" USING btree ("txid","seq");--> statement-breakpoint
CREATE INDEX "events_client_order" ON "events" USING btree ("client_id","txid","seq");