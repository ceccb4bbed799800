// The project configuration's type for the compiler (bin/project-config.js reads svc.config.json;
// docs/projects.md). Every path is absolute.
import path from 'node:path';

export interface Project {
  /** The directory holding svc.config.json (or the working directory when there is none). */
  root: string;
  /** svc.config.json, or null when none was found. */
  file: string | null;
  contract: string;
  generated: string;
  handlers: string;
  /** The project's domain drizzle schema (drizzle-kit reads it with the runtime's machinery schema). */
  schema: string | null;
  /** The project's one migration history (machinery and domain tables); null: this repository's. */
  migrations: string | null;
  /** The project's optional demo seed module (`svc serve --demo`, `svc seed`). */
  seed: string | null;
  /** True when the project is this svc checkout itself. */
  isSvc: boolean;
}

/** A path as the CLI shows it and passes it on: relative to the working directory when inside it. */
export function shown(p: string, cwd = process.cwd()): string {
  const rel = path.relative(cwd, p);
  if (rel === '') return '.';
  return !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : p;
}
