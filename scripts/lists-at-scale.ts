// Lists at scale on PostgreSQL (issue 16): seeds a fresh database with the demo workspace plus N tasks
// (default 1,000,000) and rows of every other family a list operation reads, in proportion to N,
// with set-based INSERT … SELECT generate_series. The ratios (N = tasks; at least 1 of each):
//   clients N/1,000 (min 10)      projects N/100 (each client ~10)   users N/1,000 (min 10, 1 in 10 an operator)
//   task_comments N/10 (N/1,000 on one "hot" task of the demo client, the rest spread)
//   events (outbox) N/2 (the outbox keeps limits.eventRetentionDays, 30 days: the recent share of the history)
//   memberships N/100 (a tenth on the demo client)   api_keys N/1,000 + N/10,000 of the demo owner's
//   oauth_grants N/1,000 + N/20,000 of the demo owner's   approvals N/100   operations N/100
//   pipeline_runs N/100, with 3 steps (pipeline_steps) and 10 events (pipeline_events) each
//   reviews N/100   intake_records N/100   uploads and files N/100 each
//   accounts, contacts, leads, opportunities N/100 each (CRM; 1 in 10 a platform row)
//   campaigns N/1,000 with N/10 campaign_recipients   notifications N/10 (a tenth the demo owner's)
//   webhook_endpoints N/10,000 (min 5) with N/10 webhook_deliveries (a tenth on one endpoint of the demo client)
// Every client-bound row belongs to client slot g % (clients + 1), slot 0 being the demo client (the
// service key's), so every family's rows of one client agree (a task's project is of the task's
// client). 1 in 100 tasks is internal (no client). Rows are in final states (no queued run, no pending
// delivery, no scanning file, invitations not yet due to expire; the webhook fan-out mark at the last
// event), so a `svc serve` on the database has no background work to do, and everything is within the
// event retention, so nothing is purged under load.
//
// Then (explain) it calls every list route through the real server in process (responses checked
// against the contract: SVC_VALIDATE_RESPONSES), including the routes with path parameters (filled
// with a seeded row that has many children) and a project's tasks, as the unbound operator key (every
// client) and the demo service key (one client), first page and the next page by cursor, and runs
// EXPLAIN (ANALYZE, BUFFERS) on each statement the call issued (an UPDATE in a rolled-back
// transaction). One line per statement: operation, caller, page, execution ms, shared buffers
// hit/read, the plan's scan and sort nodes; a Seq Scan or Sort over more than a few thousand rows, or
// an index scan that filters that many away, is flagged with `<<`, and the flagged statements are
// listed with their SQL at the end.
// With load, it serves that database from `svc serve` in its own process and drives
// GET /v1/tasks?pageSize=50 with autocannon at an open rate of 1,000 requests a second (8 connections,
// 10 s after a 3 s warm-up) as each caller: the achieved rate, p50 and p99 (target: p99 < 10 ms).
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node --import tsx scripts/lists-at-scale.ts [--tasks 1000000] [--keep] [--load] [--no-explain]
// The database is svc_test_<random> on that server, dropped at the end unless --keep.
// `npm run bench` calls listsAtScale() with explain off (the load figures only).
import { pathToFileURL } from 'node:url';
import postgres from 'postgres';
import { MIGRATIONS_FOLDER } from '../bin/paths.ts';

export interface ListsAtScaleOptions {
  /** A PostgreSQL server URL: a fresh database is created on it (and dropped unless keep). */
  databaseUrl: string;
  /** Tasks to seed (default 1,000,000); the other families in proportion. */
  tasks?: number;
  /** EXPLAIN (ANALYZE, BUFFERS) every list operation's statements (the CLI's job). */
  explain: boolean;
  /** Drive GET /v1/tasks?pageSize=50 at `rate` req/s (default 1,000) from `svc serve` in its own process. */
  load: { seconds: number; rate?: number; connections?: number; warmUpSeconds?: number } | null;
  /** Keep the database (default: dropped at the end). */
  keep?: boolean;
  /** Print progress, the EXPLAIN lines and the load lines. */
  print: boolean;
}

export interface LoadFigure {
  caller: 'operator' | 'service';
  askedRate: number;
  /** Mean requests a second autocannon completed. */
  rps: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  /** rps within 3% of the asked rate. */
  achieved: boolean;
}

export interface ExplainLine {
  operation: string;
  caller: string;
  page: number;
  execMs: number;
  hit: number;
  read: number;
  plan: string;
  /** Why the plan is flagged (empty: not flagged). */
  flags: string[];
  sql: string;
  params: unknown[];
}

export interface ListsAtScaleResult {
  database: string;
  tasks: number;
  seedSeconds: number;
  /** Rows per seeded table after seeding (the demo workspace included). */
  counts: Record<string, number>;
  explained: ExplainLine[];
  /** Lists (operation, caller, page) that did not answer 200. */
  failures: string[];
  load: LoadFigure[];
  /** What the load ran against. */
  loadSetup: { connections: number; seconds: number; warmUpSeconds: number } | null;
}

/** A statement touching more rows than this in a Seq Scan, Sort or filter is flagged. Not a contract limit. */
const FLAG_ROWS = 5000;

interface Seeded {
  /** Path parameters filled with a seeded row that has many children. */
  pathParams: Record<string, string>;
  /** A project of the demo client with many tasks. */
  hotProjectId: string;
}

