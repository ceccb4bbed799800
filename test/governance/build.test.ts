// The production build (scripts/build.mjs): bin/serve.ts and what it imports bundled into dist/bin/,
// so `svc serve` loads a few modules instead of ~300 from node_modules. Built here into a temporary
// directory: what the chunks import from outside the bundle is Node's own modules and the packages
// the build leaves external, nothing else; code loaded on first use stays out of the entry's
// static graph.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinModules } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleServer, EXTERNAL } from '../../scripts/build.mjs';

interface Metafile {
  outputs: Record<string, { imports: { path: string; kind: string; external?: boolean }[]; inputs: Record<string, unknown>; entryPoint?: string }>;
}

let out: string;
let meta: Metafile;

beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), 'svc-build-'));
  meta = ((await bundleServer(out)) as { metafile: Metafile }).metafile;
}, 60_000);
afterAll(() => rmSync(out, { recursive: true, force: true }));

const isExternalAllowed = (path: string) =>
  path.startsWith('node:') ||
  builtinModules.includes(path) ||
  (EXTERNAL as string[]).some((e) => (e.endsWith('/*') ? path.startsWith(e.slice(0, -1)) : path === e || path.startsWith(`${e}/`)));

describe('the production build', () => {
  it('imports from outside the bundle only Node built-ins and the packages left external', () => {
    const outside = new Set<string>();
    for (const o of Object.values(meta.outputs)) for (const i of o.imports) if (i.external && !isExternalAllowed(i.path)) outside.add(i.path);
    expect([...outside]).toEqual([]);
  });

  it('bundles the libraries the server needs at start (hono, drizzle-orm, postgres, jose)', () => {
    const inputs = new Set(Object.values(meta.outputs).flatMap((o) => Object.keys(o.inputs)));
    for (const pkg of ['hono', 'drizzle-orm', 'postgres', 'jose']) expect([...inputs].some((i) => i.includes(`node_modules/${pkg}/`)), pkg).toBe(true);
  });

  it('keeps what loads on first use (the MCP SDK, openid-client) out of the static graph of the entry', () => {
    const byPath = meta.outputs;
    const entry = Object.keys(byPath).find((p) => byPath[p]!.entryPoint === 'bin/serve.ts')!;
    const seen = new Set<string>();
    const visit = (p: string) => {
      if (seen.has(p)) return;
      seen.add(p);
      for (const i of byPath[p]?.imports ?? []) if (!i.external && i.kind === 'import-statement') visit(i.path);
    };
    visit(entry);
    const staticInputs = [...seen].flatMap((p) => Object.keys(byPath[p]!.inputs));
    for (const lazy of ['@modelcontextprotocol/sdk', 'openid-client']) {
      expect(staticInputs.filter((i) => i.includes(`node_modules/${lazy}/`)), lazy).toEqual([]);
      expect(Object.values(byPath).some((o) => Object.keys(o.inputs).some((i) => i.includes(`node_modules/${lazy}/`))), lazy).toBe(true);
    }
  });
});
