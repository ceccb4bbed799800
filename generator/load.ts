// Step 1: read contract/ (svc.yaml, schemas/*.yaml, families/*.yaml) keeping source positions.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
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

export function parseYamlFile(file: string, text: string, diagnostics: Diagnostic[]): SourceFile {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: true, uniqueKeys: true });
  const shown = displayPath(file);
  for (const err of doc.errors) {
    const pos = err.linePos?.[0] ?? { line: 1, col: 1 };
    const what = err.message.split('\n')[0].replace(/\s+at line \d+, column \d+:?$/, '');
    diagnostics.push({
      file: shown,
      line: pos.line,
      col: pos.col,
      rule: 'yaml-syntax',
      message: `${what}. Fix the YAML syntax at this position.`,
    });
  }
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
