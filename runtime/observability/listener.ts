// The metrics listener (SVC_METRICS_PORT): a plain node:http server apart from the public port,
// answering GET /metrics in the Prometheus text format and nothing else. Bound to loopback unless
// SVC_METRICS_HOST says otherwise; with SVC_METRICS_TOKEN, only `Authorization: Bearer <token>`.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import type { Registry } from 'prom-client';

export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

function tokenMatches(header: string | undefined, token: string): boolean {
  const given = Buffer.from(/^Bearer\s+(.+)$/i.exec(header ?? '')?.[1]?.trim() ?? '');
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export async function startMetricsListener(registry: Registry, options: { port: number; host: string; token: string | null }): Promise<MetricsListener> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const answer = (status: number, text: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', ...headers });
      res.end(text);
    };
    if (path !== '/metrics') return answer(404, 'Not found: this listener serves GET /metrics only.\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return answer(405, 'Method not allowed: GET /metrics.\n', { Allow: 'GET, HEAD' });
    if (options.token && !tokenMatches(req.headers.authorization, options.token)) {
      return answer(401, 'Unauthorized: send Authorization: Bearer <SVC_METRICS_TOKEN>.\n', { 'WWW-Authenticate': 'Bearer' });
    }
    registry.metrics().then(
      (text) => answer(200, req.method === 'HEAD' ? '' : text, { 'Content-Type': registry.contentType }), // not a contract limit
      () => answer(500, 'The metrics could not be collected.\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
