// One migration history for this API: svc's machinery tables (node_modules/svc/runtime/data/schema.ts)
// and this API's own (handlers/data/schema.ts). After a schema change: `npx drizzle-kit generate`.
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: ['./node_modules/svc/runtime/data/schema.ts', './handlers/data/schema.ts'],
  out: './handlers/data/migrations',
});
