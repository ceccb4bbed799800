// `svc generate --watch`: regenerate on every contract change. A broken contract leaves the last
// good generated/ in place and prints each error with a code frame (the line and a caret).
import { existsSync, readdirSync, readFileSync, statSync, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { inputsKey, writeEntry } from '../cache.ts';
import { compileToPieces, writeGenerated } from '../generate.ts';
import type { GeneratedText } from '../emit/pieces.ts';
import { ContractError, formatDiagnostic, sortDiagnostics, type Diagnostic } from '../source.ts';
import { consoleIo, parseArgs, type CliIo } from '../snapshot.ts';
import { session } from '../session.ts';

/** The offending line with one line of context on each side and a caret under the column. */
export function codeFrame(d: Pick<Diagnostic, 'file' | 'line' | 'col'>, text?: string): string {
  let source = text;
  if (source === undefined) {
    if (!existsSync(d.file)) return '';
    source = readFileSync(d.file, 'utf8');
  }
  const lines = source.split('\n');
  const from = Math.max(1, d.line - 1);
  const to = Math.min(lines.length, d.line + 1);
  const width = String(to).length;
  const out: string[] = [];
  for (let n = from; n <= to; n++) {
    const mark = n === d.line ? '>' : ' ';
    out.push(`${mark} ${String(n).padStart(width)} | ${lines[n - 1] ?? ''}`.trimEnd());
    if (n === d.line) {
      const lead = (lines[n - 1] ?? '').slice(0, Math.max(0, d.col - 1)).replace(/[^\t]/g, ' ');
      out.push(`  ${' '.repeat(width)} | ${lead}^`);
    }
  }
  return out.join('\n');
}

/** Diagnostics as the watcher prints them: the generator's line, then the code frame. */
export function formatWithFrames(diagnostics: Diagnostic[]): string {
  return sortDiagnostics(diagnostics)
    .map((d) => {
      const frame = codeFrame(d);
      return frame ? `${formatDiagnostic(d)}\n${frame}` : formatDiagnostic(d);
    })
    .join('\n\n');
}

/** How long the contract stays quiet after a re-emit before its output is recorded in the cache. */
const RECORD_AFTER_MS = 1000;

export interface WatchOptions {
  contract: string;
  out: string;
  debounceMs?: number;
  io?: CliIo;
  /** Contract directory -> generated files. Defaults to the generator's compileContract. */
  compile?: (contractDir: string) => Promise<Map<string, GeneratedText>>;
}

export interface WatchRun {
  ok: boolean;
  written: number;
  diagnostics: Diagnostic[];
  /** Wall time of a successful re-emit (compile and write), in milliseconds. */
  ms?: number;
}

export interface Watcher {
  /** Resolves after the first generation. */
  ready: Promise<WatchRun>;
  /** Resolves with the next run that starts after this call. */
  nextRun(): Promise<WatchRun>;
  close(): void;
}

/** Every directory under dir (dir included), for platforms without recursive fs.watch. */
function dirsUnder(dir: string): string[] {
  const out = [dir];
  for (const name of readdirSync(dir)) {
    const child = path.join(dir, name);
    if (statSync(child).isDirectory()) out.push(...dirsUnder(child));
  }
  return out;
}

export function startWatch(options: WatchOptions): Watcher {
  session.longLived = true;
  const io = options.io ?? consoleIo;
  const debounce = options.debounceMs ?? 100;
  // The default compile records its output in the content-hash cache (cache.ts), so that a --check
  // after the session is answered at once. Hashing what changed is bookkeeping, not part of what the
  // author waits for: it runs once the contract has been quiet for RECORD_AFTER_MS (an edit before
  // then compiles and records anew), or when the watcher is closed.
  let toRecord: { key: string; files: Map<string, GeneratedText> } | null = null;
  const compile =
    options.compile ??
    (async (dir: string) => {
      const key = inputsKey(dir);
      const { files } = await compileToPieces(dir);
      toRecord = { key, files };
      return files;
    });
  const record = () => {
    const pending = toRecord;
    toRecord = null;
    // Nothing is recorded when the contract changed while it compiled (its output may mix both versions).
    if (pending && inputsKey(options.contract) === pending.key) writeEntry(options.contract, pending.key, pending.files);
  };
  let recordTimer: NodeJS.Timeout | null = null;
  const cancelRecord = () => {
    if (recordTimer) clearTimeout(recordTimer);
    recordTimer = null;
  };
  const recordLater = () => {
    cancelRecord();
    recordTimer = setTimeout(() => {
      recordTimer = null;
      record();
    }, RECORD_AFTER_MS);
    recordTimer.unref();
  };
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<WatchRun> | null = null;
  let again = false;
  let waiters: ((run: WatchRun) => void)[] = [];

  const run = async (): Promise<WatchRun> => {
    let result: WatchRun;
    const started = performance.now();
    cancelRecord();
    try {
      const files = await compile(options.contract);
      const report = writeGenerated(files, options.out);
      result = { ok: true, written: report.written.length + report.removed.length, diagnostics: [], ms: performance.now() - started };
      io.out(
        `[svc watch] ${new Date().toISOString().slice(11, 19)} generated ${options.out}/ in ${Math.round(result.ms!)} ms (${report.written.length} written, ${report.removed.length} removed, ${report.unchanged} unchanged).`,
      );
      recordLater();
    } catch (err) {
      if (!(err instanceof ContractError)) {
        io.err(`[svc watch] ${(err as Error).stack ?? String(err)}`);
        result = { ok: false, written: 0, diagnostics: [] };
      } else {
        io.err(formatWithFrames(err.diagnostics));
        io.err(`\n[svc watch] ${err.diagnostics.length} contract error(s); ${options.out}/ keeps the last good output. Watching for the fix...`);
        result = { ok: false, written: 0, diagnostics: err.diagnostics };
      }
    }
    const list = waiters;
    waiters = [];
    for (const w of list) w(result);
    return result;
  };

  const trigger = () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      if (running) {
        again = true;
        return;
      }
      const loop = async () => {
        do {
          again = false;
          await run();
        } while (again);
        running = null;
      };
      running = loop().then(() => ({ ok: true, written: 0, diagnostics: [] }));
    }, debounce);
  };

  const watchers: FSWatcher[] = [];
  const onEvent = (_event: string, name: string | Buffer | null) => {
    const file = name ? String(name) : '';
    if (file && !/\.ya?ml$/.test(file) && !file.endsWith('/') && path.extname(file) !== '') return;
    trigger();
  };
  try {
    watchers.push(watch(options.contract, { recursive: true }, onEvent));
  } catch {
    // Recursive watching is unavailable here: watch every directory (new directories need a restart).
    for (const dir of dirsUnder(options.contract)) watchers.push(watch(dir, onEvent));
  }

  const ready = run();
  return {
    ready,
    nextRun: () => new Promise<WatchRun>((resolve) => waiters.push(resolve)),
    close() {
      if (timer) clearTimeout(timer);
      if (recordTimer) {
        cancelRecord();
        record();
      }
      for (const w of watchers) w.close();
    },
  };
}

/** `svc generate --watch [--contract DIR] [--out DIR]`: runs until interrupted. */
export async function runWatch(argv: string[], io: CliIo = consoleIo): Promise<number> {
  const { values } = parseArgs(
    argv.filter((a) => a !== '--watch'),
    ['contract', 'out'],
  );
  const contract = values.contract ?? 'contract';
  const out = values.out ?? 'generated';
  if (!existsSync(contract)) {
    io.err(`svc generate --watch: ${contract}/ does not exist.`);
    return 1;
  }
  const watcher = startWatch({ contract, out, io });
  await watcher.ready;
  io.out(`[svc watch] watching ${contract}/ (Ctrl-C to stop).`);
  return await new Promise<number>((resolve) => {
    const stop = () => {
      watcher.close();
      resolve(0);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
