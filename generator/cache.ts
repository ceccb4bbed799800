// The content-hash cache of `svc generate` and `svc generate --check`. Every generated file is a
// function of the same inputs: the contract directory (svc.yaml, schemas/, families/, releases/),
// the compiler's own code and templates (generator/ whole, the contract format's schema and its
// committed validators included, and the runtime modules it imports) and the libraries that write
// code (package-lock.json pins ajv, openapi-typescript, handlebars, yaml). One key hashes the content of
// all of them; the entry stored under it records the SHA-256 of every file the contract produces.
// `--check` with a matching entry proves generated/ up to date by hashing the files there, without
// loading the model or running an emitter; any change to an input is a new key (a miss: the full
// compile runs and records the new entry). The cache lives in node_modules/.cache/svc/ (never
// committed, never in generated/; `npm ci` starts it empty); SVC_NO_CACHE=1 bypasses it.
import { wiringOptions } from './emit/wiring-options.ts';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROJECT_ROOT } from '../runtime/project-root.ts';
import { sameGenerated, sha256Of, type GeneratedText } from './emit/pieces.ts';
import { readDigest } from './stamped-read.ts';
import { onForget, session } from './session.ts';

const ROOT = fileURLToPath(PROJECT_ROOT);
export const CACHE_DIR = path.join(ROOT, 'node_modules', '.cache', 'svc');
/** Bumped when the entry's layout changes. */
const FORMAT = 'svc-generate-cache 2';

export interface CacheEntry {
  key: string;
  /** Generated file (relative, forward slashes) -> SHA-256 of its content. */
  outputs: Record<string, string>;
}

export const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

/** Files under dir, relative with forward slashes, sorted; [] when dir does not exist. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const entry of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(child);
      else out.push(child);
    }
  };
  walk('');
  return out.sort();
}

const RELATIVE_IMPORT = /(?:from\s+|import\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

/** The runtime/ modules the compiler imports, and theirs in turn (project-relative paths). */
function runtimeModules(root: string, generatorFiles: string[]): string[] {
  const found = new Set<string>();
  const stack = generatorFiles.filter((f) => f.endsWith('.ts')).map((f) => `generator/${f}`);
  const seen = new Set(stack);
  while (stack.length) {
    const rel = stack.pop()!;
    const text = readFileSync(path.join(root, rel), 'utf8');
    for (const m of text.matchAll(RELATIVE_IMPORT)) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(rel), m[1]!));
      if (!target.startsWith('runtime/') || seen.has(target) || !existsSync(path.join(root, target))) continue;
      seen.add(target);
      found.add(target);
      stack.push(target);
    }
  }
  return [...found].sort();
}

/**
 * The compiler's content hash: generator/ whole, the runtime modules it imports, package-lock.json.
 * `root` is the project's (a test passes a copy); computed once per process for the project's own.
 */
export function compilerFingerprint(root = ROOT): string {
  if (root === ROOT && compilerHash) return compilerHash;
  const hash = createHash('sha256').update(`${FORMAT}\n`);
  const generatorFiles = filesUnder(path.join(root, 'generator'));
  const files = [...generatorFiles.map((f) => `generator/${f}`), ...runtimeModules(root, generatorFiles), 'package-lock.json'];
  for (const rel of files) hash.update(`${rel}\0`).update(readFileSync(path.join(root, rel))).update('\0');
  const digest = hash.digest('hex');
  if (root === ROOT) compilerHash = digest;
  return digest;
}
let compilerHash: string | undefined;

/** The key of one compile: the compiler's fingerprint and every file of the contract directory. */
export function inputsKey(contractDir: string, fingerprint = compilerFingerprint()): string {
  // The directory as the compiler names it in messages and output (relative to the working directory).
  const shown = path.relative(process.cwd(), path.resolve(contractDir));
  // The wiring module's handlers path (emit/wiring-options.ts) is an input too: it comes from svc.config.json.
  const hash = createHash('sha256').update(`${fingerprint}\n${shown}\n${wiringOptions().handlersIndex}\n`);
  // Each file by its own digest, which a watcher keeps while the file is unchanged (stamped-read.ts).
  for (const rel of filesUnder(contractDir)) hash.update(`${rel}\0${readDigest(path.join(contractDir, rel))}\0`);
  return hash.digest('hex');
}

