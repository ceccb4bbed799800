// Writes a synthetic contract of N x the operations of contract/: every family cloned N-1 times with
// renamed family, ids and paths (/v1/x<k>/...), totals multiplied to match. For generator benchmarks.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse, stringify } from 'yaml';

type Obj = Record<string, unknown>;

export function synthContract(factor: number, sourceDir = 'contract', outDir?: string): string {
  const dir = outDir ?? path.join(mkdtempSync(path.join(os.tmpdir(), `svc-synth-${factor}x-`)), 'contract');
  mkdirSync(path.join(dir, 'families'), { recursive: true });
  cpSync(path.join(sourceDir, 'schemas'), path.join(dir, 'schemas'), { recursive: true });
  const svc = parse(readFileSync(path.join(sourceDir, 'svc.yaml'), 'utf8')) as Obj;
  const totals = svc.totals as Record<string, number>;
  for (const key of ['operations', 'reads', 'commands', 'families', 'tools']) totals[key] *= factor;
  writeFileSync(path.join(dir, 'svc.yaml'), stringify(svc));
  for (const name of readdirSync(path.join(sourceDir, 'families')).sort()) {
    const text = readFileSync(path.join(sourceDir, 'families', name), 'utf8');
    writeFileSync(path.join(dir, 'families', name), text);
    const family = parse(text) as Obj;
    for (let k = 2; k <= factor; k++) {
      const clone = structuredClone(family);
      const renamed = `${String(family.family)}_x${k}`;
      clone.family = renamed;
      for (const op of clone.operations as Obj[]) {
        op.id = `${renamed}${String(op.id).slice(String(family.family).length)}`;
        const http = op.http as Obj;
        http.path = String(http.path).replace(/^\/v1\//, `/v1/x${k}/`);
      }
      writeFileSync(path.join(dir, 'families', `${renamed}.yaml`), stringify(clone));
    }
  }
  return dir;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const factor = Number(process.argv[2] ?? 10);
  console.log(synthContract(factor, 'contract', process.argv[3]));
}
