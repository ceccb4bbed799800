// drizzle-kit configuration: `npx drizzle-kit generate` writes SQL migrations from the schema into
// runtime/data/migrations (committed); openDatabase applies them at start with drizzle's migrator.
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './runtime/data/schema.ts',
  out: './runtime/data/migrations',
});
