// generated/wiring.ts: the one module that wires the generated output and the project's handlers
// into a registry for the runtime (DESIGN.md: "a generated wiring file"). `svc serve` and `svc seed`
// of any project load it (bin/project-serve.ts); this repository's bin/wiring.ts re-exports it.
// Extras the runtime takes that only some projects have (pipelines, intake templates, workers…)
// come from the handlers module's optional `registryExtras` export: the emitter names none of them.
import { TS_HEADER } from './format.ts';
import type { WiringOptions } from './wiring-options.ts';

export function emitWiring(options: WiringOptions): string {
  return `${TS_HEADER}// The registry of this contract and the project's handlers: what \`svc serve\` runs. The handlers
// module (${options.handlersIndex}) exports \`handlers\` and, optionally, \`registryExtras\`: registry
// fields only some projects have (e.g. pipelines), spread in first.
import type { Registry } from 'svc/runtime/app.ts';
import type { AnyHandler } from 'svc/runtime/pipeline/executor.ts';
import type { ValidateFn } from 'svc/runtime/pipeline/validate.ts';
import { mcpTools } from './mcp-tools.ts';
import { familyDescriptions, operationsById, redactedFieldNames, secretPointers, service } from './registry.ts';
import { routes } from './routes.ts';
import { resultValidators, validators } from './validators.js';
import * as project from '${options.handlersIndex}';

type Extras = Partial<Omit<Registry, 'service' | 'migrationsFolder' | 'generatedDir' | 'operationsById' | 'validators' | 'resultValidators' | 'routes' | 'tools' | 'handlers'>>;

/** The registry of this contract and its handlers; the migration history's and the generated output's folders (absolute) come from the project's configuration. */
export function registry(paths: { migrationsFolder: string; generatedDir: string }): Registry {
  const extras = (project as unknown as { registryExtras?: Extras }).registryExtras ?? {};
  return {
    ...extras,
    service,
    migrationsFolder: paths.migrationsFolder,
    generatedDir: paths.generatedDir,
    operationsById,
    validators: validators as Readonly<Record<string, ValidateFn>>,
    resultValidators: resultValidators as Readonly<Record<string, ValidateFn>>,
    routes,
    tools: mcpTools,
    // AllHandlers is keyed by operation id with each operation's own input/output types.
    handlers: project.handlers as unknown as Readonly<Record<string, AnyHandler>>,
    secretPointers,
    familyDescriptions,
    redactedFieldNames,
  };
}
`;
}
