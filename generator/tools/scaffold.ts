// Handler scaffolding keeps handlers/ in step with the contract. Every contract operation gets an entry
// in its family's handlers/<family>.ts: a missing one is inserted as `'<id>': notImplemented('<id>'),`
// (501 not_implemented, marked so `svc lint` can list it) before the closing brace of the family's
// handlers object. An entry for an operation the contract no longer has (removed or renamed) is
// stale: `svc generate` warns with its place and what to delete, `svc generate --prune` deletes it,
// `svc lint` fails on it. The notImplemented import stands only where a stub uses it: it is added with
// the first stub and removed once no stub is left. Existing bodies are never touched: every edit is
// re-parsed with the TypeScript compiler to prove that every other property is still there, byte for
// byte, before the file is written.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ObjectLiteralExpression, SourceFile } from 'typescript';
import { dropUnusedImport, findObject, lineOf, parse, parseErrors, propertyKey, propertyTexts } from './handlers-ast.ts';
import { pruneFamily } from './prune-family.ts';
import { ts } from '../ts-packages.ts';
import { displayPath, loadContract } from '../load.ts';
import { buildModel } from '../model.ts';
import { ContractError, formatDiagnostic, sortDiagnostics } from '../source.ts';
import { consoleIo, parseArgs, type CliIo } from '../snapshot.ts';
import { handlersInterfaceName } from '../emit/handlers.ts';
import { importSource } from '../import-source.ts';

export interface ScaffoldOptions {
  /** Operations of the contract (OperationDef fits). */
  contractOps: readonly { id: string; family: string }[];
  handlersDir: string;
  /** Module specifier of notImplemented as seen from handlersDir. */
  notImplementedImport?: string;
  /** The generated output directory as seen from handlersDir (default ../generated). */
  generatedImport?: string;
  /** Also register a newly created family file in handlersDir/index.ts (default true). */
  updateIndex?: boolean;
  /** Compute the edits without writing (for --check style runs). */
  dryRun?: boolean;
  /** Delete stale entries (operations the contract no longer has) instead of only reporting them. */
  prune?: boolean;
}

/** A handler entry for an operation the contract does not have. */
export interface StaleHandler {
  file: string;
  id: string;
  line: number;
  col: number;
  /** First and last line of the entry (its leading comments included). */
  lines: [number, number];
  /** The whole family is gone from the contract (the file and its line in index.ts go too). */
  familyGone: boolean;
  /** Deleted by --prune. */
  pruned: boolean;
}

export interface ScaffoldReport {
  created: { file: string; added: string[] }[];
  updated: { file: string; added: string[] }[];
  /** Files that could not be edited safely, with the reason; left untouched. */
  errors: { file: string; message: string }[];
  stale: StaleHandler[];
  /** Files whose notImplemented import was removed because no stub uses it any more. */
  importRemoved: string[];
  /** Handler files of families the contract no longer has, deleted by --prune (and unregistered from index.ts). */
  removedFamilies: { file: string; ids: string[]; indexEdited: boolean }[];
}

