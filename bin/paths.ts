// Where this project's own files are, for the runtime (which names none): its migration history and
// its generated output, the folders svc.config.json names (test/contract/layout.test.ts holds the two together).
// A small module of its own, so `svc serve` opens the database before the registry's modules load
// (bin/serve-cli.ts). The source tree's, also from the production build in dist/ (PROJECT_ROOT).
import { fileURLToPath } from 'node:url';
import { PROJECT_ROOT } from '../runtime/project-root.ts';

/** The Platform API's one migration history: runtime machinery and domain tables (drizzle.config.ts). */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('handlers/data/migrations', PROJECT_ROOT));

/** The Platform API's generated output (svc.config.json "generated"): the documents the runtime serves. */
export const GENERATED_DIR = fileURLToPath(new URL('generated', PROJECT_ROOT));
