// generated/contract.ts: the contract's facts as typed constants — the problem codes as a union and
// their catalogue, the limits as an interface with named members, and each named string enum of the
// contract's schemas as a union with its values. The runtime reads these; it re-types none of them.
import type { Model } from '../model.ts';
import { literal, TS_HEADER } from './format.ts';

function union(values: readonly string[]): string {
  return values.length ? values.map((v) => JSON.stringify(v)).join(' | ') : 'never';
}

/** `ApprovalStatus` -> `approvalStatusValues`. */
function valuesName(typeName: string): string {
  return `${typeName[0]!.toLowerCase()}${typeName.slice(1)}Values`;
}

/** Named string enums of the contract's own schemas (e.g. ApprovalStatus), sorted by name. */
export function contractEnums(model: Model): [string, string[]][] {
  const out: [string, string[]][] = [];
  for (const name of [...model.contractSchemaNames].sort()) {
    const schema = model.schemas[name] as { type?: unknown; enum?: unknown } | undefined;
    if (schema && schema.type === 'string' && Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === 'string'))
      out.push([name, schema.enum as string[]]);
  }
  return out;
}

export function emitContract(model: Model): string {
  const codes = model.problems.map((p) => p.code);
  const limitNames = Object.keys(model.limits);
  const limitMembers = limitNames.map((name) => `  readonly ${name}: number;`).join('\n');
  const enums = contractEnums(model)
    .map(
      ([name, values]) =>
        `export type ${name} = ${union(values)};\nexport const ${valuesName(name)}: readonly ${name}[] = ${JSON.stringify(values)};\n`,
    )
    .join('\n');
  return `${TS_HEADER}import type { ProblemDef } from 'svc/runtime/contract-types.ts';

/** Every problem code of the contract (svc.yaml problems). */
export type ProblemCode = ${union(codes)};

/** The problem catalogue: code -> status, title, retry class, Retry-After seconds. */
export const problemCatalogue: { readonly [C in ProblemCode]: ProblemDef<C> } = ${literal(
    Object.fromEntries(model.problems.map(({ decision: _d, ...p }) => [p.code, p])),
  )};

export const problemCodes: readonly ProblemCode[] = ${JSON.stringify(codes)};

/**
 * This contract's codes, registered with the runtime (runtime/problem-error.ts ProblemCodeRegistry):
 * a ProblemError with a code the contract does not define does not compile. Through the package, as
 * every generated import of the runtime, so the augmentation holds wherever the output lives. One
 * TypeScript program holds one contract: two would declare the registry's code twice
 * (test/fixtures/stock-api/tsconfig.json type-checks the second contract on its own).
 */
declare module 'svc/runtime/problem-error.ts' {
  interface ProblemCodeRegistry {
    code: ${union(codes)};
  }
}

/** The contract's named limits (svc.yaml limits). */
export interface Limits {
${limitMembers}
}

export const limits: Limits = ${literal(model.limits)};

${enums}`;
}
