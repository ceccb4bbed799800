// Step 1: read contract/ (svc.yaml, schemas/*.yaml, families/*.yaml) keeping source positions.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CST, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, Parser, type Document, type Node } from 'yaml';
import type { ParseAnswer } from './parallel/protocol.ts';
import { onForget, session } from './session.ts';
import { pathKey, type Diagnostic, type JsonPath, type NodePositions, type SourceFile } from './source.ts';
import { readText } from './stamped-read.ts';
import { fastYamlData } from './yaml-data.ts';

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

function parse(text: string): { doc: Document; lines: LineCounter } {
  const lines = new LineCounter();
  return { doc: parseDocument(text, { lineCounter: lines, prettyErrors: true, uniqueKeys: true }), lines };
}

const toData = (doc: Document) => doc.toJS({ maxAliasCount: 1000 });

/**
 * A parsed file. Positions are read only to report a diagnostic: they are collected on first use (not
 * for every node of every file of every run: a fifth of loading a contract that has no errors), from
 * the parse that made the data when it is kept, else from a new parse of the text.
 */
function sourceOf(shown: string, data: unknown, parsed: () => { doc: Document; lines: LineCounter }): SourceFile {
  let positions: Map<string, NodePositions> | undefined;
  return {
    file: shown,
    data,
    get positions() {
      if (!positions) {
        const { doc, lines } = parsed();
        positions = new Map();
        collectPositions(doc.contents, [], null, lines, positions);
      }
      return positions;
    },
  };
}

export function parseYamlFile(file: string, text: string, diagnostics: Diagnostic[]): SourceFile {
  // The data from js-yaml where it reads the file as `yaml` would (yaml-data.ts); positions, and any
  // file it leaves to `yaml`, from the `yaml` parse.
  const fast = fastYamlData(text);
  if (fast) return sourceOf(displayPath(file), fast.data, () => parse(text));
  const parsed = parse(text);
  const shown = displayPath(file);
  if (parsed.doc.errors.length) diagnostics.push(syntaxDiagnostic(shown, text, parsed.doc.errors, parsed.lines));
  return sourceOf(shown, parsed.doc.errors.length ? null : toData(parsed.doc), () => parsed);
}

/** A file's data alone (the worker's share of a large contract): null and ok false when it has YAML errors. */
export function parseYamlData(_file: string, text: string): ParseAnswer {
  const fast = fastYamlData(text);
  if (fast) return { data: fast.data, ok: true };
  const { doc } = parse(text);
  return doc.errors.length ? { data: null, ok: false } : { data: toData(doc), ok: true };
}

interface ContractFiles {
  svc: string | null;
  schemas: string[];
  families: string[];
}

function contractFiles(dir: string): ContractFiles {
  const svcPath = path.join(dir, 'svc.yaml');
  return { svc: existsSync(svcPath) ? svcPath : null, schemas: yamlFilesIn(path.join(dir, 'schemas')), families: yamlFilesIn(path.join(dir, 'families')) };
}

function assemble(dir: string, files: ContractFiles, read: (file: string) => SourceFile, diagnostics: Diagnostic[]): LoadedContract {
  if (!files.svc)
    diagnostics.push({
      file: displayPath(path.join(dir, 'svc.yaml')),
      line: 1,
      col: 1,
      rule: 'missing-file',
      message: `The contract has no svc.yaml. Create ${displayPath(path.join(dir, 'svc.yaml'))} or point --contract at the contract directory.`,
    });
  return { dir, svc: files.svc ? read(files.svc) : null, schemaFiles: files.schemas.map(read), familyFiles: files.families.map(read), diagnostics };
}

/**
 * Files parsed by a watcher (session.ts), by path: a file whose text has not changed is not parsed
 * again (svc generate --watch re-reads every file on each change and parses the edited ones). Its syntax
 * diagnostic, if it had one, is reported again. Entries of files that are gone are dropped.
 */
const parsedFiles = new Map<string, { text: string; source: SourceFile; diagnostic: Diagnostic | null }>();

