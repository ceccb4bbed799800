// svc generate: compile the contract, then write generated/ or (with --check) compare it.
import { closeSync, type Dirent, existsSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, realpathSync, rmdirSync, rmSync, statSync, writeFileSync, writevSync } from 'node:fs';
import path from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { emitAllPieces } from './emit/index.ts';
import { asTexts, EncodedFile, sameGenerated, textOf, type GeneratedText, type Pieces } from './emit/pieces.ts';
import { GENERATED_NOTE, LEGACY_GENERATED_NOTE } from './emit/format.ts';
import { displayPath, loadContractAsync } from './load.ts';
import { buildModel, type Model } from './model.ts';
import { inputsKey, writeEntry } from './cache.ts';
import { onForget, session } from './session.ts';
import { withReads } from './stamped-read.ts';

/** Contract directory -> every generated file (relative path -> content). Throws ContractError. */
export async function compileContract(contractDir: string): Promise<Map<string, string>> {
  return (await compileWithModel(contractDir)).files;
}

/** compileContract, with the model it built (svc generate scaffolds handlers from its operations). */
export async function compileWithModel(contractDir: string): Promise<{ files: Map<string, string>; model: Model }> {
  const { files, model } = await compileToPieces(contractDir);
  return { files: asTexts(files), model };
}

/** compileWithModel, with large files as pieces (emit/pieces.ts) for writeGenerated and the cache. */
export async function compileToPieces(contractDir: string): Promise<{ files: Map<string, GeneratedText>; model: Model }> {
  // The loaded contract is not kept while the emitters run (at 8,200 operations it is 200 MB of a
  // 1.7 GB peak): the rare failure below loads it again to say where it came from.
  const model = buildModel(await loadContractAsync(contractDir));
  try {
    return { files: await emitAllPieces(model), model };
  } catch (err) {
    // Issue 30: an ajv failure while emitting the validators is located in the contract, never raw.
    throw (await import('./locate-emit.ts')).locateEmitFailure(err, await loadContractAsync(contractDir), model) ?? err;
  }
}

/**
 * compileToPieces, recording what it produced in the content-hash cache (cache.ts) under the key of
 * the inputs it read. Large files stay pieces (openapi.json's path items): hashed and written piece by
 * piece, never flattened into one string and encoded whole. The key is taken before and after: a
 * contract edited while it compiled records nothing (its output may mix both versions).
 */
export async function compileAndRecord(contractDir: string): Promise<{ files: Map<string, GeneratedText>; model: Model }> {
  // One compile's reads by stamp (stamped-read.ts): the load reuses the bytes the key read, and the
  // second key stats the files rather than reading and hashing them again.
  return withReads(async () => {
    const before = inputsKey(contractDir);
    const result = await compileToPieces(contractDir);
    if (inputsKey(contractDir) === before) writeEntry(contractDir, before, result.files);
    return result;
  });
}

/** Files under dir, relative, with forward slashes, sorted. */
export function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (rel: string) => {
    // Entries with their types (no stat per file: a large contract generates thousands); a symbolic
    // link is followed, as statSync would.
    for (const entry of readdirSync(path.join(dir, rel), { withFileTypes: true }).sort((a, b) => byName(a.name, b.name))) {
      const relChild = rel ? `${rel}/${entry.name}` : entry.name;
      if (isDirectory(entry, path.join(dir, relChild))) walk(relChild);
      else out.push(relChild);
    }
  };
  walk('');
  return out.sort();
}

/**
 * Whether file holds exactly text. Compares bytes (memcmp) rather than decoding the file and comparing
 * strings, which for the large generated files (validators.js holds non-ASCII text) cost more than
 * encoding the text once.
 */
function holds(file: string, text: string): boolean {
  return readFileSync(file).equals(Buffer.from(text, 'utf8'));
}

function carriesMarker(file: string): boolean {
  const head = readFileSync(file, 'utf8').slice(0, 400);
  return head.includes(GENERATED_NOTE) || head.includes(LEGACY_GENERATED_NOTE);
}

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const isDirectory = (entry: Dirent, full: string) => (entry.isSymbolicLink() ? statSync(full).isDirectory() : entry.isDirectory());

function removeEmptyDirs(dir: string, root: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const child = path.join(dir, entry.name);
    if (isDirectory(entry, child)) removeEmptyDirs(child, root);
  }
  if (dir !== root && readdirSync(dir).length === 0) rmdirSync(dir);
}

export interface WriteReport {
  written: string[];
  unchanged: number;
  removed: string[];
  /** Extra files left in place because they do not carry the generated marker. */
  kept: string[];
}

