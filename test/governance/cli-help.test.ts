// `svc <command> --help` (and -h) prints that command's usage and exits 0 without doing its work: run
// as bin/svc.js in a temporary directory holding a contract/ (so that a command which did run would
// compile it, write generated/ or handlers/, or open a PGlite database in .svc-data/), nothing
// appears there and the contract is untouched.
import { spawnSync } from 'node:child_process';
import { cpSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMAND_USAGE } from '../../generator/cli.ts';
import { SVC_BIN } from '../support/process.ts';
import { tempDir } from '../generator/helpers.ts';

const tmp = tempDir('cli-help');
afterAll(() => tmp.cleanup());
cpSync('test/fixtures/minimal-contract', path.join(tmp.dir, 'contract'), { recursive: true });

/** Every file below dir, relative, sorted. */
function tree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}
const before = tree(tmp.dir);

function svc(...args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['SVC_DATA_DIR', 'DATABASE_URL', 'SVC_DATABASE_URL']) delete env[name];
  return spawnSync(process.execPath, [SVC_BIN, ...args], { cwd: tmp.dir, env, encoding: 'utf8', timeout: 60_000 });
}

const COMMANDS = ['init', 'generate', 'lint', 'diff', 'release', 'serve', 'seed', 'help'];

describe('svc <command> --help', () => {
  it('has a usage for every command the top-level usage lists', () => {
    expect(Object.keys(COMMAND_USAGE).sort()).toEqual([...COMMANDS].sort());
  });

  it.each(COMMANDS)('svc %s --help prints its usage, one line per flag, and does nothing else', (command) => {
    const run = svc(command, '--help');
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(`Usage: svc ${command}`);
    expect(run.stdout).toBe(`${COMMAND_USAGE[command]}\n`);
    expect(run.stdout).toMatch(/\n {2}-h, --help +print this and exit\n/);
    expect(tree(tmp.dir)).toEqual(before);
  });

  it.each([
    ['generate', '--watch', '-h'],
    ['serve', '--demo', '-h'],
    ['seed', '-h', '--json'],
    ['diff', '--base', 'HEAD', '--help'],
  ])('svc %s … with -h or --help among other flags prints the usage', (...args) => {
    const run = svc(...args);
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(`${COMMAND_USAGE[args[0]]}\n`);
    expect(tree(tmp.dir)).toEqual(before);
  });

  it('svc help <command> prints that usage; svc --help the list of commands', () => {
    const one = svc('help', 'release');
    expect(one.status).toBe(0);
    expect(one.stdout).toBe(`${COMMAND_USAGE.release}\n`);
    const all = svc('--help');
    expect(all.status).toBe(0);
    for (const command of COMMANDS.filter((c) => c !== 'help')) expect(all.stdout).toContain(`\n  ${command}`);
    expect(all.stdout).toContain('svc <command> --help');
    expect(tree(tmp.dir)).toEqual(before);
  });
});
