// Typed clients generated from the OpenAPI document compile without edits: openapi-typescript (with
// openapi-fetch), hey-api, and orval's fetch, axios and zod clients, each checked with tsc --noEmit.
// A component name that collides with a generator's own per-operation alias (orval's
// `<Operation>Result`) or an untyped plan (`Record<string, never>`) fails here.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GENERATED_DIR, tempDir } from './helpers.ts';

const ROOT = path.resolve('.');
const BIN = path.join(ROOT, 'node_modules', '.bin');
const DOC = path.join(GENERATED_DIR, 'openapi.json');
const tmp = tempDir('clients');
afterAll(() => tmp.cleanup());

function run(bin: string, args: string[]): void {
  execFileSync(path.join(BIN, bin), args, { cwd: tmp.dir, stdio: 'pipe', env: { ...process.env, NO_COLOR: '1' } });
}

/** tsc --noEmit over one directory, resolving packages from this repository's node_modules. */
function typecheck(dir: string): string {
  writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'ESNext',
        moduleResolution: 'Bundler',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        lib: ['ES2022', 'DOM', 'DOM.Iterable'],
        types: [],
        baseUrl: ROOT,
        paths: { '*': [path.join(ROOT, 'node_modules', '*')] },
      },
      include: ['**/*.ts'],
    }),
  );
  try {
    execFileSync(path.join(BIN, 'tsc'), ['-p', path.join(dir, 'tsconfig.json')], { stdio: 'pipe' });
    return '';
  } catch (err) {
    return String((err as { stdout?: Buffer }).stdout ?? err);
  }
}

describe('generated clients compile', { timeout: 120_000 }, () => {
  it('openapi-typescript with openapi-fetch, reading a typed dry-run plan', () => {
    const dir = path.join(tmp.dir, 'openapi-typescript');
    mkdirSync(dir);
    run('openapi-typescript', [DOC, '-o', path.join(dir, 'schema.d.ts')]);
    writeFileSync(
      path.join(dir, 'use.ts'),
      `import createClient from 'openapi-fetch';
import type { paths } from './schema';
const client = createClient<paths>({ baseUrl: 'http://localhost:8787' });
export async function plan(): Promise<string[]> {
  const res = await client.POST('/v1/tasks', {
    params: { header: { 'Idempotency-Key': '00000000-0000-4000-8000-000000000000', Prefer: 'dry-run' } },
    body: { title: 'x', clientId: 'cli_1' },
  });
  if (res.data && res.data.outcome === 'planned') return [...res.data.plan.effects, String(res.data.plan.approvalRequired)];
  return [];
}
`,
    );
    expect(typecheck(dir)).toBe('');
  });

  it('hey-api', () => {
    const dir = path.join(tmp.dir, 'hey-api');
    run('openapi-ts', ['-i', DOC, '-o', dir]);
    expect(typecheck(dir)).toBe('');
  });

  it('orval: fetch, axios and zod clients', () => {
    const config = path.join(tmp.dir, 'orval.config.cjs');
    const out = (client: string) => ({ input: DOC, output: { target: path.join(tmp.dir, 'orval', client, 'api.ts'), client } });
    writeFileSync(config, `module.exports = ${JSON.stringify({ fetch: out('fetch'), axios: out('axios'), zod: out('zod') })};\n`);
    run('orval', ['--config', config]);
    expect(typecheck(path.join(tmp.dir, 'orval'))).toBe('');
  });
});
