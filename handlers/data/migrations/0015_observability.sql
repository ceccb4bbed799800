ALTER TABLE "events" ADD COLUMN "traceparent" text;--> statement-breakpoint
CREATE INDEX "approvals_pending" ON "approvals" USING btree ("tier","expires_at") WHERE status = 'pending';