// `svc init DIR`: a new API project on svc (docs/projects.md). Copies project-template/ (a minimal
// contract with one family `notes` and two operations, its handlers, its drizzle table, its one
// migration history, a seed, tests, README), generates generated/, records the contract's first
// release, writes package.json (svc itself as `file:<this checkout>`; every package the generated
// code and the template import, at the versions svc pins) and makes package-lock.json with
// `npm install --package-lock-only`, so that `npm ci && npm test` and `npm ci && npm start` work there.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROJECT_ROOT } from '../runtime/project-root.ts';
import { consoleIo, type CliIo } from './snapshot.ts';
import { shown } from './project.ts';

/** This svc checkout (the `svc` package a new project depends on). */
export const SVC_ROOT = path.resolve(fileURLToPath(PROJECT_ROOT));
export const TEMPLATE_DIR = path.join(SVC_ROOT, 'project-template');

/** Packages the template's own files import (handlers, tests, drizzle config), beyond those generated/ imports. */
const TEMPLATE_DEPENDENCIES = ['drizzle-orm'];
/**
 * Packages whose types cross between the project and svc (a handler's ctx.db is svc's drizzle
 * database; the project's tables are its own drizzle tables): two copies would be two sets of
 * incompatible classes for TypeScript, so the project links svc's own copy, as it links svc.
 */
const SHARED_WITH_SVC = ['drizzle-orm'];
const TEMPLATE_DEV_DEPENDENCIES = ['@modelcontextprotocol/sdk', '@types/node', 'drizzle-kit', 'typescript', 'vitest'];

/** Every bare package name imported or required by the files under dir (node: built-ins and svc itself left out). */
export function bareImports(dir: string): string[] {
  const names = new Set<string>();
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/\.(ts|js|mjs)$/.test(entry.name)) {
        const text = readFileSync(full, 'utf8');
        for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*)["']([^"'./][^"']*)["']/g)) {
          const spec = m[1]!;
          if (spec.startsWith('node:')) continue;
          const parts = spec.split('/');
          const name = spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
          if (name !== 'svc') names.add(name);
        }
      }
    }
  };
  walk(dir);
  return [...names].sort();
}

function svcVersions(): Record<string, string> {
  const pkg = JSON.parse(readFileSync(path.join(SVC_ROOT, 'package.json'), 'utf8')) as { dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
  return { ...pkg.devDependencies, ...pkg.dependencies };
}

function pick(names: Iterable<string>, versions: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of [...names].sort()) {
    if (SHARED_WITH_SVC.includes(name)) {
      out[name] = `file:${path.join(SVC_ROOT, 'node_modules', name)}`;
      continue;
    }
    const version = versions[name];
    if (!version) throw new Error(`svc init: the project needs ${name}, which svc's package.json does not pin.`);
    out[name] = version;
  }
  return out;
}

/** The package name npm accepts, from the directory's name. */
function packageName(dir: string): string {
  const name = path
    .basename(path.resolve(dir))
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+|-+$/g, '');
  return name || 'svc-api';
}

export interface InitOptions {
  dir: string;
  /** Make package-lock.json (npm install --package-lock-only); default true. */
  lock?: boolean;
  io?: CliIo;
}

/** Creates the project; returns the exit code. */
export async function initProject(options: InitOptions): Promise<number> {
  const io = options.io ?? consoleIo;
  const dir = path.resolve(options.dir);
  if (existsSync(dir) && (!statSync(dir).isDirectory() || readdirSync(dir).length > 0)) {
    io.err(`svc init: ${options.dir} ${statSync(dir).isDirectory() ? 'is not empty' : 'is a file'}; nothing was written. Name a new or empty directory.`);
    return 1;
  }
  const realDir = path.resolve(dir);
  if (realDir === SVC_ROOT || realDir.startsWith(SVC_ROOT + path.sep)) {
    io.err(`svc init: ${options.dir} is inside the svc checkout (${SVC_ROOT}); make the project elsewhere.`);
    return 1;
  }
  mkdirSync(dir, { recursive: true });
  // Nothing half-made is left behind: the directory was new or empty.
  let code = 1;
  try {
    code = await writeProject(dir, options.lock !== false, io);
    return code;
  } finally {
    if (code !== 0) rmSync(dir, { recursive: true, force: true });
  }
}