/**
 * What this process last wrote (or found already there) in each generated file: the text, and the
 * file's identity then. `svc generate --watch` rewrites thousands of files of which a few changed:
 * a file whose size, modification and change times and inode are still those recorded, and whose new
 * text is the recorded one, is left alone without being read (at 8,200 operations, reading 200 MB
 * back took 0.6 s of each re-emit). A file edited by hand changes its times, so it is read and compared.
 */
const lastWritten = new Map<string, { text: GeneratedText; stamp: string }>();
/** The directory lastWritten describes: writing another forgets it (only a watcher writes one directory again and again). */
let lastOutDir = '';
onForget(() => {
  lastWritten.clear();
  lastOutDir = '';
});
const stampOf = (file: string): string | null => {
  const st = statSync(file, { throwIfNoEntry: false });
  return st ? `${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}` : null;
};

/**
 * Writes a file's text, a file of pieces from its pieces' bytes (no whole text is built). An existing
 * file is written over in place and then cut to its new length rather than truncated first: on the
 * VMs we run on, truncating an 83 MB openapi.json to refill it cost 70-100 ms of freeing and
 * reallocating cached pages, writing over them 30 ms. `previous`, the pieces this process last wrote
 * to the file (which still holds them: its stamp is unchanged), lets the write start at the first
 * piece that differs: an edit to a family's description changes openapi.json near its end (the tags)
 * and rewrites only from there.
 */
function writeText(file: string, text: GeneratedText, previous: Pieces | null, exists: boolean): void {
  let fd: number;
  let reopened = exists;
  if (!exists) fd = openSync(file, 'w');
  else
    try {
      fd = openSync(file, 'r+');
    } catch {
      fd = openSync(file, 'w');
      reopened = false;
    }
  try {
    let at: number;
    if (typeof text === 'string') at = writeAll(fd, [Buffer.from(text, 'utf8')], 0);
    else if (!session.longLived) {
      // Once only: the pieces' bytes through one reused buffer (pieces.ts chunks), not a buffer each.
      at = 0;
      for (const chunk of text.chunks()) at = writeAll(fd, [chunk], at);
    } else {
      // Only a file opened as it was can keep its unchanged prefix: skip the pieces equal to the previous text's.
      const all = text.buffers();
      let position = 0;
      let i = 0;
      if (reopened && previous) {
        const { parts } = text;
        const old = previous.parts;
        while (i < parts.length && i < old.length && (parts[i] === old[i] || parts[i]!.text === old[i]!.text)) position += all[i++]!.length;
      }
      at = writeAll(fd, all.slice(i), position);
    }
    // A file created here holds exactly what was written.
    if (reopened) ftruncateSync(fd, at);
  } finally {
    closeSync(fd);
  }
}

/** Writes buffers at `at` (writev takes at most IOV_MAX, 1024, buffers and may write fewer bytes than asked); answers the end. */
function writeAll(fd: number, buffers: Buffer[], at: number): number {
  for (let i = 0; i < buffers.length; i += 1024) {
    let batch = buffers.slice(i, i + 1024);
    let left = batch.reduce((n, b) => n + b.length, 0);
    while (left > 0) {
      let wrote = writevSync(fd, batch, at);
      left -= wrote;
      at += wrote;
      while (batch.length && wrote >= batch[0]!.length) wrote -= batch.shift()!.length;
      if (wrote) batch = [batch[0]!.subarray(wrote), ...batch.slice(1)];
    }
  }
  return at;
}

/** Whether file holds exactly text (pieces: compared piece by piece against the file's bytes). */
function holdsText(file: string, text: GeneratedText): boolean {
  if (typeof text === 'string') return holds(file, text);
  const bytes = readFileSync(file);
  let at = 0;
  for (const part of text.chunks()) {
    if (at + part.length > bytes.length || !bytes.subarray(at, at + part.length).equals(part)) return false;
    at += part.length;
  }
  return at === bytes.length;
}

export function writeGenerated(files: Map<string, GeneratedText>, outDir: string): WriteReport {
  const report: WriteReport = { written: [], unchanged: 0, removed: [], kept: [] };
  writeFiles(files, outDir, report);
  removeStale(files, outDir, report);
  return report;
}

/**
 * writeGenerated for `svc generate`: the files the compiler's worker encoded (EncodedFile: at 8,200
 * operations 6,900 of them, validators and docs) are handed back to it to write while this thread
 * writes its own (openapi.json, types.ts, ...), once every emitter has succeeded. Without a worker,
 * or if it fails, writeGenerated.
 */
