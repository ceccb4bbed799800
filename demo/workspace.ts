// The demo workspace as `svc serve --demo` and `svc seed` make it: the seed (seed.ts, loaded when
// needed) with the registry's pipelines and intake templates and the configured file store.
// startServer takes seedDemoWorkspace as its seedDemo option (a DemoSeeder).
import type { Config } from '../runtime/config.ts';
import type { Database } from '../runtime/data/client.ts';
import { fileStoreFor, type Registry } from '../runtime/app.ts';
import type { SeedCredentials } from './seed.ts';
import type { SeedActivityOptions } from './seed-activity.ts';
import type { PipelineDefinition } from '../handlers/workers/pipeline-runs.ts';
import type { IntakeTemplates } from '../handlers/intake-templates.ts';

/** What the demo reads of the Platform API's registry (bin/wiring.ts PlatformRegistry): its pipelines and intake templates. */
type DemoFields = { pipelines?: readonly PipelineDefinition[]; intakeTemplates?: IntakeTemplates };

type SeedFn = (database: Database, options: { baseUrl: string; activity?: SeedActivityOptions }) => Promise<SeedCredentials>;

/** Seeds the demo workspace with its activity (runs executed by the registry's pipelines, the census file in the configured store). */
export async function seedDemoWorkspace(database: Database, config: Config, registry: Registry | DemoFields | null, baseUrl = config.baseUrl): Promise<SeedCredentials> {
  const fileStore = fileStoreFor(config);
  try {
    // startServer hands its seeder the runtime's Registry; svc's (bin/wiring.ts PlatformRegistry) carries these too.
    const demo = (registry ?? {}) as DemoFields;
    return await (await loadSeed())(database, { baseUrl, activity: { pipelines: demo.pipelines ?? [], fileStore, intakeTemplates: demo.intakeTemplates } });
  } finally {
    fileStore.close?.();
  }
}

/** demo/seed.ts, loaded when needed. */
export async function loadSeed(): Promise<SeedFn> {
  const mod = (await import('./seed.ts')) as unknown as { seed: SeedFn };
  return mod.seed;
}
