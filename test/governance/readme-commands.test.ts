// The README's commands, run verbatim (issue 27). Every command in a ```sh block of README.md is
// either run here or named below as one that CI itself runs (`npm ci`, `npm test`, and the read-only
// compiler commands `npx svc generate --check`, `lint` and `diff`: .ci/run runs them as its own steps
// on a clean clone, and this test checks that it does, so CI does not run them twice). `npm start` is
// started for real in the repository, on a free port and a fresh PGlite directory, and the client
// tour's calls are sent to it with the key and client id its banner prints: the one substitution is
// that port for 8787.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/process.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The sh blocks of a Markdown document, each as its commands (comments dropped, `\` lines joined). */
export function shCommands(doc: string): string[][] {
  const blocks = [...doc.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  return blocks.map((b) =>
    b
      .replace(/\\\n\s*/g, ' ')
      .split('\n')
      .map((l) => l.replace(/\s+#.*$/, '').trim())
      .filter((l) => l !== '' && !l.startsWith('#')),
  );
}

const blocks = shCommands(README);
const all = blocks.flat();
/** Run by CI on a clean clone, not from inside a test run (npm test would run this suite again). */
const RUN_BY_CI = ['npm ci && npm start', 'npm ci && npm test'];
/** Read-only compiler commands: .ci/run runs each as a step (lint as `npx svc lint --require-all`, the same checks and one more). */
const COMPILER = /^npx svc (generate --check|lint|diff)$/;
const VITEST = /^npx vitest run test\/[\w/.-]+$/;
/** `svc init` and the new project's own set-up: run outside the repository by test/e2e/init-project.test.ts. */
const RUN_BY_INIT_TEST = ['npx svc init ../notes-api', 'cd ../notes-api && npm ci && npm test', 'cd ../notes-api && npm start'];
const CLIENT_TOUR = all.filter((c) => c.startsWith('KEY=') || c.startsWith('CLIENT=') || c.startsWith('curl '));

describe('README.md: every command works as written', () => {
  it('names only commands this test runs or CI runs', () => {
    const unknown = all.filter((c) => !RUN_BY_CI.includes(c) && !RUN_BY_INIT_TEST.includes(c) && !COMPILER.test(c) && !VITEST.test(c) && !CLIENT_TOUR.includes(c));
    expect(unknown, 'a README command that no test runs: run it here or in .ci/run').toEqual([]);
    expect(all).toEqual(expect.arrayContaining(RUN_BY_CI));
    expect(CLIENT_TOUR.filter((c) => c.startsWith('curl ')).length).toBeGreaterThanOrEqual(3);
  });

  it("svc init's commands are the ones test/e2e/init-project.test.ts runs", () => {
    expect(all).toEqual(expect.arrayContaining(RUN_BY_INIT_TEST));
    const e2e = readFileSync(path.join(ROOT, 'test/e2e/init-project.test.ts'), 'utf8');
    for (const step of ["'init', dir", "['ci'", "['test']", "['start'"]) expect(e2e, step).toContain(step);
  });

  it('the set-up and compiler commands are ones .ci/run runs on a clean clone', () => {
    // Its commands: the lines that are not comments (a step names its command after its title).
    const lines = readFileSync(path.join(ROOT, '.ci/run'), 'utf8')
      .split('\n')
      .filter((l) => !l.trim().startsWith('#'));
    const runs = (command: string) => lines.some((l) => new RegExp(`(^|\\s)${command.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')}(\\s|$)`).test(l));
    expect(runs('npm ci'), 'npm ci').toBe(true);
    expect(runs('npm test'), 'npm test').toBe(true);
    const compiler = all.filter((c) => COMPILER.test(c));
    expect(compiler.length).toBeGreaterThan(0);
    for (const command of compiler) expect(runs(command), command).toBe(true);
    const scripts = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts;
    expect(scripts.start).toBe('node bin/svc.js serve --demo');
    expect(scripts.test).toMatch(/vitest run/);
  });

  it.each(all.filter((c) => VITEST.test(c)))('%s names a test file that exists', (command) => {
    // Running vitest inside vitest would start a second run of the suite; the file must exist and be
    // found by vitest's own listing.
    const file = command.split(' ').pop()!;
    const listed = execFileSync(process.execPath, ['node_modules/vitest/vitest.mjs', 'list', '--filesOnly', file], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    expect(listed).toContain(file);
  }, 150_000);
});

describe('README.md: the client tour against npm start', () => {
  let server: ChildProcess | undefined;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'svc-readme-'));
  afterAll(async () => {
    // npm start runs node as its child: stop the whole process group, then wait for npm to exit.
    if (server && server.exitCode === null) {
      const exited = new Promise((r) => server!.once('exit', r));
      process.kill(-server.pid!, 'SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('npm start serves, and each call of the tour answers as the README says', async () => {
    const port = await freePort();
    const env: Record<string, string | undefined> = { ...process.env, PORT: String(port), SVC_DATA_DIR: dataDir };
    delete env.DATABASE_URL;
    server = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let banner = '';
    server.stdout!.on('data', (d) => (banner += d));
    server.stderr!.on('data', (d) => (banner += d));
    const deadline = Date.now() + 90_000;
    while (!/Demo client id: \S+/.test(banner)) {
      if (server.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not print its banner:\n${banner}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const key = /^\s+(svc_sk_test_\S+)$/m.exec(banner)![1];
    const client = /Demo client id: (\S+)/.exec(banner)![1];

    const script = CLIENT_TOUR.map((c) => (c.startsWith('KEY=') ? `KEY=${key}` : c.startsWith('CLIENT=') ? `CLIENT=${client}` : c))
      .map((c) => c.replaceAll('localhost:8787', `localhost:${port}`))
      .map((c) => (c.startsWith('curl ') ? `${c}; echo` : c))
      .join('\n');
    const run = spawnSync('bash', ['-e', '-c', script], { encoding: 'utf8', timeout: 60_000 });
    expect(run.status, run.stderr).toBe(0);
    const [meta, task, mcp] = run.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(meta.principal ?? meta, 'GET /v1/meta names the caller').toBeTruthy();
    expect(JSON.stringify(meta)).toContain('tasks:write');
    expect(task, 'a command answers its outcome envelope').toMatchObject({ outcome: 'ran', result: { title: 'Prepare kickoff', clientId: client } });
    expect(task.result.id).toMatch(/^tsk_/);
    expect(mcp.result?.isError ?? false).toBe(false);
    expect(mcp.result.structuredContent).toBeTruthy();
  }, 150_000);
});
