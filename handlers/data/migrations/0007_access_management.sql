DROP INDEX "memberships_client";--> statement-breakpoint
ALTER TABLE "memberships" ALTER COLUMN "user_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "rotated_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "memberships" ADD COLUMN "kind" text DEFAULT 'client_admin' NOT NULL;--> statement-breakpoint
ALTER TABLE "memberships" ADD COLUMN "email" text;--> statement-breakpoint
ALTER TABLE "memberships" ADD COLUMN "name" text;--> statement-breakpoint
ALTER TABLE "memberships" ADD COLUMN "invited_by_kind" text;--> statement-breakpoint
ALTER TABLE "memberships" ADD COLUMN "invited_by_id" text;--> statement-breakpoint
ALTER TABLE "memberships" ADD COLUMN "accepted_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "memberships" ADD COLUMN "expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "memberships" ADD COLUMN "updated_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "oauth_grants" ADD COLUMN "last_used_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "api_keys_owner" ON "api_keys" USING btree ("owner_user_id","created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "memberships_open_invitation" ON "memberships" USING btree ("email","client_id","role") WHERE status in ('invited', 'active');--> statement-breakpoint
CREATE INDEX "memberships_client" ON "memberships" USING btree ("client_id","created_at","id");