// The production build (`npm run build`; `prepare` runs it on npm ci): bin/serve.ts and everything it
// imports (runtime/, handlers/, generated/) compiled by tsc to JavaScript in dist/, so `svc serve`
// transpiles nothing at run time. Type checking is `npm run typecheck`'s job (--noCheck here keeps
// the build a few seconds). Plain JavaScript files the server imports (generated/validators.js) are
// copied. Last, dist/build-stamp.json records the sources' fingerprint (bin/build-stamp.js).
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { DIST, ROOT, SOURCE_DIRS, STAMP_FILE, sourceStamp } from '../bin/build-stamp.js';

const started = performance.now();
const sources = sourceStamp();
rmSync(DIST, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const run = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json'), '--noCheck'], { stdio: 'inherit' });
if (run.status !== 0) {
  console.error(`svc build: tsc exited ${run.status}; svc serve will run the sources through tsx`);
  rmSync(DIST, { recursive: true, force: true });
  process.exit(1);
}
for (const dir of SOURCE_DIRS) copyPlainJs(dir);
writeFileSync(STAMP_FILE, `${JSON.stringify({ sources, builtAt: new Date().toISOString() })}\n`);
console.log(`svc build: dist/ in ${((performance.now() - started) / 1000).toFixed(1)} s`);

function copyPlainJs(dir) {
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const rel = join(dir, entry.name);
    if (entry.isDirectory()) copyPlainJs(rel);
    else if (/\.m?js$/.test(entry.name) && !existsSync(join(DIST, rel))) {
      mkdirSync(dirname(join(DIST, rel)), { recursive: true });
      copyFileSync(join(ROOT, rel), join(DIST, rel));
    }
  }
}
