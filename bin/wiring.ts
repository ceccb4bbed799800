// The one place that wires the generated contract output and the hand-written handlers into the
// runtime library. runtime/ never imports handlers/; it receives this registry as an argument
// (createApp, startServer, runServe). Folder graph: bin → {handlers, runtime, generated},
// handlers → {runtime, generated}, generated → runtime (types), runtime → nothing of these: every
// contract fact reaches it in this registry (test/contract/layout.test.ts).
import type { Registry } from '../runtime/app.ts';
import type { AnyHandler } from '../runtime/pipeline/executor.ts';
import type { ValidateFn } from '../runtime/pipeline/validate.ts';
import { mcpTools } from '../generated/mcp-tools.ts';
import { familyDescriptions, operationsById, redactedFieldNames, secretPointers, service } from '../generated/registry.ts';
import { routes } from '../generated/routes.ts';
import { resultValidators, validators } from '../generated/validators.js';
import { handlers } from '../handlers/index.ts';
import { pipelineDefinitions } from '../handlers/pipelines.ts';
import { INTAKE_TEMPLATES, type IntakeTemplates } from '../handlers/intake-templates.ts';
import { campaignOutbox } from '../handlers/campaigns.ts';
import { pipelineRunWorker } from '../handlers/workers/pipeline-runs.ts';
import { extractionJob } from '../handlers/workers/extractions.ts';
import type { PipelineDefinition } from '../handlers/workers/pipeline-runs.ts';
import { MIGRATIONS_FOLDER } from './paths.ts';

/** The Platform API's registry: the runtime's, and what its demo workspace reads (pipelines, intake templates). */
export type PlatformRegistry = Registry & { pipelines: readonly PipelineDefinition[]; intakeTemplates: IntakeTemplates };

/** The registry of this contract and its handlers: what `svc serve` runs. */
export function svcRegistry(): PlatformRegistry {
  return {
    service,
    migrationsFolder: MIGRATIONS_FOLDER,
    operationsById,
    validators: validators as Readonly<Record<string, ValidateFn>>,
    resultValidators: resultValidators as Readonly<Record<string, ValidateFn>>,
    routes,
    tools: mcpTools,
    // AllHandlers is keyed by operation id with each operation's own input/output types.
    handlers: handlers as unknown as Readonly<Record<string, AnyHandler>>,
    secretPointers,
    familyDescriptions,
    redactedFieldNames,
    pipelines: pipelineDefinitions,
    workers: [pipelineRunWorker(pipelineDefinitions)],
    fileJobs: [extractionJob],
    outbox: campaignOutbox,
    intakeTemplates: INTAKE_TEMPLATES,
  };
}
