// drizzle-kit configuration: `npx drizzle-kit generate` writes the project's one migration history
// (committed) from the runtime's machinery tables and the Platform API's domain tables together, as a
// host application holds its engines' migrations (docs/decisions.md). The server applies that folder
// at start: bin/wiring.ts hands its path to the runtime (Registry.migrationsFolder).
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: ['./runtime/data/schema.ts', './handlers/data/schema.ts'],
  out: './handlers/data/migrations',
});
