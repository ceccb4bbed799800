// The contract's facts have one home: generated/contract.ts (compiled from svc.yaml). This test
// reads the registry's limits and problem catalogue and scans every runtime/ source for their
// literal values, so a re-typed limit or a fallback problem table fails here, not in production.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { limits, problemCatalogue, problemCodes } from '../../generated/contract.ts';
import { service } from '../../generated/registry.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const RUNTIME = join(ROOT, 'runtime');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

interface Token {
  file: string;
  line: number;
  kind: 'number' | 'string';
  value: string;
}

/** Numeric and string literal tokens of a file (comments skipped by the TypeScript scanner). */
function literals(file: string): Token[] {
  const text = readFileSync(file, 'utf8');
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.Standard, text);
  const out: Token[] = [];
  const lineOf = (pos: number) => text.slice(0, pos).split('\n').length;
  for (let t = scanner.scan(); t !== ts.SyntaxKind.EndOfFileToken; t = scanner.scan()) {
    if (t === ts.SyntaxKind.NumericLiteral) out.push({ file, line: lineOf(scanner.getTokenStart()), kind: 'number', value: String(Number(scanner.getTokenValue())) });
    else if (t === ts.SyntaxKind.StringLiteral || t === ts.SyntaxKind.NoSubstitutionTemplateLiteral)
      out.push({ file, line: lineOf(scanner.getTokenStart()), kind: 'string', value: scanner.getTokenValue() });
  }
  return out;
}

const tokens = sources(RUNTIME).flatMap(literals);
const where = (t: Token) => `${relative(ROOT, t.file)}:${t.line} ${JSON.stringify(t.value)}`;

describe('contract facts are read, never re-typed, by runtime/', () => {
  it('the generated facts are the registry’s', () => {
    expect(limits).toEqual(service.limits);
    expect(problemCatalogue).toEqual(service.problems);
    expect([...problemCodes].sort()).toEqual(Object.keys(service.problems).sort());
  });

  it('no limit value appears as a number literal in runtime/', () => {
    // Values of two digits or more (a 5 or a 6 is too common a number to say anything), and every
    // limit in seconds also in milliseconds. A line that uses such a number for another reason says
    // so with the comment `not a contract limit`.
    const values = new Set<string>();
    for (const [name, v] of Object.entries(limits)) {
      if (v >= 10) values.add(String(v));
      if (name.endsWith('Seconds')) values.add(String(v * 1000));
    }
    expect(values.size).toBeGreaterThan(5);
    const lines = new Map<string, string[]>();
    const lineText = (t: Token) => {
      if (!lines.has(t.file)) lines.set(t.file, readFileSync(t.file, 'utf8').split('\n'));
      return lines.get(t.file)![t.line - 1]!;
    };
    const hits = tokens
      .filter((t) => t.kind === 'number' && values.has(t.value) && !lineText(t).includes('not a contract limit'))
      .map(where);
    expect(hits).toEqual([]);
  });

  it('no problem title, and no mcpProtocolVersions or contract version, appears as a string literal in runtime/', () => {
    const facts = new Set([
      ...Object.values(problemCatalogue).map((p) => p.title),
      ...service.mcpProtocolVersions,
      service.contractVersion,
    ]);
    const hits = tokens.filter((t) => t.kind === 'string' && facts.has(t.value)).map(where);
    expect(hits).toEqual([]);
  });

  it('no table pairs a problem code with its status in runtime/ (the code is typed; its status is the catalogue’s)', () => {
    // A code literal followed within a few tokens by its own status number is a fallback table row.
    const hits: string[] = [];
    tokens.forEach((t, i) => {
      if (t.kind !== 'string' || !(problemCodes as readonly string[]).includes(t.value)) return;
      const status = String(problemCatalogue[t.value as keyof typeof problemCatalogue].status);
      const near = tokens.slice(i + 1, i + 3).filter((n) => n.file === t.file && n.line === t.line);
      if (near.some((n) => n.kind === 'number' && n.value === status)) hits.push(where(t));
    });
    expect(hits).toEqual([]);
  });
});
