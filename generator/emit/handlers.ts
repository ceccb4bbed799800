// generated/handlers/<family>.ts and handlers/index.ts: the handler interface each family implements.
import type { FamilyModel, Model } from '../model.ts';
import { pascal } from '../raw.ts';
import { identityMemo } from '../session.ts';
import { TS_HEADER } from './format.ts';

/** A family's file and its lines in handlers/index.ts: both read the family only (its name, description, operations). */
interface FamilyTexts {
  path: string;
  file: string;
  name: string;
  importLine: string;
}

/** A watcher's memo (session.ts), keyed on the FamilyModel: the same object while its name, description and operations are. */
const familyTexts = identityMemo<FamilyModel, FamilyTexts>();

function textsOf(family: FamilyModel): FamilyTexts {
  const name = handlersInterfaceName(family.name);
  return {
    path: `handlers/${family.name}.ts`,
    file: emitFamily(family),
    name,
    importLine: `import type { ${name} } from './${family.name}.ts';`,
  };
}

export function handlersInterfaceName(family: string): string {
  return `${pascal(family)}Handlers`;
}

function emitFamily(family: FamilyModel): string {
  const members = family.operations
    .map((op) => {
      const { def } = op;
      const s = (name: string) => `components['schemas']['${name}']`;
      const doc = `  /** ${def.summary.replace(/\*\//g, '* /')} (${def.method} ${def.path}) */`;
      return `${doc}\n  '${def.id}': Handler<${s(op.inputName)}, ${s(op.outputName)}>;`;
    })
    .join('\n');
  return `${TS_HEADER}import type { Handler } from 'svc/runtime/handler-types.ts';
import type { components } from '../types.ts';

/** ${family.description.replace(/\*\//g, '* /')} */
export interface ${handlersInterfaceName(family.name)} {
${members}
}
`;
}

export function emitHandlers(model: Model): Map<string, string> {
  const files = new Map<string, string>();
  const texts = model.families.map((f) => familyTexts.get(f) ?? familyTexts.set(f, textsOf(f)));
  for (const t of texts) files.set(t.path, t.file);
  const names = texts.map((t) => t.name);
  const imports = texts.map((t) => t.importLine).join('\n');
  files.set(
    'handlers/index.ts',
    `${TS_HEADER}${imports}

export type { ${names.join(', ')} };

/** Every operation's handler: an object missing one is a type error. */
export type AllHandlers = ${names.join(' &\n  ') || 'Record<never, never>'};
`,
  );
  return files;
}
