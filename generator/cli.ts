// The compiler's commands: generate, release, lint, diff. The `svc` entry is bin/svc.js (the build in
// dist/compiler/ when fresh, else bin/cli.ts through tsx), which sends serve and seed to the runtime
// library and the rest here. Each command imports what it needs when it runs (`--help` loads nothing
// more than this file; `diff` never loads the emitters), so every module below is a dynamic import.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { GeneratedText } from './emit/pieces.ts';
import type { Project } from './project.ts';
import type { WiringOptions } from './emit/wiring-options.ts';

/** A path as the CLI passes it on: relative to the working directory when inside it (generator/project.ts has the same; --help loads only this file). */
function shown(p: string): string {
  const rel = path.relative(process.cwd(), p);
  if (rel === '') return '.';
  return !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : p;
}

async function setWiringOptions(options: WiringOptions): Promise<void> {
  (await import('./emit/wiring-options.ts')).setWiringOptions(options);
}

export const USAGE = `Usage: svc <command> [options]

Commands:
  init DIR                                create a new API project in DIR (contract, handlers, table, tests)
  generate [--contract DIR] [--out DIR]   compile contract/ into generated/
  generate --check                        write nothing; exit 1 with a diff when generated/ is out of date
  generate --watch                        regenerate on every contract change; keep the last good output
  generate --prune                        also delete handler entries (and families) the contract no longer has
  release                                 record contract/releases/<version>.json for the current version
  lint [--contract DIR] [--out DIR] [--require-all]
                                          check the contract, redocly-lint the OpenAPI, list unimplemented handlers
  diff [--base <git-ref> | --against <snapshot>]
                                          classify changes against a release (default: the newest); exit 1 if breaking
  serve [--demo] [--port N]               start the server (the project's generated/wiring.ts)
  seed [--json]                           create the demo workspace

Every command but init reads the project configuration (svc.config.json, from the working directory
upwards, or --project DIR): where the contract, generated output, handlers, migrations and seed are.
\`svc <command> --help\` (or -h) prints a command's options.
`;

const HELP_LINE = '  -h, --help           print this and exit';

/**
 * Each command's usage, printed by `svc <command> --help` (or -h, or `svc help <command>`) before the
 * command does anything: no contract read, no file written, no database opened. bin/svc.js and
 * bin/cli.ts send `svc serve --help` and `svc seed --help` here, not to the runtime.
 */
export const COMMAND_USAGE: Record<string, string> = {
  generate: `Usage: svc generate [options]

Compile the contract into generated/ (and scaffold handler entries of new operations).

Options:
  --contract DIR       the contract's directory (default: the project's, else contract)
  --out DIR            the output directory (default: the project's, else generated)
  --check              write nothing; exit 1 with a diff when the output is out of date
  --watch              regenerate on every contract change; keep the last good output
  --prune              also delete handler entries of operations the contract no longer has, and the
                       handlers file of a family it no longer has (with its line in handlers/index.ts);
                       generated files it no longer produces are deleted, and named, on every generate
  --project DIR        the project whose svc.config.json to use (default: the nearest from the working directory up)
${HELP_LINE}
`,
  lint: `Usage: svc lint [options]

Check the contract, redocly-lint the OpenAPI document, report stale handler entries and list
unimplemented operations.

Options:
  --contract DIR       the contract's directory (default: contract)
  --out DIR            where the OpenAPI document was generated (default: generated)
  --require-all        fail while any operation is unimplemented
  --project DIR        the project whose svc.config.json to use (default: the nearest from the working directory up)
${HELP_LINE}
`,
  diff: `Usage: svc diff [options]

Classify the contract's changes against a release; exit 1 on a breaking change, or an additive one
without the next minor version and a changelog entry.

Options:
  --base REF           compare with the contract as committed at this git ref
  --against FILE       compare with this release snapshot (default: the newest in the releases directory)
  --contract DIR       the contract's directory (default: contract)
  --releases DIR       the release snapshots' directory (default: <contract>/releases)
  --project DIR        the project whose svc.config.json to use (default: the nearest from the working directory up)
${HELP_LINE}
`,
  release: `Usage: svc release [options]

Record <releases>/<version>.json for the contract's current version.

Options:
  --contract DIR       the contract's directory (default: contract)
  --releases DIR       the release snapshots' directory (default: <contract>/releases)
  --correct            replace a differing snapshot of the same version (its changelog entry must list
                       the corrections under corrected:)
  --project DIR        the project whose svc.config.json to use (default: the nearest from the working directory up)
${HELP_LINE}
`,
  serve: `Usage: svc serve [options]

Open the database (the project's migrations applied) and serve the API, MCP and the portal until
SIGINT/SIGTERM. A project other than this repository is served from its generated/wiring.ts.

Options:
  --demo               create the demo workspace (or fresh demo keys) and print an operator key; a
                       project's demo is an owner with an every-scope key plus its seed module's rows
  --port N             the port to listen on (default: PORT, else 8787)
  --project DIR        the project whose svc.config.json to use (default: the nearest from the working directory up)
${HELP_LINE}
`,
  seed: `Usage: svc seed [options]

Create the demo workspace in the configured database.

Options:
  --json               print the credentials as one JSON line
  --port N             the port the base URL names (default: PORT, else 8787)
  --project DIR        the project whose svc.config.json to use (default: the nearest from the working directory up)
${HELP_LINE}
`,
  init: `Usage: svc init DIR [options]

Create a new API project in DIR (new or empty): svc.config.json, a contract with one family (notes:
notes.list and notes.create), its handlers, its drizzle table and migration, generated/, a first
release, tests, README, package.json (svc by path: file:<this checkout>) and package-lock.json (made
by npm install --package-lock-only). Then: cd DIR && npm ci && npm test, or npm start.

Options:
  --no-lock            do not make package-lock.json (run npm install there yourself)
${HELP_LINE}
`,
  help: `Usage: svc help [command]

Print the list of commands, or one command's options.

Options:
${HELP_LINE}
`,
};

