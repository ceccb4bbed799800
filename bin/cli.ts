// The `svc` command: the compiler's commands (generate, release, lint, diff) go to generator/cli.ts;
// serve and seed run the runtime library with the registry wired in bin/wiring.ts.
import { main as compilerMain } from '../generator/cli.ts';

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
    case 'seed': {
      const [{ runServe, runSeed }, { svcRegistry }] = await Promise.all([import('../runtime/cli.ts'), import('./wiring.ts')]);
      try {
        return command === 'serve' ? await runServe(rest, svcRegistry()) : await runSeed(rest, svcRegistry());
      } catch (err) {
        console.error(err instanceof Error ? err.message : String(err));
        return 1;
      }
    }
    default:
      return compilerMain(argv);
  }
}
