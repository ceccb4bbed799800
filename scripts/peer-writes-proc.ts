// scripts/peer-writes.mjs in its own process, ready when GET /v1/meta answers.
import { spawn } from 'node:child_process';
import { freePort } from '../test/support/process.ts';
import type { Proc } from './bench-procs.ts';

const PEER = new URL('./peer-writes.mjs', import.meta.url).pathname;

/** `prepare`: named statements (svc on a session connection) or unnamed (svc behind a transaction pooler). */
export async function startPeer(databaseUrl: string, prepare: boolean): Promise<Proc> {
  const port = await freePort();
  const started = performance.now();
  const env = { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), PREPARE: String(prepare) };
  const child = spawn(process.execPath, [PEER], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`peer-writes exited ${child.exitCode}`);
    const ok = await fetch(`${url}/v1/meta`).then((r) => r.ok, () => false);
    if (ok) break;
    if (performance.now() - started > 30_000) throw new Error('peer-writes did not answer within 30 s');
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    url,
    pid: child.pid!,
    startupMs: performance.now() - started,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
