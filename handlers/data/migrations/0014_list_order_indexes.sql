CREATE INDEX "events_occurred" ON "events" USING btree ("occurred_at","id");--> statement-breakpoint
CREATE INDEX "events_client_occurred" ON "events" USING btree ("client_id","occurred_at","id");--> statement-breakpoint
CREATE INDEX "intake_records_created" ON "intake_records" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "intake_records_creator_status" ON "intake_records" USING btree ("created_by_id","status");--> statement-breakpoint
CREATE INDEX "memberships_invited_expiry" ON "memberships" USING btree ("expires_at") WHERE status = 'invited';--> statement-breakpoint
CREATE INDEX "pipeline_events_occurred" ON "pipeline_events" USING btree ("occurred_at","seq");--> statement-breakpoint
CREATE INDEX "pipeline_events_client_occurred" ON "pipeline_events" USING btree ("client_id","occurred_at","seq");--> statement-breakpoint
CREATE INDEX "pipeline_runs_client_created" ON "pipeline_runs" USING btree ("client_id","created_at","id");--> statement-breakpoint
CREATE INDEX "pipeline_runs_parent" ON "pipeline_runs" USING btree ("parent_run_id");--> statement-breakpoint
CREATE INDEX "reviews_status" ON "reviews" USING btree ("status");--> statement-breakpoint
CREATE INDEX "task_comments_created" ON "task_comments" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "tasks_project_created" ON "tasks" USING btree ("project_id","created_at","id");--> statement-breakpoint
CREATE INDEX "tasks_owner_due" ON "tasks" USING btree ("owner_id","due_date");--> statement-breakpoint
CREATE INDEX "tasks_assignees" ON "tasks" USING gin ("assignee_ids");