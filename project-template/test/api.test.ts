// End to end: `svc serve --demo` on a free port (PGlite in a temporary directory, or PostgreSQL when
// DATABASE_URL is set), called over REST and over MCP (the MCP SDK's own client) with the demo key
// it prints.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

let server: ChildProcess;
let baseUrl = '';
let key = '';
const dataDir = mkdtempSync(path.join(tmpdir(), 'notes-api-'));

beforeAll(async () => {
  server = spawn(process.execPath, ['node_modules/svc/bin/svc.js', 'serve', '--demo', '--port', '0'], {
    env: { ...process.env, SVC_DATA_DIR: dataDir, SVC_BASE_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  server.stderr!.on('data', (d) => (err += d));
  await new Promise<void>((resolve, reject) => {
    server.once('exit', (code) => reject(new Error(`svc serve exited with ${code}:\n${out}\n${err}`)));
    server.stdout!.on('data', (d) => {
      out += d;
      const url = /svc is serving (\S+)/.exec(out);
      const secret = /Operator API key[^\n]*\n\s+(\S+)/.exec(out);
      if (url && secret) {
        baseUrl = url[1]!;
        key = secret[1]!;
        resolve();
      }
    });
  });
});

afterAll(async () => {
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
  }
  rmSync(dataDir, { recursive: true, force: true });
});

const auth = () => ({ Authorization: `Bearer ${key}` });
const write = () => ({ ...auth(), 'Content-Type': 'application/json', 'Idempotency-Key': crypto.randomUUID() });

describe('REST', () => {
  it('creates a note and lists it', async () => {
    const created = await fetch(`${baseUrl}/v1/notes`, { method: 'POST', headers: write(), body: JSON.stringify({ body: 'Hello over REST' }) });
    expect(created.status).toBe(201);
    // A command answers its result in an envelope (with the operation's status, and more).
    const note = ((await created.json()) as { result: { id: string; body: string } }).result;
    expect(note.body).toBe('Hello over REST');
    const list = await fetch(`${baseUrl}/v1/notes`, { headers: auth() });
    expect(list.status).toBe(200);
    const page = (await list.json()) as { items: { id: string }[] };
    expect(page.items.map((n) => n.id)).toContain(note.id);
  });

  it('answers bad input with a problem document', async () => {
    const res = await fetch(`${baseUrl}/v1/notes`, { method: 'POST', headers: write(), body: JSON.stringify({ body: '' }) });
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
  });

  it('refuses a call without a credential', async () => {
    expect((await fetch(`${baseUrl}/v1/notes`)).status).toBe(401);
  });
});

describe('MCP', () => {
  it('lists the tools and calls them', async () => {
    const client = new Client({ name: 'notes-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: auth() } }));
    try {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name).sort();
      expect(names).toEqual(['svc.notes.create', 'svc.notes.list']);
      const created = await client.callTool({ name: 'svc.notes.create', arguments: { body: 'Hello over MCP', idempotencyKey: crypto.randomUUID() } });
      expect(created.isError).toBeFalsy();
      const listed = await client.callTool({ name: 'svc.notes.list', arguments: {} });
      // A tool answers { outcome, result }: result is what REST answers (here a page of notes).
      const items = (listed.structuredContent as { outcome: string; result: { items: { body: string }[] } }).result.items;
      expect(items.map((n) => n.body)).toContain('Hello over MCP');
    } finally {
      await client.close();
    }
  });
});
