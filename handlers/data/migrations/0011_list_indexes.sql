DROP INDEX "projects_client";--> statement-breakpoint
DROP INDEX "tasks_client";--> statement-breakpoint
CREATE INDEX "projects_client_created" ON "projects" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE INDEX "projects_created" ON "projects" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "tasks_client_created" ON "tasks" USING btree ("client_id","created_at","id");