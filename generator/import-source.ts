// Importing the project's TypeScript sources (handlers/index.ts for `svc lint`) from the compiler. Run
// from its sources, the compiler already runs under a TypeScript loader (tsx, vitest); run from its
// build (dist/compiler/*.js) it has none, and registers tsx's on first use, for that command only.
let registered = false;

export async function importSource(url: string): Promise<unknown> {
  if (!registered && !import.meta.url.endsWith('.ts')) {
    const { register } = await import('tsx/esm/api');
    register();
    registered = true;
  }
  return import(url);
}
