// `svc generate --prune` for a family the contract no longer has: its handlers file goes, with its
// import and spread in the handlers index, the reverse of what scaffolding a new family adds. Its
// generated types are already gone (every generate removes what the contract no longer produces), so
// keeping the file would leave the project failing to type-check. Refused, with the reason, when the
// file is more than the family's handlers: another module imports it, or the index uses something of
// it besides the handlers object. The index edit is re-parsed to prove every other entry is kept.
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ts } from '../ts-packages.ts';
import { dropUnusedImport, findObject, parse, parseErrors, propertyTexts, usesIdentifier } from './handlers-ast.ts';

export type PruneFamilyResult = { ok: true; indexEdited: boolean } | { ok: false; reason: string };

/** Every .ts file under dir (index.ts and the family file included), sorted. */
function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out.push(...tsFiles(full));
    else if (name.endsWith('.ts')) out.push(full);
  }
  return out;
}

/** Import specifiers of a file that resolve to target, with the names each imports. */
function importsOf(file: string, target: string): { names: string[]; whole: boolean }[] {
  const sf = parse(file, readFileSync(file, 'utf8'));
  const out: { names: string[]; whole: boolean }[] = [];
  for (const stmt of sf.statements) {
    const spec = (ts.isImportDeclaration(stmt) || ts.isExportDeclaration(stmt)) && stmt.moduleSpecifier && ts.isStringLiteral(stmt.moduleSpecifier) ? stmt.moduleSpecifier.text : null;
    if (!spec?.startsWith('.')) continue;
    const resolved = path.resolve(path.dirname(file), spec);
    if (resolved !== target && `${resolved}.ts` !== target) continue;
    const named = ts.isImportDeclaration(stmt) ? stmt.importClause?.namedBindings : undefined;
    const names = named && ts.isNamedImports(named) ? named.elements.map((e) => e.name.text) : [];
    const whole = !ts.isImportDeclaration(stmt) || !!stmt.importClause?.name || (!!named && !ts.isNamedImports(named));
    out.push({ names, whole });
  }
  return out;
}

/** The index's text without the spread `...exportName` in its handlers object and without its import. */
function unregister(indexFile: string, text: string, exportName: string): string | null {
  const sf = parse(indexFile, text);
  const obj = findObject(sf, 'handlers');
  if (!obj) return null;
  let next = text;
  const spread = obj.properties.find((p) => ts.isSpreadAssignment(p) && ts.isIdentifier(p.expression) && p.expression.text === exportName);
  if (spread) {
    let end = spread.end;
    const comma = /^\s*,/.exec(next.slice(end));
    if (comma) end += comma[0].length;
    next = next.slice(0, spread.getFullStart()) + next.slice(end);
  }
  next = dropUnusedImport(next, parse(indexFile, next), exportName);
  const after = parse(indexFile, next);
  // Still used elsewhere in the index (its import kept): deleting the file would break it.
  if (usesIdentifier(after, exportName)) return null;
  const objAfter = findObject(after, 'handlers');
  if (parseErrors(after).length || !objAfter) return null;
  const kept = propertyTexts(objAfter, after);
  const expected = propertyTexts(obj, sf).filter((t) => !spread || t !== spread.getText(sf));
  return expected.every((t) => kept.includes(t)) && kept.length === expected.length ? next : null;
}

/** Deletes handlersDir/<family>.ts and unregisters it from handlersDir/index.ts, or says why not. */
export function pruneFamily(handlersDir: string, file: string, exportName: string, dryRun = false): PruneFamilyResult {
  const target = path.resolve(file);
  const indexFile = path.join(handlersDir, 'index.ts');
  for (const other of tsFiles(handlersDir)) {
    if (path.resolve(other) === target || path.resolve(other) === path.resolve(indexFile)) continue;
    if (importsOf(other, target).length) return { ok: false, reason: `${path.relative(handlersDir, other)} imports it` };
  }
  let next: string | null = null;
  if (existsSync(indexFile)) {
    const imports = importsOf(indexFile, target);
    const extra = imports.flatMap((i) => i.names).filter((n) => n !== exportName);
    if (imports.some((i) => i.whole) || extra.length) return { ok: false, reason: `index.ts uses ${extra.length ? extra.join(', ') : 'the whole module'} from it besides ${exportName}` };
    if (imports.length) {
      const text = readFileSync(indexFile, 'utf8');
      next = unregister(indexFile, text, exportName);
      if (next === null) return { ok: false, reason: 'index.ts could not be edited safely' };
    }
  }
  if (!dryRun) {
    if (next !== null) writeFileSync(indexFile, next);
    rmSync(file);
  }
  return { ok: true, indexEdited: next !== null };
}
