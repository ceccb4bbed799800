// The compiler's build (scripts/build.mjs bundleCompiler): generator/cli.ts bundled into dist/compiler/
// with every package left in node_modules, each command's modules behind a dynamic import. Built here
// into a temporary directory, then read through esbuild's metafile: what each command loads before it
// runs is the static import graph of its chunk.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinModules } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleCompiler } from '../../scripts/build.mjs';

interface Output {
  imports: { path: string; kind: string; external?: boolean }[];
  inputs: Record<string, unknown>;
  entryPoint?: string;
}

let out: string;
let outputs: Record<string, Output>;

beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), 'svc-compiler-build-'));
  outputs = ((await bundleCompiler(out)) as { metafile: { outputs: Record<string, Output> } }).metafile.outputs;
}, 60_000);
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** The chunk holding `input` (a source path), and everything its static imports load with it. */
function staticClosure(input: string): { inputs: string[]; packages: string[] } {
  const start = Object.keys(outputs).find((p) => input in outputs[p]!.inputs && !p.endsWith('.map'));
  expect(start, input).toBeDefined();
  const seen = new Set<string>();
  const packages = new Set<string>();
  const visit = (p: string) => {
    if (seen.has(p)) return;
    seen.add(p);
    for (const i of outputs[p]?.imports ?? []) {
      if (i.kind !== 'import-statement') continue;
      if (i.external) packages.add(i.path);
      else visit(i.path);
    }
  };
  visit(start!);
  return { inputs: [...seen].flatMap((p) => Object.keys(outputs[p]!.inputs)), packages: [...packages] };
}

const notBuiltin = (p: string) => !p.startsWith('node:') && !builtinModules.includes(p);

describe("the compiler's build", () => {
  it('bundles no package: each is imported from node_modules by the command that uses it', () => {
    const inputs = Object.values(outputs).flatMap((o) => Object.keys(o.inputs));
    expect(inputs.filter((i) => i.includes('node_modules/'))).toEqual([]);
  });

  it('loads nothing but its own entry and Node built-ins for --help', () => {
    const { inputs, packages } = staticClosure('generator/cli.ts');
    expect(packages.filter(notBuiltin)).toEqual([]);
    expect(inputs).toEqual(['generator/cli.ts']);
  });

  it('keeps the emitters out of svc diff, and the writing-only code out of svc generate --check', () => {
    const diff = staticClosure('generator/diff/command.ts');
    expect(diff.inputs.filter((i) => i.startsWith('generator/emit/') && i !== 'generator/emit/format.ts')).toEqual([]);
    // The contract's YAML only: js-yaml for its data, yaml for positions and syntax errors (yaml-data.ts).
    expect(diff.packages.filter(notBuiltin).sort()).toEqual(['js-yaml', 'yaml']);
    const generate = staticClosure('generator/generate.ts');
    for (const lazy of ['generator/tools/scaffold.ts', 'generator/locate-emit.ts', 'generator/lint.ts']) expect(generate.inputs).not.toContain(lazy);
    expect(generate.packages).not.toContain('typescript');
  });
});