export async function listsAtScale(options: ListsAtScaleOptions): Promise<ListsAtScaleResult> {
  const N = Math.floor(options.tasks ?? 1_000_000);
  if (!Number.isFinite(N) || N < 100) throw new Error(`tasks must be a number of at least 100 (got ${options.tasks})`);
  const say = (s: string) => {
    if (options.print) console.log(s);
  };
  const { freshPostgresDatabase } = await import('../test/support/db.ts');
  const { openDatabase } = await import('../runtime/data/client.ts');
  const { loadConfig } = await import('../runtime/config.ts');
  const { startServer } = await import('../runtime/server.ts');
  const { svcRegistry } = await import('../bin/wiring.ts');

  const fresh = await freshPostgresDatabase(options.databaseUrl);
  const dbName = new URL(fresh.url).pathname.slice(1);
  say(`database ${dbName} (${options.keep ? 'kept' : 'dropped at the end'})`);
  const raw = postgres(fresh.url, { max: 1, onnotice: () => {} });
  const result: ListsAtScaleResult = { database: dbName, tasks: N, seedSeconds: 0, counts: {}, explained: [], failures: [], load: [], loadSetup: null };
  try {
    const database = await openDatabase({ databaseUrl: fresh.url, dataDir: '', migrationsFolder: MIGRATIONS_FOLDER });
    const registry = svcRegistry();
    let server: import('../runtime/server.ts').RunningServer<import('../demo/seed.ts').SeedCredentials> | null = null;
    // The demo keys' secrets exist only in memory (the seed stores hashes): the load phase reuses them.
    let keys: { operatorKey: string; serviceKey: string } | null = null;
    try {
      const config = loadConfig(
        { ...process.env, DATABASE_URL: fresh.url, PORT: '0', SVC_RATE_LIMIT_PER_MINUTE: '100000000', SVC_WORKERS: 'false', SVC_VALIDATE_RESPONSES: 'true' },
        {},
      );
      server = await startServer({ config, registry, database, seedDemo: (await import('../demo/workspace.ts')).seedDemoWorkspace, hostname: '127.0.0.1', webhookWorker: false });
      const creds = server.credentials!;
      keys = { operatorKey: creds.operatorKey, serviceKey: creds.serviceKey };

      const started = performance.now();
      const ids = { clientId: creds.clientId, operatorKeyId: creds.operatorKeyId, serviceKeyId: creds.serviceKeyId, operatorUserId: creds.operatorUserId };
      if (Object.values(ids).some((v) => typeof v !== 'string')) throw new Error('the demo seed did not name its keys and owner');
      const seeded = await seedAtScale(raw, N, ids as Creds, registry, say);
      result.seedSeconds = (performance.now() - started) / 1000;
      result.counts = await countRows(raw);
      say(`seeded ${N.toLocaleString('en')} tasks and the other families in ${result.seedSeconds.toFixed(1)} s (vacuum and analyze included)`);
      say(
        Object.entries(result.counts)
          .map(([t, n]) => `${t} ${n.toLocaleString('en')}`)
          .join(', '),
      );

      if (options.explain) {
        const callers = [
          { who: 'operator', kind: 'operator', key: creds.operatorKey },
          { who: 'service', kind: 'service_account', key: creds.serviceKey },
        ] as const;
        const explained = await explainLists(raw, server.url, registry, callers, seeded, say);
        result.explained = explained.lines;
        result.failures = explained.failures;
      }
      await server.close();
      server = null;
    } finally {
      if (server) await server.close().catch(() => undefined);
      await database.close();
    }
    if (options.load) {
      if (!keys) throw new Error('the demo seed issued no keys');
      result.loadSetup = { connections: options.load.connections ?? 8, seconds: options.load.seconds, warmUpSeconds: options.load.warmUpSeconds ?? 3 };
      result.load = await underLoad(fresh.url, keys, options.load, say);
    }
  } finally {
    await raw.end({ timeout: 5 });
    if (!options.keep) await fresh.drop();
  }
  return result;
}

const CALLER_LABELS: Record<LoadFigure['caller'], string> = { operator: 'operator key (every client)', service: 'service key (one client)' };

/** The load line of one caller (the CLI and `npm run bench` print the same). */
export function loadLine(f: LoadFigure): string {
  const asked = f.askedRate.toLocaleString('en');
  return `${CALLER_LABELS[f.caller].padEnd(28)} ${f.rps.toFixed(0).padStart(5)} req/s of ${asked} asked (${f.achieved ? 'achieved' : 'NOT achieved'})  p50 ${f.p50Ms.toFixed(1)} ms  p99 ${f.p99Ms.toFixed(1)} ms (target p99 < 10 ms at ${asked} req/s)${f.non2xx || f.errors ? `  ${f.non2xx} non-2xx, ${f.errors} errors` : ''}`;
}

/**
 * `npm run bench`'s lists-at-scale lines: a fresh database with `tasks` tasks and the other families
 * (dropped after), no EXPLAIN, GET /v1/tasks?pageSize=50 at 1,000 req/s per caller. Throws on failure.
 */
export async function listsAtScaleBenchLines(databaseUrl: string, tasks: number): Promise<string[]> {
  const seconds = 10;
  const r = await listsAtScale({ databaseUrl, tasks, explain: false, load: { seconds }, print: false });
  const setup = r.loadSetup!;
  return [
    `GET /v1/tasks?pageSize=50 from ${r.tasks.toLocaleString('en')} tasks (and the other families in proportion: scripts/lists-at-scale.ts), seeded in ${r.seedSeconds.toFixed(0)} s;` +
      ` svc serve in its own process, autocannon at an open 1,000 req/s, ${setup.connections} connections, ${setup.seconds} s after ${setup.warmUpSeconds} s of warm-up, per caller`,
    ...r.load.map(loadLine),
  ];
}

// ------------------------------------------------------------------------------------------------
// Seeding

type Sql = postgres.Sql;
type Creds = { clientId: string; operatorKeyId: string; serviceKeyId: string; operatorUserId: string };
type Registry = ReturnType<(typeof import('../bin/wiring.ts'))['svcRegistry']>;

const SEEDED_TABLES = [
  'clients', 'users', 'memberships', 'api_keys', 'oauth_grants', 'projects', 'tasks', 'task_comments', 'approvals',
  'operations', 'events', 'reviews', 'intake_records', 'uploads', 'files', 'file_links', 'accounts', 'contacts', 'leads', 'opportunities',
  'campaigns', 'campaign_recipients', 'notifications', 'pipeline_runs', 'pipeline_steps', 'pipeline_events',
  'webhook_endpoints', 'webhook_deliveries',
] as const;

async function countRows(raw: Sql): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of SEEDED_TABLES) {
    const [row] = await raw.unsafe(`select count(*)::bigint as n from ${t}`);
    out[t] = Number((row as unknown as { n: string }).n);
  }
  return out;
}