/** Whether the arguments ask for help (\`--help\` or \`-h\`, anywhere after the command). */
export function asksForHelp(argv: readonly string[]): boolean {
  return argv.some((a) => a === '--help' || a === '-h');
}

interface Options {
  contract: string;
  out: string;
  check: boolean;
  rest: string[];
  /** The project's handlers directory when the contract and output are the project's (no --contract/--out): scaffolded and linted. */
  handlers: string | null;
  /** The project is this repository, or a copy of it (its handlers import the runtime by relative paths). */
  svcRepo: boolean;
}

/** The options of generate and lint: --contract and --out win over the project configuration (svc.config.json). */
function parseOptions(argv: string[], project: Project): Options {
  const options: Options = { contract: shown(project.contract), out: shown(project.generated), check: false, rest: [], handlers: shown(project.handlers), svcRepo: project.isSvc || existsSync(path.join(project.root, 'runtime/pipeline/not-implemented.ts')) };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] = arg.includes('=') ? arg.split(/=(.*)/s, 2) : [arg, undefined];
    if (flag === '--contract' || flag === '--out') {
      const value = inline ?? argv[++i];
      if (!value) throw new Error(`${flag} needs a directory`);
      options[flag === '--contract' ? 'contract' : 'out'] = value;
    } else if (flag === '--check') options.check = true;
    else options.rest.push(arg);
  }
  // Handlers are scaffolded only beside the project's own contract and output (as before: contract/ and generated/ of the working directory).
  if (path.resolve(options.contract) !== project.contract || path.resolve(options.out) !== project.generated) options.handlers = null;
  return options;
}

/** The project (svc.config.json from the working directory upwards, or --project DIR) and the arguments without --project. */
async function projectOf(argv: string[]): Promise<{ project: Project; rest: string[] }> {
  const { projectArgument, findProject } = await import('../bin/project-config.js');
  const { dir, rest } = projectArgument(argv);
  return { project: findProject({ dir }) as Project, rest };
}

/** diff and release take --contract themselves: the project's contract unless one is given. */
function withContract(argv: string[], project: Project): string[] {
  return argv.some((a) => a === '--contract' || a.startsWith('--contract=')) ? argv : [...argv, '--contract', shown(project.contract)];
}

async function printContractError(err: unknown): Promise<boolean> {
  if (!(err instanceof Error) || err.name !== 'ContractError') return false;
  const { ContractError, formatDiagnostic, sortDiagnostics } = await import('./source.ts');
  if (!(err instanceof ContractError)) return false;
  const list = sortDiagnostics(err.diagnostics);
  for (const d of list) console.error(formatDiagnostic(d));
  console.error(`\n${list.length} contract error${list.length === 1 ? '' : 's'}; nothing was generated.`);
  return true;
}

/** Where the generated wiring module (generated/wiring.ts) imports the project's handlers from. */
function wiringOptions(options: Options): WiringOptions {
  const handlers = options.handlers ?? path.join(path.dirname(path.resolve(options.out)), 'handlers');
  let rel = path.relative(path.resolve(options.out), path.join(path.resolve(handlers), 'index.ts')).split(path.sep).join('/');
  if (!rel.startsWith('.')) rel = `./${rel}`;
  return { handlersIndex: rel };
}