/** `oauth_grants` -> `oauthGrantsHandlers` (the export name of handlers/<family>.ts). */
export function handlersExportName(family: string): string {
  const camel = family.replace(/[_-]([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
  return `${camel}Handlers`;
}

/** Inserts `entries` (full lines without indentation) into an object literal; returns the new text. */
function insertIntoObject(text: string, obj: ObjectLiteralExpression, sf: SourceFile, entries: string[]): string {
  const props = obj.properties;
  const closeBrace = obj.end - 1; // position of `}`
  let indent = '  ';
  let closingIndent = '';
  const lineStart = (pos: number) => text.lastIndexOf('\n', pos - 1) + 1;
  if (props.length) {
    const first = props[0].getStart(sf);
    indent = text.slice(lineStart(first), first).replace(/\S.*$/, '');
  } else {
    const objStart = obj.getStart(sf);
    indent = text.slice(lineStart(objStart), objStart).match(/^\s*/)![0] + '  ';
  }
  const closeLine = text.slice(lineStart(closeBrace), closeBrace);
  const braceOnOwnLine = /^\s*$/.test(closeLine);
  closingIndent = braceOnOwnLine ? closeLine : indent.slice(2);
  let head = text.slice(0, closeBrace);
  const tail = text.slice(closeBrace);
  if (props.length && !props.hasTrailingComma) {
    const lastEnd = props[props.length - 1].end;
    head = text.slice(0, lastEnd) + ',' + text.slice(lastEnd, closeBrace);
  }
  const block = entries.map((e) => `${indent}${e}\n`).join('');
  if (braceOnOwnLine) {
    // `head` ends with the brace line's indentation: insert before it.
    const cut = head.length - closeLine.length;
    return head.slice(0, cut) + block + head.slice(cut) + tail;
  }
  return head.replace(/\s*$/, '') + '\n' + block + closingIndent + tail;
}

/** A handlers-object key that names an operation (`tasks.get`), as opposed to a helper. */
const OPERATION_KEY = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;

/** Deletes the properties named `keys` (each with its leading comments and its comma). */
function removeFromObject(text: string, obj: ObjectLiteralExpression, keys: Set<string>): string {
  let next = text;
  const props = [...obj.properties];
  for (let i = props.length - 1; i >= 0; i--) {
    const prop = props[i];
    const key = propertyKey(prop);
    if (key === null || !keys.has(key)) continue;
    let end = prop.end;
    const after = /^\s*,/.exec(next.slice(end));
    if (after) end += after[0].length;
    next = next.slice(0, prop.getFullStart()) + next.slice(end);
  }
  return next;
}

/** Stale entries of one handlers object: operation keys that `known` does not have. */
function staleIn(file: string, sf: SourceFile, obj: ObjectLiteralExpression, known: Set<string>, familyGone: boolean): StaleHandler[] {
  const out: StaleHandler[] = [];
  for (const prop of obj.properties) {
    const key = propertyKey(prop);
    if (key === null || !OPERATION_KEY.test(key) || known.has(key)) continue;
    const start = prop.getStart(sf);
    const { line, character } = sf.getLineAndCharacterOfPosition(start);
    const firstLine = lineOf(sf, prop.getFullStart() + (/^\s*/.exec(sf.text.slice(prop.getFullStart()))?.[0].length ?? 0));
    out.push({ file, id: key, line: line + 1, col: character + 1, lines: [Math.min(firstLine, line + 1), lineOf(sf, prop.end)], familyGone, pruned: false });
  }
  return out;
}

function ensureImport(text: string, sf: SourceFile, name: string, specifier: string): string {
  for (const stmt of sf.statements) {
    if (!ts.isImportDeclaration(stmt) || !ts.isStringLiteral(stmt.moduleSpecifier)) continue;
    const named = stmt.importClause?.namedBindings;
    if (named && ts.isNamedImports(named) && named.elements.some((e) => e.name.text === name)) return text;
  }
  const imports = sf.statements.filter(ts.isImportDeclaration);
  const line = `import { ${name} } from '${specifier}';\n`;
  if (imports.length) {
    const end = imports[imports.length - 1].end;
    const nl = text.indexOf('\n', end);
    const at = nl < 0 ? text.length : nl + 1;
    return text.slice(0, at) + line + text.slice(at);
  }
  // After the leading comment block, if any.
  const leading = /^(\s*\/\/.*\n)*/.exec(text)![0];
  return leading + line + text.slice(leading.length);
}

function verify(
  file: string,
  before: { texts: string[]; name: string } | null,
  after: string,
  name: string,
  mustHave: string[],
  removed: { keys: Set<string>; texts: Set<string> } = { keys: new Set(), texts: new Set() },
): string | null {
  const sf = parse(file, after);
  const errs = parseErrors(sf);
  if (errs.length) return `the edit would not parse (${errs[0]})`;
  const obj = findObject(sf, name);
  if (!obj) return `no handlers object ${name} after the edit`;
  const texts = propertyTexts(obj, sf);
  if (before) for (const t of before.texts) if (!texts.includes(t) && !removed.texts.has(t)) return 'the edit would change an existing entry';
  const keys = new Set(obj.properties.map(propertyKey));
  for (const id of mustHave) if (!keys.has(id)) return `the edit did not add ${id}`;
  for (const id of removed.keys) if (keys.has(id)) return `the edit did not remove ${id}`;
  return null;
}

const entry = (id: string) => `'${id}': notImplemented('${id}'),`;

export function scaffoldHandlers(options: ScaffoldOptions): ScaffoldReport {
  const report: ScaffoldReport = { created: [], updated: [], errors: [], stale: [], importRemoved: [], removedFamilies: [] };
  const known = new Set(options.contractOps.map((op) => op.id));
  const spec = options.notImplementedImport ?? '../runtime/pipeline/not-implemented.ts';
  const generated = options.generatedImport ?? '../generated';
  const byFamily = new Map<string, string[]>();
  for (const op of options.contractOps) byFamily.set(op.family, [...(byFamily.get(op.family) ?? []), op.id]);
  const newFamilies: string[] = [];
  if (!options.dryRun) mkdirSync(options.handlersDir, { recursive: true });

  for (const [family, ids] of [...byFamily].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const file = path.join(options.handlersDir, `${family}.ts`);
    const name = handlersExportName(family);
    if (!existsSync(file)) {
      // Ends with `satisfies <Family>Handlers`: a body of the wrong type is an error in this file.
      const typeName = handlersInterfaceName(family);
      const text =
        `// ${family}.*: not implemented yet; every operation answers 501 not_implemented.\n` +
        `import type { ${typeName} } from '${generated}/handlers/${family}.ts';\n` +
        `import { notImplemented } from '${spec}';\n\n` +
        `export const ${name} = {\n${ids.map((id) => `  ${entry(id)}\n`).join('')}} satisfies ${typeName};\n`;
      const problem = verify(file, null, text, name, ids);
      if (problem) report.errors.push({ file, message: problem });
      else {
        if (!options.dryRun) writeFileSync(file, text);
        report.created.push({ file, added: ids });
        newFamilies.push(family);
      }
      continue;
    }
    const text = readFileSync(file, 'utf8');
    const sf = parse(file, text);
    const obj = findObject(sf, name);
    if (!obj) {
      report.errors.push({ file, message: `no exported handlers object (expected export const ${name} = { ... })` });
      continue;
    }
    const present = new Set(obj.properties.map(propertyKey));
    const missing = ids.filter((id) => !present.has(id));
    const stale = staleIn(file, sf, obj, known, false);
    const prune = options.prune ? stale : [];
    let next = text;
    if (prune.length) next = removeFromObject(next, obj, new Set(prune.map((s) => s.id)));
    if (missing.length) {
      const sfNext = parse(file, next);
      next = insertIntoObject(next, findObject(sfNext, name) ?? obj, sfNext, missing.map(entry));
      next = ensureImport(next, parse(file, next), 'notImplemented', spec);
    }
    next = dropUnusedImport(next, parse(file, next), 'notImplemented');
    if (next === text) {
      report.stale.push(...stale);
      continue;
    }
    const pruned = new Set(prune.map((s) => s.id));
    const removed = { keys: pruned, texts: new Set(obj.properties.filter((p) => pruned.has(propertyKey(p) ?? '')).map((p) => p.getText(sf))) };
    const problem = verify(file, { texts: propertyTexts(obj, sf), name }, next, name, missing, removed);
    if (problem) {
      report.errors.push({ file, message: `${problem}; ${missing.length ? `add ${missing.map(entry).join(' ')} by hand` : 'edit it by hand'}` });
      report.stale.push(...stale);
      continue;
    }
    if (!options.dryRun) writeFileSync(file, next);
    for (const s of stale) report.stale.push({ ...s, pruned: prune.includes(s) });
    if (missing.length) report.updated.push({ file, added: missing });
    if (importsName(text, 'notImplemented') && !importsName(next, 'notImplemented')) report.importRemoved.push(file);
  }

  // Files of families the contract no longer has: every operation entry in them is stale.
  const families = new Set(byFamily.keys());
  if (existsSync(options.handlersDir))
    for (const fileName of readdirSync(options.handlersDir).sort()) {
      const family = fileName.replace(/\.ts$/, '');
      if (!fileName.endsWith('.ts') || fileName === 'index.ts' || families.has(family)) continue;
      const file = path.join(options.handlersDir, fileName);
      const text = readFileSync(file, 'utf8');
      const name = handlersExportName(family);
      if (!text.includes(`${name} =`)) continue;
      const sf = parse(file, text);
      const obj = findObject(sf, name);
      if (!obj) continue;
      const stale = staleIn(file, sf, obj, known, true);
      const pruned = options.prune ? pruneFamily(options.handlersDir, file, name, options.dryRun) : null;
      if (pruned && !pruned.ok) report.errors.push({ file, message: `not deleted: ${pruned.reason}; delete it and its import and spread in index.ts by hand` });
      if (pruned?.ok) report.removedFamilies.push({ file, ids: stale.map((s) => s.id), indexEdited: pruned.indexEdited });
      else report.stale.push(...stale);
    }

  const index = path.join(options.handlersDir, 'index.ts');
  if (newFamilies.length && options.updateIndex !== false && !existsSync(index) && !options.dryRun) {
    // A handlers directory of its own (svc.config.json "handlers"): its index, which generated/wiring.ts imports.
    writeFileSync(
      index,
      `// Every operation's handler, one family per file (generated/wiring.ts imports \`handlers\`, and an\n` +
        `// optional \`registryExtras\`). \`svc generate\` registers a new family's file here.\n` +
        `import type { AllHandlers } from '${generated}/handlers/index.ts';\n\n` +
        `export const handlers: AllHandlers = {\n};\n`,
    );
  }
  if (newFamilies.length && options.updateIndex !== false && existsSync(index)) {
    let text = readFileSync(index, 'utf8');
    const sf = parse(index, text);
    const obj = findObject(sf, 'handlers');
    if (!obj) report.errors.push({ file: index, message: `no handlers object; register ${newFamilies.map(handlersExportName).join(', ')} by hand` });
    else {
      const before = propertyTexts(obj, sf);
      text = insertIntoObject(text, obj, sf, newFamilies.map((f) => `...${handlersExportName(f)},`));
      for (const f of newFamilies) text = ensureImport(text, parse(index, text), handlersExportName(f), `./${f}.ts`);
      const after = parse(index, text);
      const errs = parseErrors(after);
      const objAfter = findObject(after, 'handlers');
      const texts = objAfter ? propertyTexts(objAfter, after) : [];
      if (errs.length || !objAfter || before.some((t) => !texts.includes(t))) report.errors.push({ file: index, message: 'could not register the new families safely; add them by hand' });
      else if (!options.dryRun) writeFileSync(index, text);
    }
  }
  return report;
}

/** Whether a file's text imports `name`. */
function importsName(text: string, name: string): boolean {
  return parse('x.ts', text).statements.some(
    (s) => ts.isImportDeclaration(s) && !!s.importClause?.namedBindings && ts.isNamedImports(s.importClause.namedBindings) && s.importClause.namedBindings.elements.some((e) => e.name.text === name),
  );
}

/** Scaffolds handlers for the contract in contractDir. Throws ContractError when it does not compile. */
export function scaffoldFromContract(contractDir = 'contract', handlersDir = 'handlers', dryRun = false, prune = false): ScaffoldReport {
  const model = buildModel(loadContract(contractDir));
  return scaffoldHandlers({ contractOps: model.operations.map((o) => o.def), handlersDir, dryRun, prune });
}

function shown(file: string): string {
  return displayPath(file);
}

/** What to do about a stale entry, in one line (`svc generate` warns with it, `svc lint` fails with it). */
export function staleAdvice(s: StaleHandler, renamedTo: string[] = []): string {
  const where = `${shown(s.file)}:${s.line}:${s.col}`;
  if (s.familyGone)
    return `${where} handles ${s.id}, but the contract has no family ${s.id.split('.')[0]} any more. Delete ${shown(s.file)} and its import and spread in ${shown(path.join(path.dirname(s.file), 'index.ts'))}, or run \`npx svc generate --prune\` to delete them.`;
  const lines = s.lines[0] === s.lines[1] ? `line ${s.lines[0]}` : `lines ${s.lines[0]}-${s.lines[1]}`;
  const moved = renamedTo.length ? ` If it was renamed to ${renamedTo.join(' or ')}, move its body into that entry first.` : '';
  return `${where} handles ${s.id}, which the contract no longer has (removed or renamed).${moved} Delete the entry (${lines}), or run \`npx svc generate --prune\` to delete it.`;
}

export function printScaffoldReport(report: ScaffoldReport, io: CliIo = consoleIo): void {
  for (const c of report.created) io.out(`scaffold ${c.file}: created with ${c.added.length} not-implemented handler(s)`);
  for (const u of report.updated) io.out(`scaffold ${u.file}: added ${u.added.join(', ')} (answer 501 until written)`);
  for (const f of report.importRemoved) io.out(`scaffold ${f}: removed the notImplemented import (no stub left)`);
  for (const r of report.removedFamilies) {
    const index = r.indexEdited ? ` and its import and spread in ${shown(path.join(path.dirname(r.file), 'index.ts'))}` : '';
    io.out(`scaffold ${shown(r.file)}: deleted${index}: the contract has no family ${r.ids[0]?.split('.')[0] ?? path.basename(r.file, '.ts')} any more (${r.ids.join(', ')})`);
  }
  for (const s of report.stale) {
    if (s.pruned) {
      io.out(`scaffold ${shown(s.file)}: deleted the stale entry ${s.id} (lines ${s.lines[0]}-${s.lines[1]}); imports and helpers only it used are left for you to remove`);
      continue;
    }
    const renamedTo = report.updated.filter((u) => u.file === s.file).flatMap((u) => u.added);
    io.err(`warning: ${staleAdvice(s, renamedTo)}`);
  }
  for (const e of report.errors) io.err(`scaffold ${e.file}: ${e.message}`);
}

/**
 * Operations still unimplemented: those whose handler carries the notImplemented marker, and those
 * with no handler at all. Imports the handlers index (its `handlers` export).
 */
export async function listUnimplemented(
  options: { handlersIndex?: string; contractDir?: string } = {},
): Promise<{ placeholders: string[]; missing: string[] }> {
  const index = path.resolve(options.handlersIndex ?? 'handlers/index.ts');
  const mod = (await importSource(pathToFileURL(index).href)) as { handlers?: Record<string, unknown> };
  const { unimplementedOperations } = (await import('../../runtime/pipeline/not-implemented.ts')) as typeof import('../../runtime/pipeline/not-implemented.ts');
  const handlers = mod.handlers ?? {};
  const placeholders = unimplementedOperations(handlers);
  let missing: string[] = [];
  if (options.contractDir !== undefined || existsSync('contract')) {
    const model = buildModel(loadContract(options.contractDir ?? 'contract'));
    missing = model.operations.map((o) => o.def.id).filter((id) => !(id in handlers)).sort();
  }
  return { placeholders, missing };
}

/**
 * The handler part of `svc lint [--require-all]`: lists every unimplemented operation; with
 * --require-all exits 1 while any is. Returns the exit code.
 */
export async function lintHandlers(argv: string[], io: CliIo = consoleIo): Promise<number> {
  const { values, bools } = parseArgs(argv, ['contract', 'out', 'handlers']);
  const requireAll = bools.has('require-all');
  let result;
  try {
    result = await listUnimplemented({ handlersIndex: path.join(values.handlers ?? 'handlers', 'index.ts'), contractDir: values.contract ?? 'contract' });
  } catch (err) {
    if (err instanceof ContractError) {
      for (const d of sortDiagnostics(err.diagnostics)) io.err(formatDiagnostic(d));
      return 1;
    }
    io.err(`svc lint: cannot load the handlers: ${(err as Error).message}`);
    return 1;
  }
  const { placeholders, missing } = result;
  // Entries for operations the contract no longer has: tsc objects to them too, but only as an excess
  // property of the family's handlers type; this names the operation and what to delete.
  const stale = scaffoldFromContract(values.contract ?? 'contract', values.handlers ?? 'handlers', true).stale;
  for (const id of missing) io.err(`handler missing: ${id} has no entry in its family's handlers file. Run \`npx svc generate\` to scaffold it.`);
  for (const s of stale) io.err(`handler stale: ${staleAdvice(s)}`);
  for (const id of placeholders) (requireAll ? io.err : io.out)(`not implemented: ${id} (answers 501 not_implemented)`);
  const total = placeholders.length + missing.length + stale.length;
  if (!total) {
    io.out('svc lint: every operation has a handler.');
    return 0;
  }
  const summary = `svc lint: ${placeholders.length} operation(s) not implemented${missing.length ? `, ${missing.length} without a handler entry` : ''}${stale.length ? `, ${stale.length} stale handler entr${stale.length === 1 ? 'y' : 'ies'}` : ''}.`;
  if (requireAll || missing.length || stale.length) {
    io.err(`${summary} ${requireAll ? '--require-all fails while any is: write their bodies in handlers/<family>.ts.' : ''}`.trim());
    return 1;
  }
  io.out(`${summary} (svc lint --require-all fails on these.)`);
  return 0;
}
