// The `svc` command: the compiler's commands (generate, release, lint, diff) go to generator/cli.ts;
// serve and seed run the runtime library with the registry wired in bin/wiring.ts (bin/serve.ts).
// `svc serve --help` (or -h) goes to the compiler's CLI too, which prints the usage and opens nothing.
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const help = rest.some((a) => a === '--help' || a === '-h');
  if ((command === 'serve' || command === 'seed') && !help) return (await import('./serve.ts')).runServeOrSeed(command, rest);
  return (await import('../generator/cli.ts')).main(argv);
}
