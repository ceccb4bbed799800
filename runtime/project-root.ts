// Where the project's own files live (generated/ documents; bin/paths.ts: the migration history): the source tree,
// also when this module runs from the production build in dist/ (scripts/build.mjs writes
// dist/build-stamp.json, whose presence one level up says "this is the build").
import { existsSync } from 'node:fs';

const parent = new URL('../', import.meta.url);

/** The project's root directory, as a file URL ending in a slash. */
export const PROJECT_ROOT: URL = existsSync(new URL('build-stamp.json', parent)) ? new URL('../', parent) : parent;
