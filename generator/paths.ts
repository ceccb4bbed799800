// Where the compiler's own files live (templates/, contract-format/contract.schema.json), found the
// same way from the sources (generator/...) and from the compiler's build (dist/compiler/*.js, one
// bundle whose chunks all sit in one directory): runtime/project-root.ts knows both layouts.
import { PROJECT_ROOT } from '../runtime/project-root.ts';

/** generator/ as a file URL ending in a slash. */
export const GENERATOR_DIR: URL = new URL('generator/', PROJECT_ROOT);
