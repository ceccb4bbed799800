// The production build's freshness (plain JavaScript: bin/svc.js reads it before any loader exists).
// The stamp is a hash over the path, size and modification time of every source the build compiles;
// scripts/build.mjs writes it to dist/build-stamp.json, bin/svc.js compares it with the tree.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const DIST = join(ROOT, 'dist');
export const STAMP_FILE = join(DIST, 'build-stamp.json');
/**
 * What the build compiles: the server's entry (bin/serve.ts) and everything it can import, the build
 * script itself, and the lockfile (the bundle holds the libraries' code: an upgrade makes it stale).
 */
export const SOURCE_DIRS = ['runtime', 'handlers', 'generated'];
export const SOURCE_FILES = ['bin/serve.ts', 'bin/wiring.ts', 'tsconfig.json', 'scripts/build.mjs', 'package-lock.json'];
const COMPILED = /\.(ts|js|mjs)$/;

function walk(dir, out) {
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) walk(rel, out);
    else if (COMPILED.test(entry.name)) out.push(rel);
  }
}

/** The current sources' fingerprint. */
export function sourceStamp() {
  const files = [...SOURCE_FILES];
  for (const dir of SOURCE_DIRS) walk(dir, files);
  files.sort();
  const hash = createHash('sha256');
  for (const rel of files) {
    const st = statSync(join(ROOT, rel));
    hash.update(`${rel}\0${st.size}\0${st.mtimeMs}\n`);
  }
  return hash.digest('hex');
}

/** True when dist/ holds a build of exactly the current sources. */
export function freshBuild() {
  try {
    return JSON.parse(readFileSync(STAMP_FILE, 'utf8')).sources === sourceStamp();
  } catch {
    return false;
  }
}
