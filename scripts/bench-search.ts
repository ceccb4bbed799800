// search.query at scale: `svc serve` in its own process (PGlite in a temporary data directory, the
// demo seed) over `rows` extra searchable rows (default 100,000) spread over tasks, projects, leads,
// accounts, contacts and opportunities of three clients and the platform, their text drawn from a
// small vocabulary so that common words match thousands of rows. One caller (the demo operator key)
// asks for the first page (50 hits) one request at a time; p50 and p99 per kind of query.
// Standalone: `node --import tsx scripts/bench-search.ts [--rows N]`. Never asserted in a test.
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openDatabase } from '../runtime/data/client.ts';
import { loadStats, runLoad, seedDemo, type LoadStats } from './bench-load.ts';
import { MIGRATIONS_FOLDER } from '../bin/paths.ts';

const BIN = new URL('../bin/svc.js', import.meta.url).pathname;

const WORDS = [
  'benefits', 'enrollment', 'renewal', 'carrier', 'census', 'portal', 'onboarding', 'review', 'contract', 'pension',
  'dental', 'vision', 'wellness', 'payroll', 'compliance', 'audit', 'broker', 'clinic', 'fleet', 'retiree',
  'invoice', 'deadline', 'kickoff', 'training', 'migration', 'import', 'export', 'summary', 'premium', 'coverage',
  'claims', 'eligibility', 'waiver', 'dependent', 'spouse', 'deductible', 'network', 'provider', 'pharmacy', 'telehealth',
  'survey', 'newsletter', 'reminder', 'webinar', 'quote', 'proposal', 'pricing', 'discount', 'contribution', 'zephyrine',
];

/** Inserts `rows` rows with generated text (set-based SQL: seconds, not minutes). */
async function fill(dataDir: string, rows: number): Promise<void> {
  const database = await openDatabase({ databaseUrl: null, dataDir, migrationsFolder: MIGRATIONS_FOLDER });
  try {
    const words = `array[${WORDS.map((w) => `'${w}'`).join(',')}]`;
    // The n-th word of the vocabulary, spread pseudo-randomly (a different multiplier per slot).
    const word = (k: number) => `(${words})[1 + ((g * ${k}) % ${WORDS.length})]`; // not a contract limit
    const client = `(array['cli_demo_acme','cli_demo_globex','cli_demo_initech',null])[1 + g % 4]`;
    const share = (part: number) => Math.floor(rows * part);
    const parts: [string, number][] = [
      [`insert into tasks (id, client_id, title, description, status, priority, created_by)
        select 'tsk_bench_' || g, ${client}, ${word(7)} || ' ' || ${word(13)} || ' ' || ${word(31)}, ${word(17)} || ' ' || ${word(37)} || ' notes for the team', 'open', 'normal', 'usr_demo_owner'
        from generate_series(1, $N) g`, share(0.4)],
      [`insert into projects (id, client_id, name, description, stage, status)
        select 'prj_bench_' || g, coalesce(${client}, 'cli_demo_acme'), ${word(11)} || ' ' || ${word(19)}, ${word(23)} || ' rollout', 'discovery', 'active'
        from generate_series(1, $N) g`, share(0.1)],
      [`insert into leads (id, client_id, title, company, source, status, currency)
        select 'led_bench_' || g, ${client}, ${word(29)} || ' ' || ${word(41)}, 'Company ' || g, 'referral', 'new', 'USD'
        from generate_series(1, $N) g`, share(0.15)],
      [`insert into accounts (id, client_id, name, domain, industry, status)
        select 'acc_bench_' || g, ${client}, ${word(43)} || ' holdings ' || g, 'bench' || g || '.example', 'Insurance', 'prospect'
        from generate_series(1, $N) g`, share(0.1)],
      [`insert into contacts (id, client_id, name, email, phone, phone_digits, job_title)
        select 'con_bench_' || g, ${client}, 'Person ' || g, 'person' || g || '@bench.example', '+1 555 ' || g, '1555' || g, ${word(47)} || ' manager'
        from generate_series(1, $N) g`, share(0.15)],
      [`insert into opportunities (id, client_id, name, stage, currency)
        select 'opp_bench_' || g, ${client}, ${word(53)} || ' ' || ${word(59)}, 'qualification', 'USD'
        from generate_series(1, $N) g`, rows - share(0.4) - share(0.1) - share(0.15) - share(0.1) - share(0.15)],
    ];
    for (const [q, n] of parts) if (n > 0) await database.execute(q.replace('$N', String(n)));
    await database.execute('analyze');
  } finally {
    await database.close();
  }
}

function post(port: number, credential: string, body: unknown): Promise<{ status: number; items: number }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request(
      { host: '127.0.0.1', port, method: 'POST', path: '/v1/search', headers: { authorization: `Bearer ${credential}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode ?? 0, items: res.statusCode === 200 ? (JSON.parse(text) as { items: unknown[] }).items.length : 0 });
          } catch (err) {
            reject(err);
          }
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

export interface SearchBenchLine extends LoadStats {
  label: string;
  query: string;
  items: number;
}

export async function benchSearch(options: { rows?: number; requests?: number; print: boolean }): Promise<SearchBenchLine[]> {
  const rows = options.rows ?? 100_000;
  const requests = options.requests ?? 200;
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-search-'));
  const port = 18_000 + Math.floor(Math.random() * 1000);
  const env = { ...process.env, SVC_DATA_DIR: dataDir, DATABASE_URL: '', PORT: String(port), SVC_RATE_LIMIT_PER_MINUTE: '10000000' };
  let server: ReturnType<typeof spawn> | null = null;
  try {
    const { operatorKey } = await seedDemo(env);
    const filling = performance.now();
    await fill(dataDir, rows);
    if (options.print) console.log(`${rows} rows inserted and indexed in ${((performance.now() - filling) / 1000).toFixed(1)} s`);
    server = spawn(process.execPath, [BIN, 'serve', '--port', String(port)], { env, stdio: 'ignore' });
    for (let i = 0; ; i++) {
      try {
        if ((await post(port, operatorKey, { query: 'x' })).status === 200) break;
      } catch {
        if (i > 300) throw new Error('svc serve did not start');
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const cases: [string, string][] = [
      ['one common word', 'benefits'],
      ['short prefix', 'ben'],
      ['two words', 'dental survey'],
      ['one record', 'company 4242'],
      ['no match', 'qqqzzzxxx'],
    ];
    const lines: SearchBenchLine[] = [];
    for (const [label, query] of cases) {
      let items = 0;
      const once = async () => {
        const res = await post(port, operatorKey, { query });
        if (res.status !== 200) throw new Error(`search "${query}" answered ${res.status}`);
        items = res.items;
      };
      await runLoad(Math.max(5, Math.floor(requests / 10)), 1, once); // warm-up
      const stats = loadStats([await runLoad(requests, 1, once)]);
      lines.push({ label, query, items, ...stats });
      if (options.print) {
        console.log(`search ${rows} rows, ${label.padEnd(16)} "${query}" (${items} on the page): p50 ${stats.p50Ms.toFixed(1)} ms  p99 ${stats.p99Ms.toFixed(1)} ms`);
      }
    }
    return lines;
  } finally {
    if (server) {
      server.kill('SIGTERM');
      await new Promise((r) => server!.once('exit', r));
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const at = process.argv.indexOf('--rows');
  const rows = at > 0 ? Number(process.argv[at + 1]) : 100_000;
  await benchSearch({ rows, print: true });
  process.exit(0);
}