function remembered(file: string, text: string, diagnostics: Diagnostic[], parseHere: () => SourceFile): SourceFile {
  // One compile (every command but a watcher) would only hold the contract in memory for nothing.
  if (!session.longLived) return parseHere();
  const key = path.resolve(file);
  const known = parsedFiles.get(key);
  if (known && known.text === text && known.source.file === displayPath(file)) {
    if (known.diagnostic) diagnostics.push(known.diagnostic);
    return known.source;
  }
  const before = diagnostics.length;
  const source = parseHere();
  parsedFiles.set(key, { text, source, diagnostic: diagnostics.length > before ? diagnostics[diagnostics.length - 1]! : null });
  return source;
}

/** The contract directory parsedFiles describes: loading another forgets it (only a watcher loads one again and again). */
let rememberedDir = '';
onForget(() => {
  parsedFiles.clear();
  rememberedDir = '';
});

/** Before a load of `dir`: drop what was remembered of another directory, and of files of `dir` that are gone. */
function forget(files: ContractFiles, dir: string): void {
  if (path.resolve(dir) !== rememberedDir) {
    parsedFiles.clear();
    rememberedDir = path.resolve(dir);
    return;
  }
  const keep = new Set([files.svc, ...files.schemas, ...files.families].filter((f): f is string => !!f).map((f) => path.resolve(f)));
  for (const key of parsedFiles.keys()) if (!keep.has(key)) parsedFiles.delete(key);
}

export function loadContract(dir: string): LoadedContract {
  const files = contractFiles(dir);
  forget(files, dir);
  return loadHere(dir, files, (file) => readFileSync(file, 'utf8'));
}

/** Every file parsed on this thread, its text from `textOf`. */
function loadHere(dir: string, files: ContractFiles, textOf: (file: string) => string): LoadedContract {
  const diagnostics: Diagnostic[] = [];
  const read = (file: string) => {
    const text = textOf(file);
    return remembered(file, text, diagnostics, () => parseYamlFile(file, text, diagnostics));
  };
  return assemble(dir, files, read, diagnostics);
}

/**
 * loadContract, with about half of a large contract's family files parsed on the compiler's worker
 * thread (parallel/index.ts) while this thread parses the rest. A file the worker found broken is
 * parsed again here for its diagnostic; every file's positions come from a new parse on first use.
 */
export async function loadContractAsync(dir: string): Promise<LoadedContract> {
  const files = contractFiles(dir);
  const texts = new Map([files.svc, ...files.schemas, ...files.families].filter((f): f is string => !!f).map((f) => [f, readText(f)]));
  let bytes = 0;
  for (const text of texts.values()) bytes += text.length;
  const { parallelMinBytes, parseOnWorker } = await import('./parallel/index.ts');
  forget(files, dir);
  const fresh = files.families.filter((f) => parsedFiles.get(path.resolve(f))?.text !== texts.get(f));
  if (bytes < parallelMinBytes() || fresh.length < 2) return loadHere(dir, files, (file) => texts.get(file)!);

  // The worker takes the first fresh family files up to half of their bytes; this thread the rest.
  let half = 0;
  for (const f of fresh) half += texts.get(f)!.length;
  half /= 2;
  const toWorker: string[] = [];
  let given = 0;
  for (const f of fresh) {
    if (given >= half) break;
    toWorker.push(f);
    given += texts.get(f)!.length;
  }
  const answers = parseOnWorker(toWorker.map((file) => ({ file, text: texts.get(file)! })));
  // Each file's source and its diagnostics, put in file order by assemble, as loadContract reports them.
  const done = new Map<string, { source: SourceFile; diagnostics: Diagnostic[] }>();
  const settle = (f: string, answer: () => ParseAnswer) => {
    const text = texts.get(f)!;
    const own: Diagnostic[] = [];
    // Kept without its parse tree (a large contract's trees would double the memory): positions re-parse.
    const source = remembered(f, text, own, () => {
      const { data, ok } = answer();
      return ok ? sourceOf(displayPath(f), data, () => parse(text)) : parseYamlFile(f, text, own);
    });
    done.set(f, { source, diagnostics: own });
  };
  const onWorker = new Set(toWorker);
  for (const f of [files.svc, ...files.schemas, ...files.families]) if (f && !onWorker.has(f)) settle(f, () => parseYamlData(f, texts.get(f)!));
  const parsed = await answers;
  toWorker.forEach((f, i) => settle(f, () => parsed[i]!));
  const diagnostics: Diagnostic[] = [];
  return assemble(dir, files, (f) => {
    const { source, diagnostics: own } = done.get(f)!;
    diagnostics.push(...own);
    return source;
  }, diagnostics);
}
