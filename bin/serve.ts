// `svc serve` and `svc seed`: the runtime library with the registry wired in bin/wiring.ts. The
// production build (scripts/build.mjs) compiles this module and what it imports into dist/.
// The registry (handlers, generated validators) loads while `svc serve` opens the database.
export async function runServeOrSeed(command: 'serve' | 'seed', argv: string[]): Promise<number> {
  // bin/serve-cli.ts first (the database's modules only), so the database opens before the registry's
  // modules are loaded, not after.
  const { runServe, runSeed } = await import('./serve-cli.ts');
  const registry = import('./wiring.ts').then(({ svcRegistry }) => svcRegistry());
  registry.catch(() => undefined); // awaited below; a failure is reported there
  try {
    return command === 'serve' ? await runServe(argv, registry) : await runSeed(argv, await registry);
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    return 1;
  }
}