async function generate(options: Options): Promise<number> {
  await setWiringOptions(wiringOptions(options));
  if (options.check) {
    // The content-hash cache (cache.ts) proves an unchanged contract's output without compiling it.
    const cache = await import('./cache.ts');
    if (cache.provenUpToDate(options.contract, options.out)) {
      const count = Object.keys(cache.readEntry(options.contract)!.outputs).length;
      console.log(`${options.out}/ is up to date with ${options.contract}/ (${count} files).`);
      return 0;
    }
  }
  const { checkGenerated, compileAndRecord, writeGeneratedShared } = await import('./generate.ts');
  let files: Map<string, GeneratedText>;
  let operations: { id: string; family: string }[];
  try {
    const compiled = await compileAndRecord(options.contract);
    files = compiled.files;
    operations = compiled.model.operations.map((o) => o.def);
  } catch (err) {
    if (await printContractError(err)) return 1;
    throw err;
  }
  if (options.check) {
    const report = checkGenerated(files, options.out);
    if (report.ok) {
      console.log(`${options.out}/ is up to date with ${options.contract}/ (${files.size} files).`);
      return 0;
    }
    console.log(report.text);
    const counts = [
      report.stale.length && `${report.stale.length} stale`,
      report.missing.length && `${report.missing.length} missing`,
      report.extra.length && `${report.extra.length} extra`,
    ].filter(Boolean);
    console.error(`\n${options.out}/ is out of date with ${options.contract}/ (${counts.join(', ')}). Run \`npx svc generate\` and commit the result.`);
    return 1;
  }
  const report = await writeGeneratedShared(files, options.out);
  if (options.handlers) {
    // New operations get a typed notImplemented entry in their family's handler file (bodies are never touched).
    const scaffold = await import('./tools/scaffold.ts');
    // The model just built is the contract's: the scaffold does not load and check it a second time.
    const fromHandlers = (to: string) => {
      const rel = path.relative(path.resolve(options.handlers!), path.resolve(to)).split(path.sep).join('/');
      return rel.startsWith('.') ? rel : `./${rel}`;
    };
    scaffold.printScaffoldReport(
      scaffold.scaffoldHandlers({
        contractOps: operations,
        handlersDir: options.handlers,
        prune: options.rest.includes('--prune'),
        generatedImport: fromHandlers(options.out),
        // A project outside this repository reaches the runtime through the svc package.
        notImplementedImport: options.svcRepo ? undefined : 'svc/runtime/pipeline/not-implemented.ts',
      }),
    );
  }
  // One write for all the lines (8,200 operations write 6,900 files: a write per line cost more than the printing).
  const lines = [...report.written.map((rel) => `wrote   ${path.join(options.out, rel)}\n`), ...report.removed.map((rel) => `removed ${path.join(options.out, rel)}\n`)];
  if (lines.length) process.stdout.write(lines.join(''));
  for (const rel of report.kept) console.warn(`warning: ${path.join(options.out, rel)} is not produced by the contract and carries no generated marker; left in place`);
  console.log(`${files.size} files (${report.written.length} written, ${report.unchanged} unchanged, ${report.removed.length} removed).`);
  return 0;
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  // Help first: a command asked for its usage does no work.
  if (command && command in COMMAND_USAGE && asksForHelp(rest)) {
    console.log(COMMAND_USAGE[command]);
    return 0;
  }
  try {
    switch (command) {
      case 'init':
        return await (await import('./init.ts')).runInit(rest);
      case 'generate': {
        const { project, rest: args } = await projectOf(rest);
        if (args.includes('--watch')) {
          const options = parseOptions(args, project);
          await setWiringOptions(wiringOptions(options));
          return await (await import('./tools/watch.ts')).runWatch([...args, ...(args.some((a) => a.startsWith('--contract')) ? [] : ['--contract', options.contract]), ...(args.some((a) => a.startsWith('--out')) ? [] : ['--out', options.out])]);
        }
        return await generate(parseOptions(args, project));
      }
      case 'release': {
        const { project, rest: args } = await projectOf(rest);
        return await (await import('./snapshot.ts')).runRelease(withContract(args, project));
      }
      case 'lint': {
        const { project, rest: args } = await projectOf(rest);
        const options = parseOptions(args, project);
        const { lint } = await import('./lint.ts');
        const result = lint(options.contract, path.join(options.out, 'openapi.json'));
        for (const line of result.contractErrors) console.error(line);
        if (result.redoclyStatus === -1) console.error(`${options.out}/openapi.json does not exist. Run \`npx svc generate\` first.`);
        const handlersExit = options.handlers
          ? await (await import('./tools/scaffold.ts')).lintHandlers([...options.rest, '--contract', options.contract, '--handlers', options.handlers])
          : 0;
        const failed = result.contractErrors.length > 0 || result.redoclyStatus !== 0 || handlersExit !== 0;
        console.error(
          failed
            ? `svc lint: ${result.contractErrors.length} contract error(s); redocly ${result.redoclyStatus === 0 ? 'passed' : 'failed'}.`
            : 'svc lint: the contract and the OpenAPI document are clean.',
        );
        return failed ? 1 : 0;
      }
      case 'diff': {
        const { project, rest: args } = await projectOf(rest);
        return await (await import('./diff/command.ts')).runDiff(withContract(args, project));
      }
      case 'help':
        if (rest[0] && !rest[0].startsWith('-')) {
          if (!(rest[0] in COMMAND_USAGE)) {
            console.error(`Unknown command: ${rest[0]}\n`);
            console.error(USAGE);
            return 1;
          }
          console.log(COMMAND_USAGE[rest[0]]);
          return 0;
        }
        console.log(USAGE);
        return 0;
      case undefined:
      case '--help':
      case '-h':
        console.log(USAGE);
        return command === undefined ? 1 : 0;
      default:
        console.error(`Unknown command: ${command}\n`);
        console.error(USAGE);
        return 1;
    }
  } catch (err) {
    if (await printContractError(err)) return 1;
    console.error(err instanceof Error ? err.message : String(err));
    return 1;
  }
}