async function seedAtScale(raw: Sql, N: number, creds: Creds, registry: Registry, say: (s: string) => void): Promise<Seeded> {
  const part = (d: number, min = 1) => Math.max(min, Math.floor(N / d));
  const C = part(1000, 10); // clients
  const S = C + 1; // client slots: 0 is the demo client
  const P = part(100); // projects
  const K = Math.floor(P / S); // projects per client slot (0: tasks have no project)
  const U = part(1000, 10); // users
  const E = part(2); // outbox events
  const demo = creds.clientId;
  const owner = creds.operatorUserId;
  // Timestamps: row g of a family is g steps old; the span stays within the event retention (30 days).
  const step = Math.min(1, (20 * 86_400) / N); // seconds per task
  const ago = (seconds: string) => `now() - (${seconds}) * interval '1 second'`;

  const client = (x: string) => `(case when (${x}) % ${S} = 0 then '${demo}' else 'cli_scale_' || ((${x}) % ${S}) end)`;
  // A project of the same client slot as x (null when there are fewer projects than slots).
  const project = (x: string) =>
    K === 0
      ? 'null::text'
      : `('prj_scale_' || (case when (${x}) % ${S} = 0 then ${S} * (1 + ((${x}) / ${S}) % ${K}) else (${x}) % ${S} + ${S} * (((${x}) / ${S}) % ${K}) end))`;
  const taskClient = (t: string) => `(case when (${t}) % 100 = 0 then null else ${client(t)} end)`;
  const taskProject = (t: string) => `(case when (${t}) % 100 = 0 or (${t}) % 10 = 5 then null else ${project(t)} end)`;
  const user = (x: string) => `('usr_scale_' || (1 + (${x}) % ${U}))`;
  const pick = (values: readonly string[], x: string) => `(array[${values.map((v) => `'${v}'`).join(',')}])[1 + (${x}) % ${values.length}]`;
  // The credential that proposed or requested: the operator key 1 in 10, the service key 1 in 10, else some other key.
  const credential = (x: string) =>
    `(case (${x}) % 10 when 0 then '${creds.operatorKeyId}' when 1 then '${creds.serviceKeyId}' else 'key_scale_' || (1 + (${x}) % ${U}) end)`;
  const requesterKind = (x: string) => `(case (${x}) % 10 when 0 then 'operator' when 1 then 'service_account' else (array['operator','service_account'])[1 + (${x}) % 2] end)`;

  // A task of the demo client (visible to the service key) that gets many comments.
  let hotTask = S;
  while (hotTask % 100 === 0 || hotTask % 10 === 5) hotTask += S;
  const hotTaskId = `tsk_scale_${Math.min(hotTask, N)}`;
  const hotComments = part(1000);

  const templates = registry.intakeTemplates ?? {};
  const templateNames = Object.keys(templates);
  const pipeline = registry.pipelines?.[0];
  const stepNames = pipeline ? pipeline.steps.map((s) => s.name) : ['run'];
  const problem = (code: string, title: string, status: number, detail: string) =>
    JSON.stringify({ type: `https://svc.example/problems/${code}`, title, status, detail, code, instance: null, requestId: null, retryable: false });
  const actorJson = `jsonb_build_object('kind', 'operator', 'id', 'usr_demo_operator', 'name', 'Oscar Operator')`;

  const statements: [table: string, sql: string][] = [
    [
      'clients',
      `insert into clients (id, name, status, industry, primary_contact_name, created_at, updated_at)
       select 'cli_scale_' || g, 'Scale client ' || lpad(g::text, 6, '0'), ${pick(['active', 'onboarding', 'prospect', 'paused', 'offboarded'], 'g')},
         ${pick(['Manufacturing', 'Healthcare', 'Software', 'Retail', 'Logistics'], 'g')}, 'Contact ' || g, ${ago('g * 3600')}, ${ago('g * 60')}
       from generate_series(1, ${C}) g`,
    ],
    [
      'users',
      `insert into users (id, kind, name, email, role, all_clients, oauth_subject, created_at)
       select 'usr_scale_' || g, case when g % 10 = 0 then 'operator' else 'client_admin' end, 'Scale person ' || g,
         'person' || g || '@scale.example', case when g % 10 = 0 then 'operator' else 'client_admin' end, false, 'scale|' || g, ${ago('g * 3600')}
       from generate_series(1, ${U}) g`,
    ],
    [
      'memberships',
      // A tenth on the demo client (the memberships list's path parameter); invitations are recent
      // (they expire 14 days after creation, and the list's sweep would expire older ones).
      `insert into memberships (id, user_id, client_id, kind, email, name, role, status, invited_by_kind, invited_by_id, created_at, accepted_at, expires_at, revoked_at, updated_at)
       select 'mem_scale_' || g, case when st = 'invited' then null else ${user('g')} end,
         case when g <= ${part(1000)} then '${demo}' else ${client('g')} end,
         case when (1 + g % ${U}) % 10 = 0 then 'staff' else 'client_admin' end,
         'member' || g || '@scale.example', 'Member ' || g,
         case when (1 + g % ${U}) % 10 = 0 then 'operator' else ${pick(['tasks:read', 'tasks:write', 'projects:read', 'clients:read', 'intake:write', 'reviews:read'], 'g')} end,
         st, 'operator', '${owner}', ${ago('g * 60')},
         case when st in ('active', 'revoked') then ${ago('g * 60 - 30')} end,
         case when st = 'invited' then ${ago('g * 60')} + interval '14 days' end,
         case when st = 'revoked' then ${ago('g * 30')} end, ${ago('g * 30')}
       from (select g, case when g % 10 < 7 then 'active' when g % 10 = 7 then 'invited' when g % 10 = 8 then 'revoked' else 'expired' end as st
             from generate_series(1, ${part(100)}) g) s`,
    ],
    [
      'api_keys',
      // The demo owner's keys (keys.list of the operator key) and the other people's.
      `insert into api_keys (id, owner_user_id, name, mode, prefix, secret_hash, scopes, client_ids, ip_allowlist, created_at, expires_at, last_used_at, revoked_at)
       select 'key_scale_' || g, case when g <= ${part(10_000)} then '${owner}' else ${user('g')} end, 'Scale key ' || g,
         case when g % 4 = 0 then 'live' else 'test' end, case when g % 4 = 0 then 'svc_sk_live_' else 'svc_sk_test_' end || substr(md5(g::text), 1, 4),
         'scale:' || md5('key' || g), array['tasks:read','projects:read'],
         case when g % 3 = 0 then array[${client('g')}] else '{}'::text[] end, '{}'::text[],
         ${ago('g * 600')}, ${ago('g * 600')} + interval '90 days', case when g % 2 = 0 then ${ago('g * 10')} end,
         case when g % 7 = 0 then ${ago('g * 60')} end
       from generate_series(1, ${part(1000) + part(10_000)}) g`,
    ],
    [
      'oauth_grants',
      `insert into oauth_grants (id, user_id, oauth_client_id, scopes, created_at, last_used_at, revoked_at)
       select 'grt_scale_' || g, case when g <= ${part(20_000)} then '${owner}' else ${user('g')} end, 'oac_demo_agent',
         array['tasks:read','projects:read'], ${ago('g * 600')}, ${ago('g * 60')}, case when g % 9 = 0 then ${ago('g * 30')} end
       from generate_series(1, ${part(1000) + part(20_000)}) g`,
    ],
    [
      'projects',
      `insert into projects (id, client_id, name, description, stage, status, start_date, target_date, created_at, updated_at)
       select 'prj_scale_' || g, ${client('g')}, 'Scale project ' || g, 'Project ' || g || ' of the scale seed.',
         ${pick(['discovery', 'onboarding', 'build', 'review', 'launch', 'live'], 'g')}, ${pick(['active', 'active', 'on_hold', 'archived'], 'g / 7')},
         current_date - (g % 200), current_date + (g % 100), ${ago(`g * ${step * 100}`)}, ${ago(`g * ${step * 50}`)}
       from generate_series(1, ${P}) g`,
    ],
    [
      'tasks',
      // Owners spread over every person (the demo owner has a thousandth); 3 in 10 have a due date.
      `insert into tasks (id, client_id, project_id, title, description, status, priority, owner_id, assignee_ids, due_date, version, created_by, created_at, updated_at, completed_at)
       select 'tsk_scale_' || g, ${taskClient('g')}, ${taskProject('g')}, 'Scale task ' || g, '',
         st, ${pick(['low', 'normal', 'normal', 'high', 'urgent'], 'g / 3')}, o,
         case when g % 3 = 0 then array[o, ${user('g * 7')}] else array[o] end,
         case when g % 10 < 3 then current_date + (g % 40 - 10) end, 1, '${owner}',
         ${ago(`g * ${step}`)}, ${ago(`g * ${step / 2}`)}, case when st = 'done' then ${ago(`g * ${step / 2}`)} end
       from (select g, ${pick(['open', 'in_progress', 'blocked', 'done'], 'g')} as st,
               case g % 1000 when 1 then '${owner}' when 2 then 'usr_demo_operator' when 3 then 'usr_demo_admin' else ${user('g')} end as o
             from generate_series(1, ${N}) g) s`,
    ],
    [
      'task_comments',
      `insert into task_comments (id, task_id, author_kind, author_id, author_name, body, created_at)
       select 'cmt_scale_' || g, case when g <= ${hotComments} then '${hotTaskId}' else 'tsk_scale_' || t end,
         'operator', 'usr_demo_operator', 'Oscar Operator', 'Comment ' || g || ' on the scale task.',
         case when g <= ${hotComments} then ${ago('g * 0.5')} else ${ago(`t * ${step / 3}`)} end
       from (select g, 1 + (g::bigint * 7919) % ${N} as t from generate_series(1, ${part(10)}) g) s`,
    ],
    [
      'approvals',
      // Decided ones carry their decision; pending ones expire 7 days after they were proposed.
      `insert into approvals (id, operation_id, tier, status, client_id, subject_type, subject_id, proposer_kind, proposer_id, proposer_name,
         proposer_credential_id, proposer_login_method, input, required_approvals, decisions, result, error, version, created_at, expires_at, decided_at)
       select 'apr_scale_' || g, 'projects.create', 2, st, case when g % 20 = 0 then null else ${client('g')} end, null, null,
         ${requesterKind('g')}, 'usr_demo_owner', 'Olivia Owner', ${credential('g')}, 'api_key',
         jsonb_build_object('clientId', ${client('g')}, 'name', 'Proposed project ' || g), 1,
         case when st in ('approved', 'rejected') then jsonb_build_array(jsonb_build_object('approver', ${actorJson},
           'decision', case when st = 'approved' then 'approve' else 'reject' end, 'comment', null, 'decidedAt', to_char((${ago('g * 60 - 30')}) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')))
           else '[]'::jsonb end,
         case when st = 'approved' then jsonb_build_object('id', 'prj_scale_' || (1 + g % ${P})) end, null, 1,
         ${ago('g * 60')}, ${ago('g * 60')} + interval '7 days', case when st in ('approved', 'rejected') then ${ago('g * 60 - 30')} end
       from (select g, ${pick(['approved', 'approved', 'rejected', 'expired', 'pending'], 'g')} as st from generate_series(1, ${part(100)}) g) s`,
    ],
    [
      'operations',
      `insert into operations (id, kind, status, progress, requested_by_kind, requested_by_id, requested_by_name, requested_by_credential_id,
         subject_id, result, error, created_at, updated_at, finished_at)
       select 'op_scale_' || g, ${pick(['pipeline_run', 'extraction', 'campaign_send', 'hub_publish'], 'g')}, st,
         case when st = 'succeeded' then 100 else 40 end, ${requesterKind('g')}, 'usr_demo_owner', 'Olivia Owner', ${credential('g')},
         'run_scale_' || g, case when st = 'succeeded' then jsonb_build_object('runId', 'run_scale_' || g) end,
         case when st = 'failed' then '${problem('internal_error', 'Internal error', 500, 'The scale seed failed this one.')}'::jsonb end,
         ${ago('g * 60')}, ${ago('g * 60 - 20')}, ${ago('g * 60 - 20')}
       from (select g, ${pick(['succeeded', 'succeeded', 'succeeded', 'failed', 'cancelled'], 'g')} as st from generate_series(1, ${part(100)}) g) s`,
    ],
    [
      'pipeline_runs',
      // Final states only: the pipeline worker of a `svc serve` on this database finds nothing to claim.
      `insert into pipeline_runs (id, client_id, pipeline, status, trigger, parent_run_id, operation_id, parameters, requested_by_kind,
         requested_by_id, requested_by_name, requested_by_credential_id, created_at, started_at, finished_at, error)
       select 'run_scale_' || g, case when g % 20 = 0 then null else ${client('g')} end, '${pipeline?.name ?? 'task_digest'}', st,
         ${pick(['manual', 'schedule'], 'g / 3')}, null, null, '{}'::jsonb, 'operator', 'usr_demo_owner', 'Olivia Owner', 'grt_demo_owner',
         ${ago('g * 120')}, ${ago('g * 120 - 1')}, ${ago('g * 120 - 10')},
         case when st = 'failed' then '${problem('internal_error', 'Internal error', 500, 'Step summarize failed.')}'::jsonb end
       from (select g, ${pick(['succeeded', 'succeeded', 'succeeded', 'failed', 'cancelled'], 'g')} as st from generate_series(1, ${part(100)}) g) s`,
    ],
    [
      'pipeline_steps',
      `insert into pipeline_steps (run_id, position, name, status, attempts, started_at, finished_at, output, error)
       select r.id, p - 1, (array[${stepNames.map((n) => `'${n}'`).join(',')}])[p],
         case when r.status = 'succeeded' then 'succeeded' when p = 1 then 'succeeded' when p = 2 and r.status = 'failed' then 'failed' else 'skipped' end,
         case when r.status = 'succeeded' or p <= 2 then 1 else 0 end, r.started_at, r.finished_at, null,
         case when p = 2 and r.status = 'failed' then r.error end
       from pipeline_runs r cross join generate_series(1, ${stepNames.length}) p
       where r.id like 'run_scale_%'`,
    ],
    [
      'pipeline_events',
      `insert into pipeline_events (id, run_id, client_id, step, type, level, level_rank, message, occurred_at, data)
       select 'pev_scale_' || g, 'run_scale_' || r, case when r % 20 = 0 then null else ${client('r')} end,
         case when k between 2 and 7 then (array[${stepNames.map((n) => `'${n}'`).join(',')}])[1 + k % ${stepNames.length}] end,
         (array['run_queued','run_started','step_started','log','step_succeeded','step_started','log','step_succeeded','log','run_succeeded'])[k + 1],
         (array['info','info','debug','debug','info','debug','warning','info','debug','info'])[k + 1],
         (array[1,1,0,0,1,0,2,1,0,1])[k + 1], 'Scale run ' || r || ' event ' || k, ${ago('r * 120 - k')}, '{}'::jsonb
       from (select g, 1 + (g - 1) / 10 as r, (g - 1) % 10 as k from generate_series(1, ${part(100) * 10}) g) s`,
    ],
    [
      'reviews',
      `insert into reviews (id, client_id, project_id, title, kind, status, summary, file_ids, reviewer_kind, reviewer_id, reviewer_name,
         released_at, released_by_kind, released_by_id, released_by_name, version, created_at, updated_at)
       select 'rev_scale_' || g, ${client('g')}, case when g % 4 = 0 then null else ${project('g')} end, 'Scale review ' || g,
         ${pick(['deliverable', 'report', 'design', 'document'], 'g')}, st, 'Review ' || g || '.', '{}'::text[],
         case when st <> 'draft' then 'operator' end, case when st <> 'draft' then 'usr_demo_operator' end, case when st <> 'draft' then 'Oscar Operator' end,
         case when st = 'released' then ${ago('g * 60 - 30')} end, case when st = 'released' then 'operator' end,
         case when st = 'released' then 'usr_demo_admin' end, case when st = 'released' then 'Adam Admin' end, 1, ${ago('g * 60')}, ${ago('g * 60 - 30')}
       from (select g, ${pick(['draft', 'ready', 'released', 'released'], 'g')} as st from generate_series(1, ${part(100)}) g) s`,
    ],
    ...(templateNames.length > 0
      ? ([
          [
            'intake_records',
            `insert into intake_records (id, client_id, project_id, title, template, status, fields, version, created_by_kind, created_by_id,
               created_at, updated_at, finalized_at)
             select 'int_scale_' || g, ${client('g')}, case when g % 3 = 0 then ${project('g')} end, 'Scale intake ' || g, t.name,
               case when g % 2 = 0 then 'finalized' else 'draft' end, case when g % 2 = 0 then t.final else t.draft end, 1, 'operator',
               case when g % 10 = 0 then '${owner}' else 'usr_demo_operator' end, ${ago('g * 60')}, ${ago('g * 60 - 30')},
               case when g % 2 = 0 then ${ago('g * 60 - 30')} end
             from generate_series(1, ${part(100)}) g
             join (values ${templateNames.map((name, i) => `(${i}, '${name}', '${sqlString(JSON.stringify(intakeFields(templates[name]!, false)))}'::jsonb, '${sqlString(JSON.stringify(intakeFields(templates[name]!, true)))}'::jsonb)`).join(', ')})
               as t(i, name, draft, final) on t.i = g % ${templateNames.length}`,
          ],
        ] as [string, string][])
      : []),
    [
      'uploads',
      `insert into uploads (id, client_id, name, content_type, max_bytes, status, size_bytes, sha256, storage_key, requested_by_kind,
         requested_by_id, requested_by_credential_id, expires_at, created_at, received_at)
       select 'upl_scale_' || g, case when g % 20 = 0 then null else ${client('g')} end, 'scale-' || g || '.pdf', 'application/pdf', 1000 + g % 5000,
         'registered', 1000 + g % 5000, encode(sha256(('scale' || g)::bytea), 'hex'), 'uploads/upl_scale_' || g, 'operator', 'usr_demo_owner',
         'grt_demo_owner', ${ago('g * 60 - 900')}, ${ago('g * 60')}, ${ago('g * 60 - 5')}
       from generate_series(1, ${part(100)}) g`,
    ],
    [
      'files',
      `insert into files (id, upload_id, client_id, name, content_type, size_bytes, sha256, purpose, status, storage_key,
         uploaded_by_kind, uploaded_by_id, uploaded_by_name, created_at, scanned_at)
       select 'fil_scale_' || g, 'upl_scale_' || g, case when g % 20 = 0 then null else ${client('g')} end,
         'scale-' || g || '.pdf', 'application/pdf', 1000 + g % 5000,
         encode(sha256(('scale' || g)::bytea), 'hex'), ${pick(['deliverable', 'attachment', 'intake_document', 'other'], 'g')},
         case when g % 50 = 0 then 'rejected' else 'available' end, 'uploads/upl_scale_' || g, 'operator', 'usr_demo_owner', 'Olivia Owner',
         ${ago('g * 60 - 10')}, ${ago('g * 60 - 11')}
       from generate_series(1, ${part(100)}) g`,
    ],
    [
      'file_links',
      `insert into file_links (file_id, project_id)
       select 'fil_scale_' || g, ${project('g')} from generate_series(1, ${part(100)}) g where g % 20 <> 0 and g % 3 = 0 and ${project('g')} is not null`,
    ],
    [
      'accounts',
      `insert into accounts (id, client_id, name, domain, industry, status, owner_id, created_at, updated_at)
       select 'acc_scale_' || g, case when g % 10 = 0 then null else ${client('g')} end, 'Scale account ' || lpad(g::text, 7, '0'),
         'account' || g || '.example', ${pick(['Insurance', 'Manufacturing', 'Healthcare', 'Software'], 'g')},
         ${pick(['prospect', 'customer', 'former_customer'], 'g')}, 'usr_demo_operator', ${ago('g * 60')}, ${ago('g * 60')}
       from generate_series(1, ${part(100)}) g`,
    ],
    [
      'contacts',
      `insert into contacts (id, client_id, account_id, name, email, phone, phone_digits, job_title, created_at, updated_at)
       select 'con_scale_' || g, case when g % 10 = 0 then null else ${client('g')} end, 'acc_scale_' || g, 'Scale Person ' || g,
         'contact' || g || '@account' || g || '.example', '+1 555 ' || lpad((g % 10000000)::text, 7, '0'), '1555' || lpad((g % 10000000)::text, 7, '0'),
         ${pick(['Benefits Director', 'HR Manager', 'CFO', 'Office Manager'], 'g')}, ${ago('g * 60')}, ${ago('g * 60')}
       from generate_series(1, ${part(100)}) g`,
    ],
    [
      'leads',
      `insert into leads (id, client_id, title, company, source, status, account_id, contact_id, owner_id, estimated_value, currency, notes, version, created_at, updated_at)
       select 'led_scale_' || g, case when g % 10 = 0 then null else ${client('g')} end, 'Scale lead ' || g, 'Scale account ' || lpad(g::text, 7, '0'),
         ${pick(['referral', 'website', 'event', 'outbound', 'partner', 'other'], 'g')}, ${pick(['new', 'contacted', 'qualified', 'disqualified', 'converted'], 'g / 2')},
         'acc_scale_' || g, 'con_scale_' || g, 'usr_demo_operator', 1000 * (g % 100), 'USD', '', 1, ${ago('g * 60')}, ${ago('g * 60')}
       from generate_series(1, ${part(100)}) g`,
    ],
    [
      'opportunities',
      `insert into opportunities (id, client_id, account_id, lead_id, name, stage, amount, currency, close_date, owner_id, version, created_at, updated_at)
       select 'opp_scale_' || g, case when g % 10 = 0 then null else ${client('g')} end, 'acc_scale_' || g, 'led_scale_' || g, 'Scale opportunity ' || g,
         ${pick(['qualification', 'proposal', 'negotiation', 'won', 'lost'], 'g')}, 500 * (g % 200), 'USD', current_date + (g % 90), 'usr_demo_operator', 1,
         ${ago('g * 60')}, ${ago('g * 60')}
       from generate_series(1, ${part(100)}) g`,
    ],
    [
      'campaigns',
      `insert into campaigns (id, client_id, name, kind, channel, status, subject, body, enrollment_start, enrollment_end, scheduled_at, sent_at, version, created_at, updated_at)
       select 'cmp_scale_' || g, ${client('g')}, 'Scale campaign ' || g, ${pick(['open_enrollment', 'reminder', 'announcement'], 'g')},
         case when g % 4 = 0 then 'sms' else 'email' end, st, 'Campaign ' || g, 'Enrollment opens soon.', current_date + 20, current_date + 50,
         case when st = 'scheduled' then now() + interval '10 days' end, case when st = 'sent' then ${ago('g * 600 - 60')} end, 1,
         ${ago('g * 600')}, ${ago('g * 600')}
       from (select g, ${pick(['draft', 'scheduled', 'sent', 'sent', 'cancelled'], 'g')} as st from generate_series(1, ${part(1000)}) g) s`,
    ],
    [
      'campaign_recipients',
      `insert into campaign_recipients (id, campaign_id, name, address)
       select 'rcp_scale_' || g, 'cmp_scale_' || (1 + g % ${part(1000)}), 'Member ' || g, 'member' || g || '@employees.example'
       from generate_series(1, ${part(10)}) g`,
    ],
    [
      'notifications',
      `insert into notifications (id, user_id, kind, title, body, client_id, subject_id, path, read_at, created_at)
       select 'ntf_scale_' || g, case when g % 10 = 0 then '${owner}' else ${user('g')} end,
         ${pick(['task_assigned', 'task_due', 'comment_added', 'mention', 'approval_requested', 'approval_decided', 'review_released', 'membership_invited'], 'g')},
         'About scale task ' || t, '', ${taskClient('t')}, 'tsk_scale_' || t, '/v1/tasks/tsk_scale_' || t,
         case when g % 2 = 0 then ${ago('g * 10')} end, ${ago('g * 20')}
       from (select g, 1 + (g::bigint * 104729) % ${N} as t from generate_series(1, ${part(10)}) g) s`,
    ],
    [
      'events',
      // Oldest first (seq follows time); task events about the task of that age; 1 in 20 about another family.
      `insert into events (id, type, occurred_at, client_id, subject_id, actor_kind, actor_id, data)
       select 'evt_scale_' || g, ty, ${ago(`t * ${step}`)},
         case when ty like 'task.%' then ${taskClient('t')} when ty = 'approval.approved' and x % 20 = 0 then null else ${client('x')} end,
         case ty when 'project.stage_advanced' then 'prj_scale_' || x when 'review.released' then 'rev_scale_' || x
              when 'intake.finalized' then 'int_scale_' || x when 'approval.approved' then 'apr_scale_' || x else 'tsk_scale_' || t end,
         'operator', 'usr_demo_operator',
         case when ty like 'task.%' then jsonb_build_object('id', 'tsk_scale_' || t, 'clientId', ${taskClient('t')}, 'projectId', ${taskProject('t')},
                'title', 'Scale task ' || t, 'status', case when ty = 'task.completed' then 'done' else 'open' end)
              else jsonb_build_object('id', 'x' || g, 'title', 'Scale record ' || x, 'name', 'Scale record ' || x, 'status', 'released',
                'stage', 'build', 'previousStage', 'onboarding', 'operationId', 'projects.create') end
       from (select g, greatest(1, ((${E} - g)::bigint * ${N}) / ${E}) as t,
               case when ty0 = 'project.stage_advanced' then 1 + g % ${P} else 1 + g % ${part(100)} end as x, ty0 as ty
             from (select g, case when g % 20 < 12 then 'task.created' when g % 20 < 17 then 'task.updated' when g % 20 < 19 then 'task.completed'
                    else (array['project.stage_advanced','review.released','intake.finalized','approval.approved'])[1 + (g / 20) % 4] end as ty0
                   from generate_series(1, ${E}) g) s0) s
       order by g`,
    ],
    [
      'webhook_endpoints',
      `insert into webhook_endpoints (id, owner_user_id, widened, client_id, url, description, event_types, status, version, start_seq, created_at, updated_at)
       select 'whe_scale_' || g, '${owner}', false, case when g = 1 then '${demo}' when g % 5 = 0 then null else ${client('g')} end,
         'https://hooks.scale.example/' || g, 'Scale endpoint ' || g, array['task.created','task.updated','task.completed'],
         case when g % 6 = 0 then 'disabled' else 'enabled' end, 1, 0, ${ago('g * 3600')}, ${ago('g * 3600')}
       from generate_series(1, ${part(10_000, 5)}) g`,
    ],
    [
      'webhook_deliveries',
      // A tenth on endpoint 1 (the demo client's: the deliveries list's path parameter); all within the retention.
      `insert into webhook_deliveries (id, endpoint_id, event_id, event_type, payload, status, test, attempts, last_attempt_at, next_attempt_at,
         response_status, error, created_at)
       select 'whd_scale_' || g, case when g % 10 = 0 then 'whe_scale_1' else 'whe_scale_' || (1 + g % ${part(10_000, 5)}) end, 'evt_scale_' || g,
         'task.created', jsonb_build_object('id', 'evt_scale_' || g), case when g % 25 = 0 then 'failed' else 'succeeded' end, false,
         case when g % 25 = 0 then 8 else 1 end, ${ago(`g * ${step * 5} - 1`)}, null, case when g % 25 = 0 then 503 else 200 end,
         case when g % 25 = 0 then 'HTTP 503' end, ${ago(`g * ${step * 5}`)}
       from generate_series(1, ${part(10)}) g`,
    ],
  ];

  for (const [table, text] of statements) {
    const t = performance.now();
    const res = await raw.unsafe(text);
    say(`  ${table.padEnd(20)} ${String(res.count).padStart(9)} rows  ${((performance.now() - t) / 1000).toFixed(1).padStart(6)} s`);
  }
  // The fan-out has caught up with the seeded history (a `svc serve` must not turn it into deliveries).
  await raw.unsafe(`insert into settings (key, value) select 'webhooks_fanout_position', coalesce(max(seq), 0)::text from events
                    on conflict (key) do update set value = excluded.value`);
  const t = performance.now();
  await raw.unsafe('vacuum (analyze)');
  say(`  vacuum (analyze)                          ${((performance.now() - t) / 1000).toFixed(1).padStart(6)} s`);
  // The demo client's project with the most tasks.
  const [hot] = await raw.unsafe(
    `select project_id from tasks where client_id = $1 and project_id is not null group by project_id order by count(*) desc, project_id limit 1`,
    [demo],
  );
  return {
    pathParams: { task_id: hotTaskId, client_id: demo, endpoint_id: 'whe_scale_1' },
    hotProjectId: (hot as unknown as { project_id: string } | undefined)?.project_id ?? 'prj_demo_acme_portal',
  };
}

