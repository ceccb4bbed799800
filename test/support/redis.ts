// Whether Redis answers PING at url (the Redis suites and the scale-out bench skip without it).
import { createConnection } from 'node:net';

export function redisAnswers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const s = createConnection({ host: hostname, port: Number(port || 6379) });
    s.setTimeout(1_000);
    s.on('connect', () => s.write('PING\r\n'));
    s.on('data', (d) => {
      s.destroy();
      resolve(String(d).startsWith('+PONG'));
    });
    s.on('error', () => resolve(false));
    s.on('timeout', () => {
      s.destroy();
      resolve(false);
    });
  });
}
