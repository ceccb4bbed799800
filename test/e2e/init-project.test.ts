// `svc init` end to end, outside this repository (issue 42): a new project in a temporary directory,
// then what its README says works there: `npm ci && npm test` (its own type-check and its REST + MCP
// tests) and `npm start` answering REST and MCP with the demo key it prints. On PostgreSQL
// (DATABASE_URL) the project runs on a fresh empty database of its own: its one migration history,
// svc's machinery tables and its `notes`, applied at start.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SVC_BIN } from '../support/process.ts';
import { freshPostgresDatabase } from '../support/db.ts';

const root = mkdtempSync(path.join(tmpdir(), 'svc-init-e2e-'));
const dir = path.join(root, 'notes-api');
let database: { url: string; drop(): Promise<void> } | null = null;
const env: NodeJS.ProcessEnv = { ...process.env };
// The project's own runs: nothing of this suite's environment but the database (a fresh one, below).
for (const name of ['DATABASE_URL', 'SVC_DATA_DIR', 'SVC_BASE_URL', 'PORT', 'VITEST', 'VITEST_POOL_ID', 'VITEST_WORKER_ID', 'NODE_ENV', 'SVC_TEST_PASS']) delete env[name];

beforeAll(async () => {
  if (process.env.DATABASE_URL) {
    database = await freshPostgresDatabase(process.env.DATABASE_URL, { empty: true });
    env.DATABASE_URL = database.url;
  }
});

afterAll(async () => {
  await database?.drop();
  rmSync(root, { recursive: true, force: true });
});

function run(command: string, args: string[], cwd: string) {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: 300_000 });
  return { status: result.status, output: `${result.stdout}\n${result.stderr}` };
}

describe('svc init DIR, outside the repository', () => {
  it('creates the project with its lock file', () => {
    const init = run(process.execPath, [SVC_BIN, 'init', dir], root);
    expect(init.status, init.output).toBe(0);
    expect(init.output).toContain('npm install --package-lock-only');
  });

  it('npm ci && npm test pass there', () => {
    const ci = run('npm', ['ci', '--no-audit', '--no-fund'], dir);
    expect(ci.status, ci.output).toBe(0);
    const test = run('npm', ['test'], dir);
    expect(test.status, test.output).toBe(0);
    // eslint-disable-next-line no-control-regex
    expect(test.output.replace(/\x1b\[[0-9;]*m/g, '')).toMatch(/Tests\s+\d+ passed/);
  });

  describe('npm start', () => {
    let server: ChildProcess | null = null;
    let base = '';
    let key = '';

    beforeAll(async () => {
      // npm runs svc as its child: a process group of their own, stopped as one.
      server = spawn('npm', ['start', '--', '--port', '0'], { cwd: dir, env: { ...env, SVC_DATA_DIR: path.join(root, 'data') }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      let banner = '';
      server.stderr!.on('data', (d) => (banner += d));
      await new Promise<void>((resolve, reject) => {
        server!.once('exit', (code) => reject(new Error(`npm start exited (${code}):\n${banner}`)));
        server!.stdout!.on('data', (d) => {
          banner += d;
          const url = /svc is serving (\S+)/.exec(banner);
          const secret = /Operator API key[^\n]*\n\s+(\S+)/.exec(banner);
          if (url && secret) {
            base = url[1]!;
            key = secret[1]!;
            resolve();
          }
        });
      });
      expect(banner).toContain(`curl -H "Authorization: Bearer ${key}" ${base}/v1/notes`);
      expect(banner).not.toContain('/v1/meta');
    }, 120_000);

    afterAll(async () => {
      if (server && server.exitCode === null) {
        const exited = new Promise((resolve) => server!.once('exit', resolve));
        process.kill(-server.pid!, 'SIGTERM');
        await exited;
      }
    });

    it('answers REST with the printed key (the seed module’s welcome note included)', async () => {
      const res = await fetch(`${base}/v1/notes`, { headers: { Authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
      const page = (await res.json()) as { items: { id: string }[] };
      expect(page.items.map((n) => n.id)).toContain('note_welcome');
    });

    it('answers MCP with the printed key', async () => {
      const client = new Client({ name: 'init-e2e', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
      try {
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name).sort()).toEqual(['svc.notes.create', 'svc.notes.list']);
        const created = await client.callTool({ name: 'svc.notes.create', arguments: { body: 'from the svc suite', idempotencyKey: crypto.randomUUID() } });
        expect(created.isError ?? false).toBe(false);
      } finally {
        await client.close();
      }
    });
  });
});
