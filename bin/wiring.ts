// This repository's composition root: the generated wiring module (generated/wiring.ts, made by
// `svc generate` for every project) with this repository's handlers and migration history. runtime/
// never imports handlers/; it receives this registry as an argument (createApp, startServer,
// runServe). Folder graph: bin → {handlers, runtime, generated}, handlers → {runtime, generated},
// generated → {runtime (types), handlers/index.ts}, runtime → nothing of these: every contract fact
// reaches it in this registry (test/contract/layout.test.ts). Registry fields only this API has
// (workers, file jobs, outbox hooks, pipelines, intake templates) come from handlers/index.ts
// `registryExtras`.
import type { Registry } from '../runtime/app.ts';
import type { IntakeTemplates } from '../handlers/intake-templates.ts';
import type { PipelineDefinition } from '../handlers/workers/pipeline-runs.ts';
import { registry } from '../generated/wiring.ts';
import { GENERATED_DIR, MIGRATIONS_FOLDER } from './paths.ts';

/** The Platform API's registry: the runtime's, and what its demo workspace reads (pipelines, intake templates). */
export type PlatformRegistry = Registry & { pipelines: readonly PipelineDefinition[]; intakeTemplates: IntakeTemplates };

/** The registry of this contract and its handlers: what `svc serve` runs. */
export function svcRegistry(): PlatformRegistry {
  return registry({ migrationsFolder: MIGRATIONS_FOLDER, generatedDir: GENERATED_DIR }) as PlatformRegistry;
}
