// `svc serve` and `svc seed` of a project other than this repository (svc.config.json elsewhere, made
// by `svc init`): the project's generated wiring module (generated/wiring.ts) gives the registry, its
// configured migrations folder the database's history, and bin/project-seed.ts (with the project's
// optional seed module) the demo workspace. Runs through tsx (bin/svc.js registers it): the project's
// handlers are TypeScript, and they import the runtime as `svc/runtime/…`, which must be the very
// modules this process runs (one ProblemError class), not copies bundled into dist/.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Registry } from '../runtime/app.ts';
import type { Project } from '../generator/project.ts';
import { projectSeeder } from './project-seed.ts';

export async function runProjectServeOrSeed(command: 'serve' | 'seed', argv: string[], project: Project): Promise<number> {
  const { runServe, runSeed } = await import('./serve-cli.ts');
  const wiring = path.join(project.generated, 'wiring.ts');
  const migrationsFolder = project.migrations;
  if (!migrationsFolder) {
    console.error(`svc ${command}: ${path.join(project.root, 'svc.config.json')} names no "migrations" folder: the project's migration history (docs/projects.md).`);
    return 2;
  }
  const registry: Promise<Registry> = import(pathToFileURL(wiring).href).then(
    (mod: { registry?: (paths: { migrationsFolder: string; generatedDir: string }) => Registry }) => {
      if (typeof mod.registry !== 'function') throw new Error(`${wiring} exports no registry(): run \`npx svc generate\` in ${project.root}.`);
      return mod.registry({ migrationsFolder, generatedDir: project.generated });
    },
    (err: Error) => {
      throw new Error(`cannot load ${wiring} (run \`npx svc generate\`?): ${err.message}`);
    },
  );
  registry.catch(() => undefined); // awaited below; a failure is reported there
  // The embedded database belongs to the project: beside its svc.config.json, not wherever svc was
  // started (`svc serve --project DIR` from another directory must not open that directory's database).
  process.env.SVC_DATA_DIR ||= path.join(project.root, '.svc-data');
  const seedDemo = projectSeeder(project.seed);
  try {
    return command === 'serve' ? await runServe(argv, registry, { migrationsFolder, seedDemo }) : await runSeed(argv, await registry, { migrationsFolder, seedDemo });
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    return 1;
  }
}
