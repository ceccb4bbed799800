// runtime/ knows no contract (issue 42, "svc serves any contract"): it imports nothing from
// generated/ (nor handlers/, bin/, demo/). Every contract fact reaches it in the registry bin/wiring.ts
// builds (runtime/app.ts Registry), installed at start for its leaf functions (runtime/contract-facts.ts);
// the Platform API's typed forms stay in generated/ and handlers/. The runtime's own column unions
// (runtime/data/schema.ts) must stay the contract's, checked here at compile time.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type * as contract from '../../generated/contract.ts';
import type { components } from '../../generated/types.ts';
import type * as tables from '../../runtime/data/schema.ts';
import type { FeedEvent } from '../../runtime/events/feed.ts';
import type { Notification } from '../../runtime/events/notifications.ts';
import type { ApprovalDecision } from '../../runtime/pipeline/approvals.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const RUNTIME = join(ROOT, 'runtime');
const FORBIDDEN = ['generated', 'handlers', 'bin', 'demo'];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : /\.(ts|js|mjs)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** Every module specifier of a file: imports, re-exports, import() calls and import('…') types. */
function specifiers(file: string): { specifier: string; line: number }[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: { specifier: string; line: number }[] = [];
  const add = (node: ts.Node | undefined) => {
    if (node && ts.isStringLiteralLike(node)) found.push({ specifier: node.text, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node.moduleReference.expression);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal);
    else if (ts.isModuleDeclaration(node) && ts.isStringLiteral(node.name)) add(node.name);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The project folder a relative specifier lands in (null for a package or node: builtin). */
function folderOf(file: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  return relative(ROOT, resolve(dirname(file), specifier)).split('/')[0] ?? null;
}

describe('runtime/ imports nothing of a contract', () => {
  it('no module under runtime/ names generated/, handlers/, bin/ or demo/', () => {
    const files = sources(RUNTIME);
    expect(files.length).toBeGreaterThan(100);
    const offending = files.flatMap((file) =>
      specifiers(file)
        .filter(({ specifier }) => FORBIDDEN.includes(folderOf(file, specifier) ?? ''))
        .map(({ specifier, line }) => `${relative(ROOT, file)}:${line} ${specifier}`),
    );
    expect(offending, 'take the fact from the registry (runtime/app.ts Registry) or runtime/contract-facts.ts instead').toEqual([]);
  });

  it('the scan sees an import of generated/ (it would fail on one)', () => {
    const probe = join(RUNTIME, 'contract-facts.ts');
    expect(folderOf(probe, '../generated/contract.ts')).toBe('generated');
    expect(folderOf(join(RUNTIME, 'data/schema.ts'), '../../generated/types.ts')).toBe('generated');
    expect(folderOf(probe, './contract-types.ts')).toBe('runtime');
  });

  it("the runtime's own unions and shapes are the contract's (checked by tsc)", () => {
    expectTypeOf<tables.ApiKeyMode>().toEqualTypeOf<contract.ApiKeyMode>();
    expectTypeOf<tables.ApprovalStatus>().toEqualTypeOf<contract.ApprovalStatus>();
    expectTypeOf<tables.MembershipStatus>().toEqualTypeOf<contract.MembershipStatus>();
    expectTypeOf<tables.OperationStatus>().toEqualTypeOf<contract.OperationStatus>();
    expectTypeOf<tables.PipelineRunStatus>().toEqualTypeOf<contract.PipelineRunStatus>();
    expectTypeOf<tables.PipelineStepStatus>().toEqualTypeOf<contract.PipelineStepStatus>();
    expectTypeOf<tables.PipelineEventType>().toEqualTypeOf<components['schemas']['PipelineEvent']['type']>();
    expectTypeOf<tables.PipelineLevel>().toEqualTypeOf<components['schemas']['PipelineEvent']['level']>();
    expectTypeOf<tables.WebhookDeliveryStatus>().toEqualTypeOf<contract.WebhookDeliveryStatus>();
    expectTypeOf<tables.WebhookEndpointStatus>().toEqualTypeOf<contract.WebhookEndpointStatus>();
    expectTypeOf<tables.FileStatus>().toEqualTypeOf<contract.FileStatus>();
    expectTypeOf<tables.ExtractionStatus>().toEqualTypeOf<contract.ExtractionStatus>();
    expectTypeOf<components['schemas']['Event']>().toMatchTypeOf<FeedEvent>();
    expectTypeOf<components['schemas']['Notification']>().toMatchTypeOf<Notification>();
    expectTypeOf<components['schemas']['ApprovalDecision']>().toEqualTypeOf<ApprovalDecision>();
  });
});
