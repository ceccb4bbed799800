// drizzle-kit configuration of the `svc init` template's one migration history
// (project-template/handlers/data/migrations): the runtime's machinery schema plus the template's
// domain schema, as a project's own drizzle.config.ts has it. test/generator/init-template.test.ts
// checks that `drizzle-kit generate` with this configuration finds nothing to add.
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: ['./runtime/data/schema.ts', './project-template/handlers/data/schema.ts'],
  out: './project-template/handlers/data/migrations',
});
