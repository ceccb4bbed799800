// `svc serve` and `svc seed`: the runtime library with the registry wired in bin/wiring.ts. The
// production build (scripts/build.mjs) compiles this module and what it imports into dist/.
export async function runServeOrSeed(command: 'serve' | 'seed', argv: string[]): Promise<number> {
  const [{ runServe, runSeed }, { svcRegistry }] = await Promise.all([import('../runtime/cli.ts'), import('./wiring.ts')]);
  try {
    return command === 'serve' ? await runServe(argv, svcRegistry()) : await runSeed(argv, svcRegistry());
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    return 1;
  }
}
