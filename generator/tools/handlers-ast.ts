// Reading and editing a handlers file with the TypeScript parser: the handlers object of a file, its
// keys, its imports. Scaffolding (scaffold.ts) and family pruning (prune-family.ts) edit through these,
// and re-parse every edit to prove the rest of the file is unchanged.
import type { Diagnostic, Expression, Node, ObjectLiteralElementLike, ObjectLiteralExpression, SourceFile } from 'typescript';
import { ts } from '../ts-packages.ts';

export function parse(file: string, text: string): SourceFile {
  return ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
}

export function parseErrors(sf: SourceFile): string[] {
  const list = (sf as unknown as { parseDiagnostics?: Diagnostic[] }).parseDiagnostics ?? [];
  return list.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

export function unwrap(expr: Expression): Expression {
  let e = expr;
  while (ts.isSatisfiesExpression(e) || ts.isAsExpression(e) || ts.isParenthesizedExpression(e) || ts.isTypeAssertionExpression(e)) e = e.expression;
  return e;
}

/** The handlers object of a file: the variable named `name`, else the first exported object literal. */
export function findObject(sf: SourceFile, name: string): ObjectLiteralExpression | null {
  let fallback: ObjectLiteralExpression | null = null;
  for (const stmt of sf.statements) {
    if (!ts.isVariableStatement(stmt)) continue;
    const exported = stmt.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) ?? false;
    for (const decl of stmt.declarationList.declarations) {
      if (!decl.initializer) continue;
      const init = unwrap(decl.initializer);
      if (!ts.isObjectLiteralExpression(init)) continue;
      if (ts.isIdentifier(decl.name) && decl.name.text === name) return init;
      if (exported && !fallback) fallback = init;
    }
  }
  return fallback;
}

export function propertyKey(p: ObjectLiteralElementLike): string | null {
  if (ts.isSpreadAssignment(p)) return null;
  const n = p.name;
  if (!n) return null;
  if (ts.isStringLiteral(n) || ts.isIdentifier(n) || ts.isNumericLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) return n.text;
  if (ts.isComputedPropertyName(n) && ts.isStringLiteralLike(n.expression)) return n.expression.text;
  return null;
}


/** Whether an identifier named `name` is used outside import declarations. */
export function usesIdentifier(sf: SourceFile, name: string): boolean {
  let used = false;
  const visit = (node: Node): void => {
    if (used || ts.isImportDeclaration(node)) return;
    if (ts.isIdentifier(node) && node.text === name) used = true;
    else ts.forEachChild(node, visit);
  };
  ts.forEachChild(sf, visit);
  return used;
}

/** Removes the named import `name` (or its whole import line) when nothing in the file uses it. */
export function dropUnusedImport(text: string, sf: SourceFile, name: string): string {
  if (usesIdentifier(sf, name)) return text;
  for (const stmt of sf.statements) {
    if (!ts.isImportDeclaration(stmt)) continue;
    const named = stmt.importClause?.namedBindings;
    if (!named || !ts.isNamedImports(named)) continue;
    const element = named.elements.find((e) => e.name.text === name);
    if (!element) continue;
    if (named.elements.length === 1 && !stmt.importClause?.name) {
      const start = text.lastIndexOf('\n', stmt.getStart(sf) - 1) + 1;
      const nl = text.indexOf('\n', stmt.end);
      return text.slice(0, start) + text.slice(nl < 0 ? text.length : nl + 1);
    }
    const index = named.elements.indexOf(element);
    const start = index === 0 ? element.getStart(sf) : named.elements[index - 1].end;
    const end = index === 0 ? named.elements[1].getStart(sf) : element.end;
    return text.slice(0, start) + text.slice(end);
  }
  return text;
}

export function lineOf(sf: SourceFile, pos: number): number {
  return sf.getLineAndCharacterOfPosition(pos).line + 1;
}


/** Every property text of an object, to prove an edit kept them. */
export function propertyTexts(obj: ObjectLiteralExpression, sf: SourceFile): string[] {
  return obj.properties.map((p) => p.getText(sf));
}
