#!/usr/bin/env node
// The svc CLI. `svc serve` and `svc seed` run the production build in dist/ (scripts/build.mjs,
// run by `npm ci` through the prepare script) when it was built from the current sources; anything
// else (the compiler's commands, a missing or stale build, SVC_NO_BUILD=1) runs the TypeScript
// sources through tsx's loader.
// Node 22.1 and later keep V8's compiled code of each module on disk (os.tmpdir()/node-compile-cache,
// keyed by the source's content; NODE_DISABLE_COMPILE_CACHE=1 turns it off): a later start skips
// compiling the bundle. Node 20 has no such cache and skips this.
const { default: nodeModule } = await import('node:module');
nodeModule.enableCompileCache?.();
const argv = process.argv.slice(2);
const command = argv[0];
if ((command === 'serve' || command === 'seed') && process.env.SVC_NO_BUILD !== '1' && (await import('./build-stamp.js')).freshBuild()) {
  const { runServeOrSeed } = await import('../dist/bin/serve.js');
  process.exitCode = await runServeOrSeed(command, argv.slice(1));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import('./cli.ts');
  process.exitCode = await main(argv);
}
