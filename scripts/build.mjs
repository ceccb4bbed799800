// The production build (`npm run build`; `prepare` runs it on npm ci): bin/serve.ts and everything it
// imports (runtime/, handlers/, generated/, and the libraries they use) bundled by esbuild into a
// few ES modules in dist/bin/, so `svc serve` transpiles nothing at run time and Node resolves and
// reads a handful of files instead of ~300 (on Node 24 the unbundled build took 3 s to start,
// mostly package.json lookups for drizzle-orm's 112 modules). Type checking is `npm run typecheck`'s
// job. Code loaded on first use (the MCP SDK, the seeder, the outbox, the drivers) goes to its own
// chunk, loaded by the dynamic import that asks for it.
// Packages that read their own files at run time (PGlite's WebAssembly, Redoc's standalone bundle)
// or are loaded only when configured (the AWS SDK, nodemailer, Redis, unpdf, prom-client, OpenTelemetry) stay in node_modules.
// Every chunk sits in dist/bin/, one level below dist/: runtime/project-root.ts finds the project's
// files from any of them. The compiler (generator/cli.ts: every svc command but serve and seed) is a
// second bundle in dist/compiler/, its libraries left in node_modules (each command imports only what
// it needs, so `svc --help` reads one small file); its dynamic imports stay dynamic (a chunk each).
// Last, dist/build-stamp.json records both fingerprints (bin/build-stamp.js).
import { build } from 'esbuild';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { compilerStamp, DIST, ROOT, STAMP_FILE, sourceStamp } from '../bin/build-stamp.js';

/** Left to node_modules: read their own files at run time, or are loaded only when configured. */
export const EXTERNAL = [
  '@electric-sql/pglite',
  '@electric-sql/pglite/*',
  '@aws-sdk/*',
  'nodemailer',
  'ioredis',
  'rate-limiter-flexible',
  'unpdf',
  'redoc',
  // Metrics and tracing (runtime/observability), loaded only when SVC_METRICS_PORT or
  // OTEL_EXPORTER_OTLP_ENDPOINT is set; CommonJS that requires Node's built-ins, which an ES bundle cannot.
  'prom-client',
  '@opentelemetry/*',
];

/** What both bundles share: split ES modules for Node 20 with linked source maps and a metafile. */
const COMMON = {
  absWorkingDir: ROOT,
  chunkNames: '[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  metafile: true,
  logLevel: 'warning',
};

/** Bundles bin/serve.ts into `outdir` (the chunks' directory). Throws esbuild's error. */
export async function bundleServer(outdir) {
  return build({ ...COMMON, entryPoints: { serve: 'bin/serve.ts' }, outdir, external: EXTERNAL });
}

/**
 * Bundles the compiler (generator/cli.ts) into `outdir`. Every package stays in node_modules: the
 * compiler loads ajv, yaml, handlebars, typescript, diff only in the commands that use them.
 */
export async function bundleCompiler(outdir) {
  return build({ ...COMMON, entryPoints: { cli: 'generator/cli.ts', worker: 'generator/parallel/worker.ts' }, outdir, packages: 'external' });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const started = performance.now();
  const sources = sourceStamp();
  const compiler = compilerStamp();
  rmSync(DIST, { recursive: true, force: true });
  try {
    await Promise.all([bundleServer(join(DIST, 'bin')), bundleCompiler(join(DIST, 'compiler'))]);
  } catch (err) {
    console.error(`svc build: esbuild failed (${err instanceof Error ? err.message : String(err)}); svc will run the sources through tsx`);
    rmSync(DIST, { recursive: true, force: true });
    process.exit(1);
  }
  writeFileSync(STAMP_FILE, `${JSON.stringify({ sources, compiler, builtAt: new Date().toISOString() })}\n`);
  console.log(`svc build: dist/ in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
