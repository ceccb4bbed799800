// The standard library (generator/standard-library.ts) is complete: every problem code runtime/
// raises or compares, every code the generator implies for an operation, and every limit runtime/ or
// the compiler reads is built in. A contract that omits one of them then still serves, and a runtime
// change that reads a new limit or raises a new code fails here until the library has it (without it,
// a contract omitting the limit starts with NaN, one omitting the code answers 500 with no body).
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { limits, problemCatalogue, problemCodes } from '../../generated/contract.ts';
import { STANDARD_LIMITS, STANDARD_PROBLEMS } from '../../generator/standard-library.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const LIBRARY = join(ROOT, 'generator/standard-library.ts');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [join(dir, e.name)] : [],
  );
}

const runtime = sources(join(ROOT, 'runtime'));
const generator = sources(join(ROOT, 'generator')).filter((f) => f !== LIBRARY);

/** Each match of `pattern`'s first group in the files, with where it is. */
function matches(files: string[], pattern: RegExp): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(pattern)) {
      const line = text.slice(0, m.index).split('\n').length;
      if (!found.has(m[1]!)) found.set(m[1]!, `${relative(ROOT, file)}:${line}`);
    }
  }
  return found;
}

/** String literals of the files (a syntax tree's, so comments and template parts are not), with where each first is. */
function stringLiterals(files: string[]): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of files) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && !found.has(node.text))
        found.set(node.text, `${relative(ROOT, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`);
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

function missing(found: Map<string, string>, library: Readonly<Record<string, unknown>>): string[] {
  return [...found].filter(([name]) => !(name in library)).map(([name, at]) => `${name} (${at})`);
}

const ADD = 'add it to generator/standard-library.ts with the value contract/svc.yaml gives it, and to the table in docs/contract-authors.md';

describe('the standard library holds everything the runtime needs', () => {
  it('every limit runtime/ or the compiler reads', () => {
    const read = matches([...runtime, ...generator], /\blimits\)?\??\.([A-Za-z_]\w*)/g);
    for (const [name, at] of matches(runtime, /Pick<Limits,\s*([^>]+)>/g)) for (const m of name.matchAll(/'(\w+)'/g)) read.set(m[1]!, at);
    expect(read.size).toBeGreaterThan(20);
    expect(missing(read, STANDARD_LIMITS), ADD).toEqual([]);
  });

  it('every problem code runtime/ raises', () => {
    const raised = matches(runtime, /new ProblemError\(\s*'([a-z][a-z0-9_]*)'/g);
    for (const [code, at] of matches(runtime, /problemRecord\((?:[\w.]+,\s*)?'([a-z][a-z0-9_]*)'/g)) raised.set(code, at);
    expect(raised.size).toBeGreaterThan(15);
    expect(missing(raised, STANDARD_PROBLEMS), ADD).toEqual([]);
  });

  it('every problem code of the contract that runtime/ names (a comparison, a helper’s code)', () => {
    const codes = new Set<string>(problemCodes);
    const named = new Map([...stringLiterals(runtime)].filter(([value]) => codes.has(value)));
    expect(missing(named, STANDARD_PROBLEMS), ADD).toEqual([]);
  });

  it('every problem code the generator implies for an operation', () => {
    const text = readFileSync(join(ROOT, 'generator/model.ts'), 'utf8');
    const implied = [...text.matchAll(/codes\.add\('([a-z_]+)'\)/g)].map((m) => m[1]!);
    implied.push(...[.../IMPLIED_ALL = \[([^\]]+)\]/.exec(text)![1]!.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]!));
    expect(implied.length).toBeGreaterThan(10);
    expect(implied.filter((code) => !(code in STANDARD_PROBLEMS)), ADD).toEqual([]);
  });
});

describe('the built-in values are contract/svc.yaml’s', () => {
  const reason = 'a built-in default is the value contract/svc.yaml declares; change the two together (or drop the entry from svc.yaml to take the default)';

  it('problems', () => {
    for (const [code, p] of Object.entries(STANDARD_PROBLEMS)) {
      const { status, title, retry, retryAfter } = p;
      expect(problemCatalogue[code as keyof typeof problemCatalogue], `${code}: ${reason}`).toEqual({ code, status, title, retry, retryAfter });
    }
  });

  it('limits', () => {
    for (const [name, l] of Object.entries(STANDARD_LIMITS)) expect(limits[name as keyof typeof limits], `${name}: ${reason}`).toBe(l.value);
  });

  it('docs/contract-authors.md prints each with its value', () => {
    const doc = readFileSync(join(ROOT, 'docs/contract-authors.md'), 'utf8');
    for (const [code, p] of Object.entries(STANDARD_PROBLEMS)) expect(doc, code).toContain(`| \`${code}\` | ${p.status} | ${p.title} | ${p.retry} | ${p.retryAfter ?? ''} |`);
    for (const [name, l] of Object.entries(STANDARD_LIMITS)) expect(doc, name).toContain(`| \`${name}\` | ${l.value} |`);
  });

  it('each entry says what it is for', () => {
    for (const entry of [...Object.values(STANDARD_PROBLEMS), ...Object.values(STANDARD_LIMITS)]) expect(entry.description.length).toBeGreaterThan(10);
  });
});
