// The production build's freshness (plain JavaScript: bin/svc.js reads it before any loader exists).
// The stamp is a hash over the path, size and modification time of every source the build compiles;
// scripts/build.mjs writes it to dist/build-stamp.json, bin/svc.js compares it with the tree. The build
// holds two programs with a stamp each: the server (dist/bin/, `sources`) and the compiler
// (dist/compiler/, `compiler`), so that editing a handler leaves the compiler's build in use and
// editing the generator leaves the server's.
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
export const SOURCE_DIRS = ['runtime', 'demo', 'handlers', 'generated'];
export const SOURCE_FILES = ['bin/serve.ts', 'bin/serve-cli.ts', 'bin/wiring.ts', 'tsconfig.json', 'scripts/build.mjs', 'package-lock.json'];
/**
 * What the compiler's build compiles: the code of generator/ (its templates and the contract format's
 * schema are read at run time from the source tree, so an edit of them, or of a README, leaves the
 * build fresh; the generate cache hashes them: generator/cache.ts), the runtime modules it may import,
 * the build script, the lockfile and package.json.
 */
export const COMPILER_FILES = ['tsconfig.json', 'scripts/build.mjs', 'package-lock.json', 'package.json', 'bin/project-config.js'];
const COMPILED = /\.(ts|js|mjs)$/;

function walk(dir, out) {
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) walk(rel, out);
    else if (COMPILED.test(entry.name)) out.push(rel);
  }
}

function stampOf(files) {
  files.sort();
  const hash = createHash('sha256');
  for (const rel of files) {
    const st = statSync(join(ROOT, rel));
    hash.update(`${rel}\0${st.size}\0${st.mtimeMs}\n`);
  }
  return hash.digest('hex');
}

/** The current sources' fingerprint (the server's build). */
export function sourceStamp() {
  const files = [...SOURCE_FILES];
  for (const dir of SOURCE_DIRS) walk(dir, files);
  return stampOf(files);
}

/** The compiler's sources' fingerprint. */
export function compilerStamp() {
  const files = [...COMPILER_FILES];
  walk('generator', files);
  walk('runtime', files);
  return stampOf([...new Set(files)]);
}

function recorded() {
  try {
    return JSON.parse(readFileSync(STAMP_FILE, 'utf8'));
  } catch {
    return {};
  }
}

/** True when dist/ holds a build of exactly the current sources. */
export function freshBuild() {
  return recorded().sources === sourceStamp();
}

/** True when dist/compiler/ holds a build of exactly the current compiler sources. */
export function freshCompiler() {
  const stamp = recorded().compiler;
  return typeof stamp === 'string' && stamp === compilerStamp();
}