const enabled = () => process.env.SVC_NO_CACHE !== '1';

/** Where the entry of a contract directory lives (one entry per directory: the newest compile). */
export function entryFile(contractDir: string): string {
  return path.join(CACHE_DIR, `${sha256(path.resolve(contractDir)).slice(0, 24)}.json`);
}

export function readEntry(contractDir: string): CacheEntry | null {
  if (!enabled()) return null;
  try {
    const entry = JSON.parse(readFileSync(entryFile(contractDir), 'utf8')) as CacheEntry;
    return typeof entry.key === 'string' && entry.outputs && typeof entry.outputs === 'object' ? entry : null;
  } catch {
    return null;
  }
}

/**
 * A watcher's hashes of what it last recorded, with the texts they hash: a file the edit left as it
 * was (the same text, or the same pieces) is not hashed again (206 MB at 8,200 operations: 0.6 s).
 */
const recorded = new Map<string, { text: GeneratedText; hash: string }>();
onForget(() => recorded.clear());

function hashOf(rel: string, text: GeneratedText): string {
  if (!session.longLived) return sha256Of(text);
  const last = recorded.get(rel);
  if (last && sameGenerated(last.text, text)) return last.hash;
  const hash = sha256Of(text);
  recorded.set(rel, { text, hash });
  return hash;
}

/** Records what the contract produced under key (written atomically; a failure to write is ignored). */
export function writeEntry(contractDir: string, key: string, files: Map<string, GeneratedText>): void {
  if (!enabled()) return;
  const outputs: Record<string, string> = {};
  for (const [rel, text] of files) outputs[rel] = hashOf(rel, text);
  try {
    mkdirSync(CACHE_DIR, { recursive: true });
    const file = entryFile(contractDir);
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ key, outputs } satisfies CacheEntry)}\n`);
    renameSync(tmp, file);
  } catch {
    // A read-only node_modules costs speed only.
  }
}

/**
 * True when the cache proves outDir to hold exactly what contractDir produces: an entry under the
 * current inputs' key, and outDir's files the same list with the same hashes. False means "not
 * proven" (a miss or a difference): the caller compiles and compares.
 */
export function provenUpToDate(contractDir: string, outDir: string, key = inputsKey(contractDir)): boolean {
  const entry = readEntry(contractDir);
  if (!entry || entry.key !== key) return false;
  const present = filesUnder(outDir);
  const expected = Object.keys(entry.outputs).sort();
  if (present.length !== expected.length || present.some((rel, i) => rel !== expected[i])) return false;
  return present.every((rel) => statSync(path.join(outDir, rel)).isFile() && sha256(readFileSync(path.join(outDir, rel))) === entry.outputs[rel]);
}

/**
 * A piece of compiled output kept across processes (a family's validator code), under a key that
 * holds everything it was compiled from; the compiler's fingerprint is added here, so a change to the
 * compiler or its libraries is a miss. null when absent or with SVC_NO_CACHE=1.
 */
export function readPiece(kind: string, key: string): string | null {
  if (!enabled()) return null;
  try {
    return readFileSync(pieceFile(kind, key), 'utf8');
  } catch {
    return null;
  }
}

export function writePiece(kind: string, key: string, text: string): void {
  if (!enabled()) return;
  try {
    const file = pieceFile(kind, key);
    mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, text);
    renameSync(tmp, file);
  } catch {
    // A read-only node_modules costs speed only.
  }
}

function pieceFile(kind: string, key: string): string {
  return path.join(CACHE_DIR, kind, `${sha256(`${compilerFingerprint()}\n${key}`).slice(0, 32)}.txt`);
}
