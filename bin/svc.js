#!/usr/bin/env node
// The svc CLI. `svc serve` and `svc seed` run the production build in dist/bin/ (scripts/build.mjs,
// run by `npm ci` through the prepare script) when it was built from the current sources; the
// compiler's commands (generate, lint, diff, release, help) run the compiler's build in dist/compiler/
// on the same rule. A missing or stale build, or SVC_NO_BUILD=1, runs the TypeScript sources through
// tsx's loader instead (the same program, transpiled at each start: about a second more).
// Node 22.1 and later keep V8's compiled code of each module on disk (os.tmpdir()/node-compile-cache,
// keyed by the source's content; NODE_DISABLE_COMPILE_CACHE=1 turns it off): a later start skips
// compiling the bundle. Node 20 has no such cache and skips this.
const { default: nodeModule } = await import('node:module');
nodeModule.enableCompileCache?.();
const argv = process.argv.slice(2);
const command = argv[0];
// `svc serve --help` (or -h) goes to the compiler, which prints the usage without opening a database.
const help = argv.slice(1).some((a) => a === '--help' || a === '-h');
const server = (command === 'serve' || command === 'seed') && !help;
// A project other than this checkout (svc.config.json from the working directory upwards, or
// --project DIR; docs/projects.md) is served through tsx from its generated wiring (bin/project-serve.ts).
const project = server ? await projectToServe() : null;
const stamp = process.env.SVC_NO_BUILD === '1' ? null : await import('./build-stamp.js');
if (project && !project.isSvc) {
  const { register } = await import('tsx/esm/api');
  register();
  const { runProjectServeOrSeed } = await import('./project-serve.ts');
  process.exitCode = await runProjectServeOrSeed(command, project.rest, project);
} else if (server && stamp?.freshBuild()) {
  const { runServeOrSeed } = await import('../dist/bin/serve.js');
  process.exitCode = await runServeOrSeed(command, argv.slice(1));
} else if (!server && stamp?.freshCompiler()) {
  const { main } = await import('../dist/compiler/cli.js');
  process.exitCode = await main(argv);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import('./cli.ts');
  process.exitCode = await main(argv);
}

async function projectToServe() {
  const { findProject, projectArgument } = await import('./project-config.js');
  try {
    const { dir, rest } = projectArgument(argv.slice(1));
    const found = findProject({ dir });
    // This checkout, or no configuration at all: the paths below as before (argv without --project).
    if (found.isSvc || !found.file) {
      argv.splice(1, argv.length - 1, ...rest);
      return null;
    }
    return { ...found, rest };
  } catch (err) {
    console.error(`svc ${command}: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(2);
  }
}
