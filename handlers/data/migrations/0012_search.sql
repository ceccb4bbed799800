ALTER TABLE "accounts" ADD COLUMN "search" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, coalesce(name, '')), 'A') || setweight(to_tsvector('simple'::regconfig, coalesce(domain, '')), 'B') || setweight(to_tsvector('simple'::regconfig, coalesce(industry, '')), 'D')) STORED;--> statement-breakpoint
ALTER TABLE "campaigns" ADD COLUMN "search" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, coalesce(name, '')), 'A') || setweight(to_tsvector('simple'::regconfig, coalesce(subject, '')), 'D')) STORED;--> statement-breakpoint
ALTER TABLE "clients" ADD COLUMN "search" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, coalesce(name, '')), 'A') || setweight(to_tsvector('simple'::regconfig, coalesce(industry, '')), 'D')) STORED;--> statement-breakpoint
ALTER TABLE "contacts" ADD COLUMN "search_public" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, coalesce(job_title, '')), 'A')) STORED;--> statement-breakpoint
ALTER TABLE "contacts" ADD COLUMN "search_pii" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, coalesce(name, '')), 'A') || setweight(to_tsvector('simple'::regconfig, coalesce(email, '')), 'B') || setweight(to_tsvector('simple'::regconfig, coalesce(phone, '')), 'B') || setweight(to_tsvector('simple'::regconfig, coalesce(phone_digits, '')), 'B') || setweight(to_tsvector('simple'::regconfig, coalesce(job_title, '')), 'C')) STORED;--> statement-breakpoint
ALTER TABLE "files" ADD COLUMN "search" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, coalesce(name, '')), 'A')) STORED;--> statement-breakpoint
ALTER TABLE "intake_records" ADD COLUMN "search" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, coalesce(title, '')), 'A') || setweight(to_tsvector('simple'::regconfig, coalesce(template, '')), 'D')) STORED;--> statement-breakpoint
ALTER TABLE "leads" ADD COLUMN "search" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, coalesce(title, '')), 'A') || setweight(to_tsvector('simple'::regconfig, coalesce(company, '')), 'B')) STORED;--> statement-breakpoint
ALTER TABLE "opportunities" ADD COLUMN "search" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, coalesce(name, '')), 'A')) STORED;--> statement-breakpoint
ALTER TABLE "projects" ADD COLUMN "search" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, coalesce(name, '')), 'A') || setweight(to_tsvector('simple'::regconfig, coalesce(description, '')), 'D')) STORED;--> statement-breakpoint
ALTER TABLE "reviews" ADD COLUMN "search" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, coalesce(title, '')), 'A') || setweight(to_tsvector('simple'::regconfig, coalesce(summary, '')), 'D')) STORED;--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "search" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('simple'::regconfig, coalesce(title, '')), 'A') || setweight(to_tsvector('simple'::regconfig, coalesce(description, '')), 'D')) STORED;--> statement-breakpoint
CREATE INDEX "accounts_search" ON "accounts" USING gin ("search");--> statement-breakpoint
CREATE INDEX "campaigns_search" ON "campaigns" USING gin ("search");--> statement-breakpoint
CREATE INDEX "clients_search" ON "clients" USING gin ("search");--> statement-breakpoint
CREATE INDEX "contacts_search_public" ON "contacts" USING gin ("search_public");--> statement-breakpoint
CREATE INDEX "contacts_search_pii" ON "contacts" USING gin ("search_pii");--> statement-breakpoint
CREATE INDEX "files_search" ON "files" USING gin ("search");--> statement-breakpoint
CREATE INDEX "intake_records_search" ON "intake_records" USING gin ("search");--> statement-breakpoint
CREATE INDEX "leads_search" ON "leads" USING gin ("search");--> statement-breakpoint
CREATE INDEX "opportunities_search" ON "opportunities" USING gin ("search");--> statement-breakpoint
CREATE INDEX "projects_search" ON "projects" USING gin ("search");--> statement-breakpoint
CREATE INDEX "reviews_search" ON "reviews" USING gin ("search");--> statement-breakpoint
CREATE INDEX "tasks_search" ON "tasks" USING gin ("search");