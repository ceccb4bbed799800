// drizzle-kit configuration: `npx drizzle-kit generate` writes SQL migrations from the schema into
// runtime/db/migrations (committed); openDatabase applies them at start with drizzle's migrator.
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './runtime/db/schema.ts',
  out: './runtime/db/migrations',
});
