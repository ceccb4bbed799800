// Source positions and diagnostics: every contract value can be traced back to file:line:col.

export type JsonPath = readonly (string | number)[];

export interface Position {
  line: number;
  col: number;
}

/** Where a node of one YAML file sits: the value's start and, for map entries, the key's start. */
export interface NodePositions {
  value: Position;
  key: Position | null;
}

export interface SourceFile {
  /** Path relative to the working directory, with forward slashes (e.g. contract/families/tasks.yaml). */
  file: string;
  /** The parsed data (plain JSON-compatible values). */
  data: unknown;
  /** JSON path (joined by pathKey) -> positions. */
  positions: Map<string, NodePositions>;
}

export interface Diagnostic {
  file: string;
  line: number;
  col: number;
  rule: string;
  message: string;
}

export function pathKey(path: JsonPath): string {
  return path.join('\u0000');
}

/**
 * The position of a path in a file. `where: 'key'` prefers the key of a map entry. A path that is
 * absent (a missing property) falls back to its nearest present ancestor.
 */
export function positionOf(source: SourceFile, path: JsonPath, where: 'key' | 'value' = 'value'): Position {
  for (let n = path.length; n >= 0; n--) {
    const found = source.positions.get(pathKey(path.slice(0, n)));
    if (!found) continue;
    if (n === path.length && where === 'key' && found.key) return found.key;
    return found.value;
  }
  return { line: 1, col: 1 };
}

export function diagnostic(
  source: SourceFile,
  path: JsonPath,
  rule: string,
  message: string,
  where: 'key' | 'value' = 'value',
): Diagnostic {
  const { line, col } = positionOf(source, path, where);
  return { file: source.file, line, col, rule, message };
}

export function formatDiagnostic(d: Diagnostic): string {
  return `${d.file}:${d.line}:${d.col} error [${d.rule}] ${d.message}`;
}

export function sortDiagnostics(list: Diagnostic[]): Diagnostic[] {
  return [...list].sort(
    (a, b) =>
      (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) ||
      a.line - b.line ||
      a.col - b.col ||
      (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0),
  );
}

/** Thrown when the contract cannot be compiled; carries every diagnostic of the run. */
export class ContractError extends Error {
  constructor(readonly diagnostics: Diagnostic[]) {
    super(sortDiagnostics(diagnostics).map(formatDiagnostic).join('\n'));
    this.name = 'ContractError';
  }
}
