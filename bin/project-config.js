// The project configuration (svc.config.json, docs/projects.md): where a project's contract, generated
// output, handlers, domain schema, migrations and demo seed live. Read by every command (generate,
// lint, diff, release, serve, seed); found from the working directory upwards, or at `--project DIR`.
// Explicit flags (--contract, --out, --releases) still win. Plain JavaScript: bin/svc.js reads it
// before deciding which build runs `svc serve`.
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const CONFIG_FILE = 'svc.config.json';

/** This svc checkout's root (the directory holding bin/), also when bundled into dist/compiler/ (dist/build-stamp.json one level up). */
const parent = new URL('../', import.meta.url);
export const SVC_ROOT = path.resolve(fileURLToPath(existsSync(new URL('build-stamp.json', parent)) ? new URL('../', parent) : parent));

const KEYS = ['contract', 'generated', 'handlers', 'schema', 'migrations', 'seed'];
const DEFAULTS = { contract: 'contract', generated: 'generated', handlers: 'handlers', schema: null, migrations: null, seed: null };

/**
 * `--project DIR` (or `--project=DIR`) taken out of argv.
 * @param {readonly string[]} argv
 * @returns {{ dir: string | null, rest: string[] }}
 */
export function projectArgument(argv) {
  const rest = [];
  let dir = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--project') {
      dir = argv[++i] ?? null;
      if (!dir) throw new Error('--project needs a directory');
    } else if (arg.startsWith('--project=')) dir = arg.slice('--project='.length);
    else rest.push(arg);
  }
  return { dir, rest };
}

/**
 * @typedef {object} Project
 * @property {string} root        the directory holding svc.config.json (absolute)
 * @property {string | null} file the configuration file, or null when none was found (defaults apply, from the working directory)
 * @property {string} contract    absolute paths from here on
 * @property {string} generated
 * @property {string} handlers
 * @property {string | null} schema
 * @property {string | null} migrations
 * @property {string | null} seed
 * @property {boolean} isSvc      true when the project is this svc checkout itself (its dist/ build serves it)
 */

/**
 * The project at `dir` (its svc.config.json must exist there), or the nearest svc.config.json from
 * `cwd` upwards; with neither, the defaults relative to cwd (file: null).
 * @param {{ dir?: string | null, cwd?: string }} [options]
 * @returns {Project}
 */
export function findProject(options = {}) {
  const cwd = path.resolve(options.cwd ?? process.cwd());
  let file = null;
  if (options.dir) {
    file = path.join(path.resolve(cwd, options.dir), CONFIG_FILE);
    if (!existsSync(file)) throw new Error(`--project ${options.dir}: there is no ${CONFIG_FILE} in ${path.dirname(file)}. Run \`svc init DIR\` to make a project, or name its directory.`);
  } else {
    for (let d = cwd; ; d = path.dirname(d)) {
      if (existsSync(path.join(d, CONFIG_FILE))) {
        file = path.join(d, CONFIG_FILE);
        break;
      }
      if (path.dirname(d) === d) break;
    }
  }
  const root = file ? path.dirname(file) : cwd;
  const values = { ...DEFAULTS, ...(file ? readConfig(file) : {}) };
  const at = (v) => (v === null || v === undefined ? null : path.resolve(root, v));
  return {
    root,
    file,
    contract: at(values.contract),
    generated: at(values.generated),
    handlers: at(values.handlers),
    schema: at(values.schema),
    migrations: at(values.migrations),
    seed: at(values.seed),
    isSvc: sameDir(root, SVC_ROOT),
  };
}

function readConfig(file) {
  let parsed;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file}: not valid JSON (${err instanceof Error ? err.message : String(err)}). It is an object such as {"contract": "contract", "generated": "generated", "handlers": "handlers"}.`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`${file}: must hold one JSON object.`);
  for (const [key, value] of Object.entries(parsed)) {
    if (key === '$schema' || key === '$comment') continue;
    if (!KEYS.includes(key)) throw new Error(`${file}: unknown key "${key}". The keys are ${KEYS.join(', ')} (docs/projects.md).`);
    if (value !== null && typeof value !== 'string') throw new Error(`${file}: "${key}" must be a path relative to the file (a string), or null.`);
  }
  for (const key of ['contract', 'generated', 'handlers']) {
    if (parsed[key] === null) throw new Error(`${file}: "${key}" cannot be null.`);
  }
  return parsed;
}

function sameDir(a, b) {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return path.resolve(a) === path.resolve(b);
  }
}
