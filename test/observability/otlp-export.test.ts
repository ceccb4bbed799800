// Tracing switched on the standard way: `svc serve` in its own process with OTEL_EXPORTER_OTLP_ENDPOINT
// pointing at a receiver in this test, which reads what the OTLP/HTTP exporter posts to /v1/traces
// (JSON). The request's server span arrives under the caller's trace id, named by the response's
// traceparent, with OTEL_SERVICE_NAME as the resource's service.name. Embedded PGlite.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, runSvc, serveSvc, stopped } from '../support/process.ts';
import { preparedDataDir } from '../support/prepared.ts';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: Record<string, unknown> }[];
}
interface Export {
  path: string;
  resource: Record<string, unknown>;
  spans: OtlpSpan[];
}

const exports: Export[] = [];
let collector: Server;
let collectorUrl: string;
let child: ChildProcess;
let url: string;
let operatorKey: string;
let dataDir: string;

beforeAll(async () => {
  collector = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const parsed = JSON.parse(body) as { resourceSpans: { resource: { attributes: OtlpSpan['attributes'] }; scopeSpans: { spans: OtlpSpan[] }[] }[] };
      for (const rs of parsed.resourceSpans) {
        const resource = Object.fromEntries(rs.resource.attributes.map((a) => [a.key, Object.values(a.value)[0]]));
        exports.push({ path: req.url ?? '', resource, spans: rs.scopeSpans.flatMap((s) => s.spans) });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  collectorUrl = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  dataDir = await preparedDataDir(mkdtempSync(join(tmpdir(), 'svc-otlp-')));
  const env = { DATABASE_URL: '', SVC_DATA_DIR: dataDir };
  operatorKey = (JSON.parse((await runSvc(['seed', '--json'], env)).trim().split('\n').at(-1)!) as { operatorKey: string }).operatorKey;
  const port = await freePort();
  child = await serveSvc({ ...env, OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl, OTEL_BSP_SCHEDULE_DELAY: '100', OTEL_SERVICE_NAME: 'svc-otlp-test' }, port);
  url = `http://127.0.0.1:${port}`;
}, 120_000);
afterAll(async () => {
  if (child) await stopped(child, 'SIGTERM');
  await new Promise<void>((resolve) => collector?.close(() => resolve()));
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('exports the request’s spans over OTLP/HTTP to <endpoint>/v1/traces, under the caller’s trace', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const caller = '00f067aa0ba902b7';
    const res = await fetch(`${url}/v1/meta`, { headers: { authorization: `Bearer ${operatorKey}`, traceparent: `00-${traceId}-${caller}-01` } });
    expect(res.status).toBe(200);
    const [, respTrace, respSpan] = res.headers.get('traceparent')!.split('-');
    expect(respTrace).toBe(traceId);

    let server: OtlpSpan | undefined;
    let from: Export | undefined;
    for (let i = 0; i < 100 && !server; i++) {
      await new Promise((r) => setTimeout(r, 100));
      from = exports.find((e) => e.spans.some((s) => s.traceId === traceId && s.name === 'GET /v1/meta'));
      server = from?.spans.find((s) => s.traceId === traceId && s.name === 'GET /v1/meta');
    }
    expect(server, 'the server span reached the collector').toBeDefined();
    expect(from!.path).toBe('/v1/traces');
    expect(from!.resource['service.name']).toBe('svc-otlp-test');
    expect(server!.spanId).toBe(respSpan);
    expect(server!.parentSpanId).toBe(caller);
    expect(server!.kind).toBe(2); // SPAN_KIND_SERVER
    const attributes = Object.fromEntries(server!.attributes.map((a) => [a.key, Object.values(a.value)[0]]));
    expect(attributes).toMatchObject({ 'http.request.method': 'GET', 'http.route': '/v1/meta', 'svc.operation': 'meta.get' });
    expect(Number(attributes['http.response.status_code'])).toBe(200);
  });
});
