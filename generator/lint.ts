// svc lint: the contract checks, then redocly lint on the emitted OpenAPI document.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { checkContract } from './check.ts';
import { loadContract } from './load.ts';
import { formatDiagnostic, sortDiagnostics } from './source.ts';

export interface LintResult {
  contractErrors: string[];
  redoclyStatus: number;
}

function redoclyBin(): string {
  const require = createRequire(import.meta.url);
  const pkgPath = require.resolve('@redocly/cli/package.json');
  const pkg = require(pkgPath) as { bin: string | Record<string, string> };
  const bin = typeof pkg.bin === 'string' ? pkg.bin : (pkg.bin.redocly ?? Object.values(pkg.bin)[0]);
  return path.join(path.dirname(pkgPath), bin);
}

export function runRedocly(openapiFile: string, config = 'redocly.yaml'): number {
  const args = [redoclyBin(), 'lint', openapiFile, '--format', 'stylish'];
  if (existsSync(config)) args.push('--config', config);
  const run = spawnSync(process.execPath, args, { stdio: 'inherit', env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } });
  return run.status ?? 1;
}

export function lint(contractDir: string, openapiFile: string): LintResult {
  const diagnostics = sortDiagnostics(checkContract(loadContract(contractDir)));
  const contractErrors = diagnostics.map(formatDiagnostic);
  const redoclyStatus = existsSync(openapiFile) ? runRedocly(openapiFile) : -1;
  return { contractErrors, redoclyStatus };
}
