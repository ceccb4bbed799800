// The `svc` command: the compiler's commands (generate, release, lint, diff) go to generator/cli.ts;
// serve and seed run the runtime library with the registry wired in bin/wiring.ts (bin/serve.ts).
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
    case 'seed':
      return (await import('./serve.ts')).runServeOrSeed(command, rest);
    default:
      return (await import('../generator/cli.ts')).main(argv);
  }
}
