// The write load of the bench scripts: POST /v1/tasks as fast as `connections` allow for `seconds`,
// each request with a new Idempotency-Key, driven by autocannon (bench-writes, write-breakdown,
// profile-writes).
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';

export function taskWrites(url: string, key: string, clientId: string, connections: number, seconds: number): Promise<autocannon.Result> {
  return autocannon({
    url,
    connections,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        path: '/v1/tasks',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'bench write', clientId }),
        setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'idempotency-key': randomUUID() } }),
      },
    ],
  });
}
