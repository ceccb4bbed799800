// generated/registry.ts: the operation registry the runtime reads (never the YAML).
import type { Model } from '../model.ts';
import { literal, TS_HEADER } from './format.ts';

export function emitRegistry(model: Model): string {
  return `${TS_HEADER}import type { JsonSchema, OperationDef, ServiceDef } from '../runtime/contract-types.ts';

export const service: ServiceDef = ${literal(model.service)};

export const operations: readonly OperationDef[] = ${literal(model.operations.map((o) => o.def))};

export const operationsById: Readonly<Record<string, OperationDef>> = Object.freeze(
  Object.fromEntries(operations.map((operation) => [operation.id, operation])),
);

/** Component schemas (refs are #/components/schemas/<Name>), as in openapi.json. */
export const schemas: Readonly<Record<string, JsonSchema>> = ${literal(model.schemas)};
`;
}