export async function writeGeneratedShared(files: Map<string, GeneratedText>, outDir: string): Promise<WriteReport> {
  const parallel = await import('./parallel/index.ts');
  const encoded = [...files].filter((entry): entry is [string, EncodedFile] => entry[1] instanceof EncodedFile);
  if (!parallel.workerStarted() || encoded.length < 2) return writeGenerated(files, outDir);
  const report: WriteReport = { written: [], unchanged: 0, removed: [], kept: [] };
  const onWorker = parallel.writeOnWorker(path.resolve(outDir), encoded).catch(() => null);
  const given = new Set(encoded.map(([rel]) => rel));
  writeFiles(
    [...files].filter(([rel]) => !given.has(rel)),
    outDir,
    report,
  );
  const done = await onWorker;
  if (done) {
    report.written.push(...done.written);
    report.unchanged += done.unchanged;
  } else writeFiles(encoded, outDir, report);
  report.written.sort(byName);
  removeStale(files, outDir, report);
  return report;
}

/** Writes each file whose content differs from what outDir holds (report: written, unchanged). */
export function writeFiles(files: Iterable<[string, GeneratedText]>, outDir: string, report: Pick<WriteReport, 'written' | 'unchanged'>): void {
  if (path.resolve(outDir) !== lastOutDir) {
    lastWritten.clear();
    lastOutDir = path.resolve(outDir);
  }
  // Directories this call made or found (a new output directory's 6,900 files are in 48 of them).
  const made = new Set<string>();
  for (const [rel, text] of files) {
    const file = path.resolve(outDir, rel);
    const known = lastWritten.get(file);
    const stamp = stampOf(file);
    // A file as this process last left it holds the last text: compare with that, never read it back.
    const untouched = known && stamp && known.stamp === stamp;
    if (untouched && sameGenerated(known.text, text)) {
      report.unchanged++;
      continue;
    }
    if (stamp && !untouched && holdsText(file, text)) report.unchanged++;
    else {
      const dir = path.dirname(file);
      if (!stamp && !made.has(dir)) {
        mkdirSync(dir, { recursive: true });
        made.add(dir);
      }
      writeText(file, text, untouched && typeof known.text !== 'string' ? known.text : null, !!stamp);
      report.written.push(rel);
    }
    // Only a watcher writes the directory again: one compile's stat of each file written is for nothing.
    if (session.longLived) lastWritten.set(file, { text, stamp: stampOf(file)! });
  }
}

/**
 * Removes outDir's files that files does not hold and that carry the generated marker (report:
 * removed, kept): what the contract no longer produces (a removed family's validators, handler
 * types and reference page), on every `svc generate`, with or without --prune. Only a file that is
 * really inside outDir: one reached through a symbolic link to elsewhere is never deleted.
 */
function removeStale(files: Map<string, GeneratedText>, outDir: string, report: WriteReport): void {
  const root = existsSync(outDir) ? realpathSync(outDir) + path.sep : '';
  for (const rel of listFiles(outDir)) {
    if (files.has(rel)) continue;
    const file = path.join(outDir, rel);
    if (!realpathSync(file).startsWith(root)) continue;
    if (carriesMarker(file)) {
      rmSync(file);
      lastWritten.delete(path.resolve(file));
      report.removed.push(rel);
    } else report.kept.push(rel);
  }
  if (existsSync(outDir)) removeEmptyDirs(outDir, outDir);
}

export interface CheckReport {
  ok: boolean;
  stale: string[];
  missing: string[];
  extra: string[];
  /** Unified diffs of stale and missing files, then the list of extra ones. */
  text: string;
}

const MAX_DIFF_LINES = 150;

function clip(patch: string): string {
  const lines = patch.split('\n');
  if (lines.length <= MAX_DIFF_LINES) return patch;
  return [...lines.slice(0, MAX_DIFF_LINES), `... ${lines.length - MAX_DIFF_LINES} more diff lines`].join('\n');
}

export function checkGenerated(files: Map<string, GeneratedText>, outDir: string): CheckReport {
  const shown = displayPath(outDir);
  const report: CheckReport = { ok: true, stale: [], missing: [], extra: [], text: '' };
  const parts: string[] = [];
  for (const [rel, text] of files) {
    const file = path.join(outDir, rel);
    if (!existsSync(file)) {
      report.missing.push(rel);
      parts.push(clip(createTwoFilesPatch(`/dev/null`, `${shown}/${rel}`, '', textOf(text), 'missing', 'would be generated')));
      continue;
    }
    if (!holdsText(file, text)) {
      const current = readFileSync(file, 'utf8');
      report.stale.push(rel);
      parts.push(clip(createTwoFilesPatch(`${shown}/${rel}`, `${shown}/${rel}`, current, textOf(text), 'committed', 'generated from the contract')));
    }
  }
  for (const rel of listFiles(outDir)) if (!files.has(rel)) report.extra.push(rel);
  for (const rel of report.extra) parts.push(`extra file ${shown}/${rel}: the contract no longer produces it`);
  report.ok = !report.stale.length && !report.missing.length && !report.extra.length;
  report.text = parts.join('\n');
  return report;
}
