// generated/handlers/<family>.ts and handlers/index.ts: the handler interface each family implements.
import type { FamilyModel, Model } from '../model.ts';
import { pascal } from '../raw.ts';
import { TS_HEADER } from './format.ts';

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
  return `${TS_HEADER}import type { Handler } from '../../runtime/handler-types.ts';
import type { components } from '../types.ts';

/** ${family.description.replace(/\*\//g, '* /')} */
export interface ${handlersInterfaceName(family.name)} {
${members}
}
`;
}

export function emitHandlers(model: Model): Map<string, string> {
  const files = new Map<string, string>();
  for (const family of model.families) files.set(`handlers/${family.name}.ts`, emitFamily(family));
  const names = model.families.map((f) => handlersInterfaceName(f.name));
  const imports = model.families
    .map((f) => `import type { ${handlersInterfaceName(f.name)} } from './${f.name}.ts';`)
    .join('\n');
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
