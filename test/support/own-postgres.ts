// A PostgreSQL 15 cluster of a test's own (initdb and pg_ctl as the postgres user, in a temporary
// directory, on a free loopback port), for tests that hold the visibility horizon on purpose: the
// shared server's horizon is cluster-wide, so a transaction held open there would stall every other
// test's events. Trust authentication, one database `svc`; stop() removes it all.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './process.ts';

const BIN = '/usr/lib/postgresql/15/bin';

export interface OwnPostgres {
  url: string;
  stop(): Promise<void>;
}

/** Whether a private cluster can be started here (PostgreSQL 15's binaries and runuser). */
export function canRunOwnPostgres(): boolean {
  return existsSync(join(BIN, 'initdb')) && existsSync('/usr/sbin/runuser');
}

function asPostgres(args: string[]): void {
  execFileSync('runuser', ['-u', 'postgres', '--', ...args], { stdio: 'pipe' });
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-own-pg-'));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const port = await freePort();
  asPostgres([join(BIN, 'initdb'), '-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  asPostgres([
    join(BIN, 'pg_ctl'), '-D', data, '-l', join(dir, 'log'), '-w',
    '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c autovacuum=off`, 'start',
  ]);
  asPostgres([join(BIN, 'createdb'), '-h', '127.0.0.1', '-p', String(port), 'svc']);
  let stopped = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/svc`,
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        asPostgres([join(BIN, 'pg_ctl'), '-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
