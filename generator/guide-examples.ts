// svc.yaml guideExamples: which operations the generated REST guide shows (docs/contract-authors.md,
// "The generated guides"). Optional: without it the guide takes the contract's first paged read and
// first creating POST, and builds the body from that command's input schema (emit/docs-guides.ts).
// A named operation must exist and be of the kind its example shows, or svc generate stops here.
import type { ModelOperation } from './model.ts';
import { asObj, isObj } from './raw.ts';
import { diagnostic, type Diagnostic, type SourceFile } from './source.ts';

export interface GuideExamples {
  /** A paged GET read: the paging example. */
  list: string | null;
  /** A POST command: the write example. */
  create: string | null;
  /** The write example's body, as written; null: built from the command's input schema. */
  body: Record<string, unknown> | null;
}

const isList = (op: ModelOperation) => op.def.kind === 'read' && op.def.paged && op.def.method === 'GET';
const isCreate = (op: ModelOperation) => op.def.kind === 'command' && op.def.method === 'POST';

const KINDS = {
  list: { test: isList, what: 'a paged GET read' },
  create: { test: isCreate, what: 'a POST command' },
} as const;

/** svc.yaml guideExamples, checked against the operations; the diagnostics of any that name no fitting operation. */
export function guideExamplesOf(svc: SourceFile | null, operations: ModelOperation[]): { examples: GuideExamples; diagnostics: Diagnostic[] } {
  const declared = asObj(asObj(svc?.data).guideExamples);
  const examples: GuideExamples = { list: null, create: null, body: isObj(declared.body) ? (declared.body as Record<string, unknown>) : null };
  const diagnostics: Diagnostic[] = [];
  for (const key of ['list', 'create'] as const) {
    const id = declared[key];
    if (typeof id !== 'string') continue;
    const op = operations.find((o) => o.def.id === id);
    if (op && KINDS[key].test(op)) examples[key] = id;
    else if (svc)
      diagnostics.push(
        diagnostic(svc, ['guideExamples', key], 'guide-example', `guideExamples.${key} names ${id}, which is not ${op ? '' : 'an operation of this contract, nor '}${KINDS[key].what}. Name one that is, or remove the key.`),
      );
  }
  return { examples, diagnostics };
}

/** Whether a call needs nothing but its body or query: no path parameter, no required query parameter. */
const standsAlone = (op: ModelOperation) => op.inputs.every((i) => i.location === 'body' || (i.location !== 'path' && !i.required));

/**
 * The operation a guide's example shows: the declared one, else the first (by id) of its kind that
 * stands alone (a creating POST answers 201), else the first of its kind.
 */
export function exampleOperation(key: 'list' | 'create', examples: GuideExamples, operations: ModelOperation[]): ModelOperation | null {
  const declared = examples[key];
  if (declared) return operations.find((o) => o.def.id === declared) ?? null;
  const kind = operations.filter(KINDS[key].test);
  const best = (o: ModelOperation) => standsAlone(o) && (key === 'list' || o.def.successStatus === 201);
  return kind.find(best) ?? kind[0] ?? null;
}
