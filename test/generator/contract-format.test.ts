// The contract format has one description, generator/contract-format/contract.schema.json: its
// compiled validators are the ones committed, and contract/README.md cannot drift from it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { MODULE_FILE, SCHEMA_FILE, standaloneSource } from '../../generator/contract-format/build.ts';
import { formatValidators, prebuiltIsFresh } from '../../generator/contract-format/index.ts';

const README = 'contract/README.md';
const REBUILD = 'validators.generated.js was not built from contract.schema.json: run `node --import tsx generator/contract-format/build.ts --write` and commit the result';

type Def = { properties?: Record<string, unknown>; propertyNames?: { enum?: string[] } };
const format = JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as { $defs: Record<string, Def> };
const readme = readFileSync(README, 'utf8');

/** The annotated family file of contract/README.md's "Operations" section. */
function operationsExample(): string {
  const section = readme.slice(readme.indexOf('## Operations'));
  return /```yaml\n([\s\S]*?)```/.exec(section)![1];
}

describe('the compiled contract-format validators', () => {
  it('are the committed module, built from the current schema', () => {
    expect(prebuiltIsFresh(), REBUILD).toBe(true);
    expect(readFileSync(MODULE_FILE, 'utf8') === standaloneSource(), REBUILD).toBe(true);
  });
});

describe('contract/README.md and the format schema', () => {
  it('points to the schema', () => {
    expect(readme).toContain('(../generator/contract-format/contract.schema.json)');
  });

  it("shows an operation the schema accepts, with every key the schema has", () => {
    const example = operationsExample();
    const validate = formatValidators().familyFile;
    expect(validate(parse(example)), JSON.stringify(validate.errors, null, 1)).toBe(true);
    const missing: string[] = [];
    for (const def of ['operation', 'http', 'mcp', 'deprecation'])
      for (const key of Object.keys(format.$defs[def].properties ?? {}))
        if (!(key === 'decision' && def !== 'operation') && !new RegExp(`(^|[\\s{,])${key}:`, 'm').test(example)) missing.push(`${def}.${key}`);
    expect(missing, `contract/README.md's operation example lacks keys of the format schema: document them`).toEqual([]);
  });

  it('names every key of svc.yaml and every schema keyword the format admits', () => {
    const named = (key: string) => readme.includes(`\`${key}\``);
    const svcKeys = Object.keys(format.$defs.svcFile.properties ?? {});
    const keywords = format.$defs.schema.propertyNames?.enum ?? [];
    expect(keywords.length).toBeGreaterThan(40);
    expect([...svcKeys, ...keywords].filter((k) => !named(k)), 'keys of the format schema that contract/README.md does not name').toEqual([]);
  });
});
