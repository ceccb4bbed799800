// Step 1: read contract/ (svc.yaml, schemas/*.yaml, families/*.yaml) keeping source positions.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CST, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, Parser, type Node } from 'yaml';
import { pathKey, type Diagnostic, type JsonPath, type NodePositions, type SourceFile } from './source.ts';

export interface LoadedContract {
  /** The contract directory as given. */
  dir: string;
  svc: SourceFile | null;
  schemaFiles: SourceFile[];
  familyFiles: SourceFile[];
  /** YAML syntax errors and missing files. */
  diagnostics: Diagnostic[];
}

/** A path as shown in diagnostics: relative to the working directory when inside it. */
export function displayPath(file: string): string {
  const rel = path.relative(process.cwd(), path.resolve(file));
  const shown = rel.startsWith('..') || path.isAbsolute(rel) ? path.resolve(file) : rel;
  return shown.split(path.sep).join('/');
}

function yamlFilesIn(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.yaml') || name.endsWith('.yml'))
    .sort()
    .map((name) => path.join(dir, name));
}

function collectPositions(
  node: unknown,
  at: JsonPath,
  key: NodePositions['key'],
  lines: LineCounter,
  out: Map<string, NodePositions>,
): void {
  if (!node || typeof node !== 'object' || !('range' in node)) return;
  const range = (node as Node).range;
  if (!range) return;
  out.set(pathKey(at), { value: lines.linePos(range[0]), key });
  if (isMap(node)) {
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      const k = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      const keyRange = (pair.key as Node | null)?.range;
      const keyPos = keyRange ? lines.linePos(keyRange[0]) : null;
      if (pair.value && (pair.value as Node).range) {
        collectPositions(pair.value, [...at, k], keyPos, lines, out);
      } else if (keyPos) {
        out.set(pathKey([...at, k]), { value: keyPos, key: keyPos });
      }
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, i) => collectPositions(item, [...at, i], null, lines, out));
  }
}

/** The nearest flow collection ([...] or {...}) opened before `offset` and never closed, if any. */
function unclosedFlow(text: string, offset: number): { offset: number; open: string } | null {
  let found: { offset: number; open: string } | null = null;
  for (const token of new Parser().parse(text)) {
    if (token.type !== 'document') continue;
    CST.visit(token, (item) => {
      for (const node of [item.key, item.value]) {
        if (!node || node.type !== 'flow-collection' || node.offset >= offset) continue;
        const close = node.start.source === '[' ? ']' : '}';
        if (!node.end.some((t) => t.source === close) && (!found || node.offset > found.offset)) found = { offset: node.offset, open: node.start.source };
      }
    });
  }
  return found;
}

/**
 * One YAML slip makes the parser report a cascade of errors after it. The first is the one to fix:
 * it is reported (at the bracket that was never closed, when that is the cause) with the number of
 * errors that follow it; the rest are not shown, since they usually disappear with it.
 */
function syntaxDiagnostic(shown: string, text: string, errors: readonly { message: string; pos: [number, number]; linePos?: [{ line: number; col: number }, ...unknown[]] }[], lines: LineCounter): Diagnostic {
  const err = errors[0];
  let pos = err.linePos?.[0] ?? { line: 1, col: 1 };
  let message = `${err.message.split('\n')[0].replace(/\s+at line \d+, column \d+:?$/, '')}. Fix the YAML syntax at this position.`;
  const flow = /^Flow (sequence|map)\b/.test(err.message) ? unclosedFlow(text, err.pos[0]) : null;
  if (flow) {
    const failedAt = pos.line;
    pos = lines.linePos(flow.offset);
    const [what, close] = flow.open === '[' ? ['flow sequence', ']'] : ['flow map', '}'];
    message = `This ${what} (${flow.open}) is never closed, so the YAML parser reads on and fails at line ${failedAt}. Close it with ${close} on line ${pos.line}.`;
  }
  const more = errors.length - 1;
  if (more) message += ` (${more} more YAML error${more === 1 ? '' : 's'} in this file follow from it and are not shown.)`;
  return { file: shown, line: pos.line, col: pos.col, rule: 'yaml-syntax', message };
}

export function parseYamlFile(file: string, text: string, diagnostics: Diagnostic[]): SourceFile {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: true, uniqueKeys: true });
  const shown = displayPath(file);
  if (doc.errors.length) diagnostics.push(syntaxDiagnostic(shown, text, doc.errors, lines));
  const data = doc.errors.length ? null : doc.toJS({ maxAliasCount: 1000 });
  // Positions are read only to report a diagnostic: collect them on first use, not for every node of
  // every file of every run (a fifth of loading a contract that has no errors).
  let positions: Map<string, NodePositions> | undefined;
  return {
    file: shown,
    data,
    get positions() {
      if (!positions) {
        positions = new Map();
        collectPositions(doc.contents, [], null, lines, positions);
      }
      return positions;
    },
  };
}

export function loadContract(dir: string): LoadedContract {
  const diagnostics: Diagnostic[] = [];
  const read = (file: string) => parseYamlFile(file, readFileSync(file, 'utf8'), diagnostics);
  const svcPath = path.join(dir, 'svc.yaml');
  let svc: SourceFile | null = null;
  if (existsSync(svcPath)) svc = read(svcPath);
  else
    diagnostics.push({
      file: displayPath(svcPath),
      line: 1,
      col: 1,
      rule: 'missing-file',
      message: `The contract has no svc.yaml. Create ${displayPath(svcPath)} or point --contract at the contract directory.`,
    });
  return {
    dir,
    svc,
    schemaFiles: yamlFilesIn(path.join(dir, 'schemas')).map(read),
    familyFiles: yamlFilesIn(path.join(dir, 'families')).map(read),
    diagnostics,
  };
}
