// Helpers for tests that run `svc serve` as real processes (crash, multi-process, shared rate limit).
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/** A TCP port that was free a moment ago on 127.0.0.1 (for a child process that must be told its port). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** bin/svc.js, as the tests run it: `node bin/svc.js …` (the production build when fresh, else tsx). */
export const SVC_BIN = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));

/** Runs `svc <args>` to its end: resolves with its stdout, rejects with its stderr on a non-zero exit. */
export function runSvc(args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SVC_BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`svc ${args.join(' ')} exited ${code}: ${err}`))));
  });
}

/**
 * Starts `svc serve --port <port>` and resolves once /v1/health answers below 500 (60 s at most).
 * Its stderr is kept for the error when it exits first or never answers (then it is killed).
 */
export async function serveSvc(env: Record<string, string>, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [SVC_BIN, 'serve', '--port', String(port)], {
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`svc serve exited ${child.exitCode}: ${err}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/v1/health`);
      await res.arrayBuffer();
      if (res.status < 500) return child;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill('SIGKILL');
  throw new Error(`svc serve did not answer within 60 s: ${err}`);
}

/** Sends `signal` and resolves once the process has exited (at once when it already has). */
export function stopped(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

/** The first answer of `url` from a server that is still opening its port (5 s at most). */
export async function firstAnswer(url: string): Promise<Response> {
  for (let i = 0; i < 500; i++) {
    try {
      return await fetch(url);
    } catch {
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  throw new Error(`${url} never answered`);
}
