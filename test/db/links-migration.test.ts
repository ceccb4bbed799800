// Migration 0018 (issue 42) on a live database: a database migrated up to 0017 holds files linked to a
// project and an intake record and outbound messages of a campaign in the runtime tables' old columns;
// applying 0018 keeps every link, in file_links and campaign_messages, and drops the old columns.
// PGlite (a data directory reopened) and, when DATABASE_URL is set, PostgreSQL (an empty database).
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MIGRATIONS_FOLDER } from '../../bin/paths.ts';
import { openDatabase, type Database, type OpenConfig } from '../../runtime/data/client.ts';
import { freshPostgresDatabase } from '../support/db.ts';

const LINKS_MIGRATION = '0018_links_in_domain_tables';
const tmp = mkdtempSync(join(tmpdir(), 'svc-links-migration-'));
const drops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const drop of drops) await drop();
  rmSync(tmp, { recursive: true, force: true });
});

/** The history as a build before 0018 had it: the folder's journal without 0018 and what follows. */
function historyBefore(tag: string): string {
  const folder = join(tmp, 'before');
  cpSync(MIGRATIONS_FOLDER, folder, { recursive: true });
  const path = join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(path, 'utf8')) as { entries: { tag: string; idx: number }[] };
  const at = journal.entries.findIndex((e) => e.tag === tag);
  expect(at).toBeGreaterThan(0);
  writeFileSync(path, JSON.stringify({ ...journal, entries: journal.entries.slice(0, at) }));
  return folder;
}

const LINKED = `
  insert into clients (id, name, status) values ('cli_l', 'Linked', 'active');
  insert into projects (id, client_id, name, stage, status) values ('prj_l', 'cli_l', 'P', 'discovery', 'active');
  insert into intake_records (id, client_id, project_id, template, title, status, fields, created_by_kind, created_by_id)
    values ('int_l', 'cli_l', 'prj_l', 'benefits', 'I', 'draft', '[]'::jsonb, 'user', 'usr_l');
  insert into uploads (id, client_id, name, content_type, max_bytes, status, storage_key, requested_by_kind, requested_by_id, requested_by_credential_id, expires_at)
    select 'upl_' || n, 'cli_l', n, 'text/plain', 10, 'registered', 'uploads/' || n, 'user', 'usr_l', 'key_l', now() from unnest(array['a', 'b', 'c']) n;
  insert into files (id, upload_id, client_id, project_id, intake_id, name, content_type, size_bytes, sha256, purpose, status, storage_key, uploaded_by_kind, uploaded_by_id)
    values ('fil_a', 'upl_a', 'cli_l', 'prj_l', 'int_l', 'a', 'text/plain', 1, 'x', 'intake_document', 'available', 'uploads/a', 'user', 'usr_l'),
           ('fil_b', 'upl_b', 'cli_l', 'prj_l', null, 'b', 'text/plain', 1, 'x', 'attachment', 'available', 'uploads/b', 'user', 'usr_l'),
           ('fil_c', 'upl_c', 'cli_l', null, null, 'c', 'text/plain', 1, 'x', 'attachment', 'available', 'uploads/c', 'user', 'usr_l');
  insert into campaigns (id, client_id, name, kind, channel, status) values ('cmp_l', 'cli_l', 'C', 'newsletter', 'email', 'sent');
  insert into outbound_messages (id, campaign_id, channel, recipient, body, status)
    values ('msg_1', 'cmp_l', 'email', 'a@example.com', 'b', 'sent'), ('msg_2', 'cmp_l', 'email', 'b@example.com', 'b', 'queued'),
           ('msg_3', null, 'email', 'c@example.com', 'b', 'sent');`;

async function migrateAcross(config: Omit<OpenConfig, 'migrationsFolder'>): Promise<Database> {
  const old = await openDatabase({ ...config, migrationsFolder: historyBefore(LINKS_MIGRATION) });
  try {
    for (const statement of LINKED.split(';').filter((s) => s.trim())) await old.execute(statement);
  } finally {
    await old.close();
  }
  return openDatabase({ ...config, migrationsFolder: MIGRATIONS_FOLDER });
}

async function expectLinksKept(database: Database): Promise<void> {
  try {
    expect(await database.execute('select file_id, project_id, intake_id from file_links order by file_id')).toEqual([
      { file_id: 'fil_a', project_id: 'prj_l', intake_id: 'int_l' },
      { file_id: 'fil_b', project_id: 'prj_l', intake_id: null },
    ]);
    expect(await database.execute('select message_id, campaign_id from campaign_messages order by message_id')).toEqual([
      { message_id: 'msg_1', campaign_id: 'cmp_l' },
      { message_id: 'msg_2', campaign_id: 'cmp_l' },
    ]);
    const left = await database.execute<{ column_name: string }>(
      `select column_name from information_schema.columns where table_name in ('files', 'outbound_messages') and column_name in ('project_id', 'intake_id', 'extraction_id', 'campaign_id')`,
    );
    expect(left).toEqual([]);
  } finally {
    await database.close();
  }
}

describe('migration 0018 keeps the links of a live database', () => {
  it('PGlite: files and outbound messages linked before 0018 are linked after it', async () => {
    const dataDir = join(tmp, 'pglite');
    await expectLinksKept(await migrateAcross({ databaseUrl: null, dataDir }));
  }, 60_000);

  it.runIf(Boolean(process.env.DATABASE_URL))('PostgreSQL: the same on a server database migrated from empty', async () => {
    const fresh = await freshPostgresDatabase(process.env.DATABASE_URL!, { empty: true });
    drops.push(fresh.drop);
    await expectLinksKept(await migrateAcross({ databaseUrl: fresh.url, dataDir: '' }));
  }, 60_000);
});