async function writeProject(dir: string, lock: boolean, io: CliIo): Promise<number> {
  cpSync(TEMPLATE_DIR, dir, { recursive: true });
  // npm would drop a file named .gitignore from a package: the template keeps it as gitignore.
  cpSync(path.join(TEMPLATE_DIR, 'gitignore'), path.join(dir, '.gitignore'));
  rmSync(path.join(dir, 'gitignore'));

  const svcYaml = path.join(dir, 'contract', 'svc.yaml');
  writeFileSync(svcYaml, readFileSync(svcYaml, 'utf8').replaceAll('{{today}}', new Date().toISOString().slice(0, 10)));
  // generated/, as `svc generate` in the project makes it (the wiring module imports ../handlers/index.ts).
  const { setWiringOptions, DEFAULT_WIRING } = await import('./emit/wiring-options.ts');
  setWiringOptions(DEFAULT_WIRING);
  const { compileToPieces, writeGenerated } = await import('./generate.ts');
  const contract = path.join(dir, 'contract');
  const { files } = await compileToPieces(contract);
  writeGenerated(files, path.join(dir, 'generated'));
  // The first release, so that `svc diff` has a base.
  const { runRelease } = await import('./snapshot.ts');
  const quiet: CliIo = { out: () => undefined, err: io.err };
  if ((await runRelease(['--contract', contract], quiet)) !== 0) return 1;

  const title = (/^\s*title:\s*(.+)$/m.exec(readFileSync(path.join(contract, 'svc.yaml'), 'utf8'))?.[1] ?? 'API').trim();
  const readme = path.join(dir, 'README.md');
  writeFileSync(readme, readFileSync(readme, 'utf8').replaceAll('{{title}}', title).replaceAll('{{svcRoot}}', SVC_ROOT));

  const versions = svcVersions();
  const runtimeNeeds = new Set([...bareImports(path.join(dir, 'generated')), ...TEMPLATE_DEPENDENCIES]);
  const pkg = {
    name: packageName(dir),
    version: '0.1.0',
    private: true,
    type: 'module',
    engines: { node: '>=20.19 <21 || >=22.12' },
    scripts: {
      start: 'svc serve --demo',
      test: 'tsc --noEmit && vitest run',
      generate: 'svc generate',
      lint: 'svc lint',
      seed: 'svc seed',
    },
    dependencies: { svc: `file:${SVC_ROOT}`, ...pick(runtimeNeeds, versions) },
    devDependencies: pick(TEMPLATE_DEV_DEPENDENCIES.filter((n) => !runtimeNeeds.has(n)), versions),
    // npm 11 runs only the install scripts a package allows; esbuild's checks its binary (as in svc).
    allowScripts: { esbuild: true },
  };
  writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);

  const shownDir = shown(dir);
  io.out(`svc init: created ${shownDir}/ (${title}: contract, handlers, table and migration, generated/, tests, README).`);
  if (lock) {
    io.out("svc init: making package-lock.json from svc's (npm install --package-lock-only)...");
    // Started from svc's own lock file, npm keeps the versions svc is tested with for every package
    // the project shares with it (transitive ones included) and drops the rest; a lock made from
    // nothing would take each range's newest version instead.
    writeFileSync(path.join(dir, 'package-lock.json'), readFileSync(path.join(SVC_ROOT, 'package-lock.json')));
    const npm = spawnSync('npm', ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir, encoding: 'utf8' });
    if (npm.status !== 0) {
      io.err(`svc init: npm install --package-lock-only failed (exit ${npm.status}); the project is there without package-lock.json. Run it in ${shownDir}/ once npm can reach its registry.\n${npm.stderr}`);
      return 1;
    }
  }
  io.out(`\nNext:\n  cd ${shownDir}\n  npm ci && npm test     # type-check, then REST and MCP end to end\n  npm start              # serve on http://localhost:8787 and print a demo API key`);
  io.out(`\nThe project depends on this svc checkout (${SVC_ROOT}) by path: keep it, with its node_modules installed.`);
  return 0;
}

/** `svc init DIR [--no-lock]`. */
export async function runInit(argv: string[], io: CliIo = consoleIo): Promise<number> {
  const positional = argv.filter((a) => !a.startsWith('-'));
  const unknown = argv.filter((a) => a.startsWith('-') && a !== '--no-lock');
  if (unknown.length) {
    io.err(`svc init: unknown option ${unknown[0]}. Usage: svc init DIR [--no-lock]`);
    return 2;
  }
  if (positional.length !== 1) {
    io.err('svc init: name the new project\'s directory: svc init DIR');
    return 2;
  }
  return initProject({ dir: positional[0]!, lock: !argv.includes('--no-lock'), io });
}
