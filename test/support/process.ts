// Helpers for tests that run `svc serve` as real processes (crash, multi-process, shared rate limit).
import { createServer } from 'node:net';

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