function sqlString(s: string): string {
  return s.replace(/'/g, "''");
}

/** An intake record's fields from its template: all empty (draft), or the required ones set and every field final. */
function intakeFields(defs: readonly { key: string; label: string; type: string; required: boolean; choices?: readonly string[] }[], finalized: boolean): unknown[] {
  const sample = (type: string, choices?: readonly string[]) =>
    type === 'number' ? 42 : type === 'boolean' ? true : type === 'date' ? '2026-01-15' : type === 'choice' ? (choices?.[0] ?? 'a') : 'Scale value';
  return defs.map((def) => {
    const set = finalized && def.required && def.type !== 'file';
    return {
      key: def.key,
      label: def.label,
      type: def.type,
      required: def.required,
      ...(def.choices ? { choices: [...def.choices] } : {}),
      value: set ? sample(def.type, def.choices) : null,
      status: set ? 'final' : 'empty',
      source: 'manual',
      updatedAt: set ? '2026-01-15T10:00:00.000Z' : null,
      updatedBy: set ? { kind: 'operator', id: 'usr_demo_operator', name: 'Oscar Operator' } : null,
    };
  });
}

// ------------------------------------------------------------------------------------------------
// EXPLAIN every list

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  'Sort Method'?: string;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

interface Recorded {
  sql: string;
  params: unknown[];
}

interface Caller {
  who: string;
  kind: string;
  key: string;
}

async function explainLists(
  raw: Sql,
  baseUrl: string,
  registry: Registry,
  callers: readonly Caller[],
  seeded: Seeded,
  say: (s: string) => void,
): Promise<{ lines: ExplainLine[]; failures: string[] }> {
  // Every SQL statement drizzle builds while `recording` is on: the patch lives only for this pass.
  const { PgDialect } = await import('drizzle-orm/pg-core');
  const original = PgDialect.prototype.sqlToQuery;
  let recording: Recorded[] | null = null;
  PgDialect.prototype.sqlToQuery = function (this: InstanceType<typeof PgDialect>, ...args: Parameters<typeof original>) {
    const q = original.apply(this, args);
    recording?.push({ sql: q.sql, params: q.params });
    return q;
  };
  const lines: ExplainLine[] = [];
  const failures: string[] = [];
  try {
    const fill = (path: string) => path.replace(/\{(\w+)\}/g, (_, name: string) => seeded.pathParams[name] ?? `unknown_${name}`);
    const targets = registry.routes
      .filter((r) => r.method === 'GET' && /\.list$/.test(r.id))
      .map((r) => ({ id: r.id, label: r.id, path: fill(r.path), query: {} as Record<string, string> }));
    // A project's tasks (a filter, not a path parameter, in this contract).
    targets.push({ id: 'tasks.list', label: 'tasks.list?projectId', path: '/v1/tasks', query: { projectId: seeded.hotProjectId } });
    say(`\npath parameters: ${Object.entries(seeded.pathParams).map(([k, v]) => `${k}=${v}`).join(', ')}; tasks.list?projectId=${seeded.hotProjectId}`);
    say(`flagged (<<): a Seq Scan or Sort over more than ${FLAG_ROWS.toLocaleString('en')} rows, or an index scan filtering that many away`);
    say(`\n${'operation'.padEnd(28)} ${'caller'.padEnd(8)} page   exec ms  hit/read  plan`);
    for (const target of targets) {
      const audience = (registry.operationsById[target.id]?.audience ?? []) as readonly string[];
      for (const caller of callers) {
        if (!audience.includes(caller.kind)) {
          say(`${target.label.padEnd(28)} ${caller.who.padEnd(8)}    -  not in the operation's audience (${audience.join(', ')})`);
          continue;
        }
        const auth = { authorization: `Bearer ${caller.key}` };
        let cursor: string | null = null;
        for (const pageNo of [1, 2]) {
          // Authentication's own reads (a key cache miss) stay out of the recording.
          await (await fetch(`${baseUrl}/v1/meta`, { headers: auth })).arrayBuffer();
          recording = [];
          const query = new URLSearchParams({ ...target.query, pageSize: '50', ...(cursor ? { cursor } : {}) });
          const res = await fetch(`${baseUrl}${target.path}?${query}`, { headers: auth });
          const body = (await res.json()) as { nextCursor?: string | null; items?: unknown[] };
          const issued = recording.filter((q) => /^\s*(select|with|update|delete)\b/i.test(q.sql) && !/from "settings"|update "api_keys"|"audit_log"/.test(q.sql));
          recording = null;
          if (res.status !== 200) {
            failures.push(`${target.label} ${caller.who} page ${pageNo}: HTTP ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
            say(`${target.label.padEnd(28)} ${caller.who.padEnd(8)} ${String(pageNo).padStart(4)}  HTTP ${res.status}  ${JSON.stringify(body).slice(0, 200)}`);
            break;
          }
          const items = `[${body.items?.length ?? 0} items${body.nextCursor ? ', more' : ''}]`;
          if (issued.length === 0) say(`${target.label.padEnd(28)} ${caller.who.padEnd(8)} ${String(pageNo).padStart(4)}  no statement  ${items}`);
          for (const [i, q] of issued.entries()) {
            const line = await explainOne(raw, q);
            const entry: ExplainLine = { operation: target.label, caller: caller.who, page: pageNo, ...line, sql: q.sql, params: q.params };
            lines.push(entry);
            say(
              `${target.label.padEnd(28)} ${caller.who.padEnd(8)} ${String(pageNo).padStart(4)}  ${line.execMs.toFixed(2).padStart(8)}  ${`${line.hit}/${line.read}`.padStart(8)}  ${line.plan}${line.flags.length ? `  << ${line.flags.join('; ')}` : ''}${i === issued.length - 1 ? `  ${items}` : ''}`,
            );
          }
          cursor = body.nextCursor ?? null;
          if (!cursor) break;
        }
      }
    }
  } finally {
    PgDialect.prototype.sqlToQuery = original;
  }
  say(failures.length === 0 ? '\nevery list answered 200 (responses checked against the contract)' : `\n${failures.length} list calls did not answer 200:\n  ${failures.join('\n  ')}`);
  // Flagged statements with their SQL, once per operation, caller and statement (the next page's differs by its cursor only).
  const flagged = new Map<string, { line: ExplainLine; pages: number[] }>();
  for (const [i, l] of lines.entries()) {
    if (l.flags.length === 0) continue;
    const position = lines.slice(0, i).filter((o) => o.operation === l.operation && o.caller === l.caller && o.page === l.page).length;
    const key = `${l.operation}|${l.caller}|${position}`;
    const seen = flagged.get(key);
    if (seen) seen.pages.push(l.page);
    else flagged.set(key, { line: l, pages: [l.page] });
  }
  if (flagged.size > 0) {
    say(`\nflagged statements (${flagged.size}; SQL and parameters of the first page flagged):`);
    for (const { line: l, pages } of flagged.values()) {
      say(`- ${l.operation}, ${l.caller}, page ${pages.join(' and ')}: ${l.flags.join('; ')}\n  plan: ${l.plan}\n  sql: ${l.sql.replace(/\s+/g, ' ').trim()}\n  params: ${JSON.stringify(l.params)}`);
    }
  } else {
    say('\nno statement flagged');
  }
  return { lines, failures };
}

const ROLLBACK = new Error('rollback');

async function explainOne(raw: Sql, q: Recorded): Promise<Pick<ExplainLine, 'execMs' | 'hit' | 'read' | 'plan' | 'flags'>> {
  const text = `explain (analyze, buffers, format json) ${q.sql}`;
  let rows: unknown[] = [];
  if (/^\s*(select|with)\b/i.test(q.sql) && !/\bfor update\b/i.test(q.sql)) {
    rows = await raw.unsafe(text, q.params as never[]);
  } else {
    // A write (or a locking read) is explained in a transaction that is rolled back.
    await raw
      .begin(async (tx) => {
        rows = await tx.unsafe(text, q.params as never[]);
        throw ROLLBACK;
      })
      .catch((err: unknown) => {
        if (err !== ROLLBACK) throw err;
      });
  }
  const plan = (rows[0] as { 'QUERY PLAN': { Plan: PlanNode; 'Execution Time': number }[] })['QUERY PLAN'][0]!;
  const nodes: string[] = [];
  const flags: string[] = [];
  walk(plan.Plan, nodes, flags);
  return {
    execMs: plan['Execution Time'],
    hit: plan.Plan['Shared Hit Blocks'] ?? 0,
    read: plan.Plan['Shared Read Blocks'] ?? 0,
    plan: `${/^\s*(update|delete)/i.test(q.sql) ? `${q.sql.trim().split(/\s+/)[0]!.toUpperCase()} ` : ''}${nodes.join(' > ')}`,
    flags,
  };
}

/** Rows a node produced over all its loops. */
const total = (n: PlanNode) => (n['Actual Rows'] ?? 0) * (n['Actual Loops'] ?? 1);

function walk(node: PlanNode, out: string[], flags: string[]): void {
  const type = node['Node Type'];
  if (/Scan|Sort/.test(type)) {
    const on = node['Index Name'] ?? node['Relation Name'];
    const removed = (node['Rows Removed by Filter'] ?? 0) * (node['Actual Loops'] ?? 1);
    const loops = (node['Actual Loops'] ?? 1) > 1 ? `, ${node['Actual Loops']} loops` : '';
    out.push(`${type}${on ? ` ${on}` : ''} (${total(node)} rows${removed ? `, ${removed} filtered` : ''}${loops})`);
    const read = total(node) + removed;
    if (type === 'Seq Scan' && read > FLAG_ROWS) flags.push(`Seq Scan ${on}: ${read} rows read`);
    else if (/Index|Bitmap Heap/.test(type) && removed > FLAG_ROWS) flags.push(`${type} ${on}: ${removed} rows filtered away`);
    if (/Sort/.test(type)) {
      const input = (node.Plans ?? []).reduce((sum, child) => sum + total(child), 0);
      if (input > FLAG_ROWS) flags.push(`Sort of ${input} rows${node['Sort Method'] ? ` (${node['Sort Method']})` : ''}`);
    }
  }
  for (const child of node.Plans ?? []) walk(child, out, flags);
}

// ------------------------------------------------------------------------------------------------
// Load

/** The tasks list at `rate` requests a second from its own `svc serve` process, per caller. */
async function underLoad(
  databaseUrl: string,
  keys: { operatorKey: string; serviceKey: string },
  load: NonNullable<ListsAtScaleOptions['load']>,
  say: (s: string) => void,
): Promise<LoadFigure[]> {
  const { cannon, serveExisting } = await import('./bench-procs.ts');
  const rate = load.rate ?? 1000;
  const connections = load.connections ?? 8;
  const warmUp = load.warmUpSeconds ?? 3;
  const served = await serveExisting(databaseUrl, keys.operatorKey);
  const out: LoadFigure[] = [];
  try {
    say(
      `\nGET /v1/tasks?pageSize=50 at ${rate.toLocaleString('en')} req/s (autocannon, ${connections} connections, ${load.seconds} s after ${warmUp} s of warm-up; svc serve in its own process)`,
    );
    for (const [caller, key] of [
      ['operator', keys.operatorKey],
      ['service', keys.serviceKey],
    ] as const) {
      const url = `${served.url}/v1/tasks?pageSize=50`;
      const headers = { authorization: `Bearer ${key}` };
      if (warmUp > 0) await cannon({ url, connections, seconds: warmUp, headers, overallRate: rate });
      const r = await cannon({ url, connections, seconds: load.seconds, headers, overallRate: rate });
      const figure: LoadFigure = { caller, askedRate: rate, rps: r.rps, p50Ms: r.p50Ms, p99Ms: r.p99Ms, non2xx: r.non2xx, errors: r.errors, achieved: r.rps >= rate * 0.97 };
      out.push(figure);
      say(loadLine(figure));
    }
  } finally {
    await served.stop();
  }
  return out;
}

// ------------------------------------------------------------------------------------------------
// CLI

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const url = process.env.DATABASE_URL;
  if (!url) {
    console.error('lists-at-scale needs DATABASE_URL (PostgreSQL)');
    process.exit(2);
  }
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  await listsAtScale({
    databaseUrl: url,
    tasks: Number(arg('--tasks') ?? 1_000_000),
    explain: !process.argv.includes('--no-explain'),
    load: process.argv.includes('--load') ? { seconds: 10 } : null,
    keep: process.argv.includes('--keep'),
    print: true,
  });
  process.exit(0);
}
