ALTER TABLE "idempotency_records" RENAME COLUMN "owner_id" TO "credential_id";--> statement-breakpoint
ALTER TABLE "idempotency_records" DROP CONSTRAINT "idempotency_records_owner_id_operation_id_key_pk";--> statement-breakpoint
ALTER TABLE "idempotency_records" ADD CONSTRAINT "idempotency_records_credential_id_operation_id_key_pk" PRIMARY KEY("credential_id","operation_id","key");