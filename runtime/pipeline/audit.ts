// Audit: every call, REST and MCP, successful or refused. Recorded: request id, transport, principal
// kind and id, credential id, login method, MCP tool name, operation, method, path, status, outcome,
// problem code and duration. Never a request body, a token or a secret: the entry type has no field
// that could hold one, and paths never carry personal data (the contract's rule).
//
// Entries are queued and written in batches (one multi-row INSERT), so a call does not wait for its
// audit row; flush() writes what is queued (tests, shutdown). A failed write is logged and dropped
// rather than failing the call it describes.
import { sql } from 'drizzle-orm';
import type { Database, Db } from '../data/client.ts';
import { auditLog } from '../data/schema.ts';
import type { Principal } from '../handler-types.ts';
import type { Transport } from './types.ts';
import { errorSummary, logLine, stderrLog } from '../observability/log.ts';
import { problemStatus, toProblemError } from '../problem-documents.ts';

export type AuditOutcome = 'ran' | 'planned' | 'proposed' | 'read' | 'error';

export interface AuditEntry {
  requestId: string;
  transport: Transport;
  operationId: string | null;
  toolName: string | null;
  method: string;
  path: string;
  principal: Pick<Principal, 'kind' | 'id' | 'credentialId' | 'loginMethod'> | null;
  status: number;
  outcome: AuditOutcome;
  problemCode: string | null;
  durationMs: number;
  at?: Date;
}

/** What was asked: the request side of an audit entry. */
export type AuditedRequest = Pick<AuditEntry, 'requestId' | 'transport' | 'operationId' | 'toolName' | 'method' | 'path'>;

/** How a call ended: the result side of an audit entry. */
export type AuditedEnd = Pick<AuditEntry, 'status' | 'outcome' | 'problemCode'>;

/** The one builder of an audit entry: the request, who made it, how it ended, timed from `started` (performance.now()). */
export function auditEntry(request: AuditedRequest, principal: AuditEntry['principal'], end: AuditedEnd, started: number): AuditEntry {
  return {
    requestId: request.requestId,
    transport: request.transport,
    operationId: request.operationId,
    toolName: request.toolName,
    method: request.method,
    path: request.path,
    principal,
    status: end.status,
    outcome: end.outcome,
    problemCode: end.problemCode,
    durationMs: performance.now() - started,
  };
}

/** How a call that failed with err ended: its problem's status and code. */
export function failedWith(err: unknown): AuditedEnd {
  const p = toProblemError(err);
  return { status: problemStatus(p), outcome: 'error', problemCode: p.code };
}

/** The one audit row builder: an entry -> its audit_log row (path cut at 2048, duration in whole ms). */
export function auditRow(entry: AuditEntry): typeof auditLog.$inferInsert {
  return {
    at: entry.at ?? new Date(),
    requestId: entry.requestId,
    transport: entry.transport,
    operationId: entry.operationId,
    toolName: entry.toolName,
    method: entry.method,
    path: entry.path.slice(0, 2048),
    principalKind: entry.principal?.kind ?? null,
    principalId: entry.principal?.id ?? null,
    credentialId: entry.principal?.credentialId ?? null,
    loginMethod: entry.principal?.loginMethod ?? null,
    status: entry.status,
    outcome: entry.outcome,
    problemCode: entry.problemCode,
    durationMs: Math.max(0, Math.round(entry.durationMs)),
  };
}

export interface AuditorOptions {
  /** Flush when this many entries are queued (default 1000). */
  batchSize?: number;
  /** Flush this long after the first queued entry (default 200 ms). */
  delayMs?: number;
  /**
   * Rows a statement writes at most; a longer batch is written in slices of this many, the event loop
   * let run between them (default: 32 on PGlite, whole batches on PostgreSQL). PGlite runs each
   * statement on the server's own thread, about 50 us a row on the 2-core bench machine: a 1,000-row
   * INSERT held every request for 50-70 ms (docs/performance-reads.md); 32 rows hold it 1-2 ms.
   */
  sliceRows?: number;
  log?: (message: string) => void;
}

/** Rows an audit INSERT writes at most on PGlite (AuditorOptions.sliceRows); not a contract limit. */
const PGLITE_SLICE_ROWS = 32;

export class Auditor {
  private readonly database: Database;
  private queue: (typeof auditLog.$inferInsert)[] = [];
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();
  private readonly batchSize: number;
  private readonly delayMs: number;
  private readonly sliceRows: number;
  private readonly log: (message: string) => void;
  private closed = false;

  constructor(database: Database, options: AuditorOptions = {}) {
    this.database = database;
    this.batchSize = options.batchSize ?? 1000;
    this.delayMs = options.delayMs ?? 200; // not a contract limit: the audit batch delay
    this.sliceRows = options.sliceRows ?? (database.kind === 'pglite' ? PGLITE_SLICE_ROWS : Number.POSITIVE_INFINITY);
    this.log = options.log ?? stderrLog;
  }

  record(entry: AuditEntry): void {
    this.queue.push(auditRow(entry));
    if (this.closed) return void this.flush();
    if (this.queue.length >= this.batchSize) void this.flush();
    else if (!this.timer) this.timer = setTimeout(() => void this.flush(), this.delayMs);
  }

  /**
   * Writes a command's entry in the transaction of its effect, so an acknowledged write always has
   * its audit row, even when the process dies right after answering.
   */
  async recordIn(db: Db, entry: AuditEntry): Promise<void> {
    await db.insert(auditLog).values(auditRow(entry));
  }


  /** Writes every queued entry; resolves when they are in the table. */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const batch = this.queue;
    this.queue = [];
    this.writing = this.writing.then(async () => {
      for (let from = 0; from < batch.length; from += this.sliceRows) {
        // Between slices, let the requests that arrived meanwhile run (PGlite: see sliceRows).
        if (from > 0) await new Promise<void>((resolve) => setImmediate(resolve));
        await this.write(from === 0 && batch.length <= this.sliceRows ? batch : batch.slice(from, from + this.sliceRows));
      }
    });
    return this.writing;
  }

  /** One multi-row INSERT; a failure is logged and the rows dropped. */
  private async write(batch: (typeof auditLog.$inferInsert)[]): Promise<void> {
    try {
      // One JSON parameter for the whole batch (jsonb_to_recordset): far cheaper than a
      // parameter per column and row, on PGlite especially.
      const rows = batch.map((r) => ({ ...r, at: (r.at as Date).toISOString() }));
      await this.database.db.execute(sql`
        insert into audit_log (at, request_id, transport, operation_id, tool_name, method, path, principal_kind,
          principal_id, credential_id, login_method, status, outcome, problem_code, duration_ms)
        select at, "requestId", transport, "operationId", "toolName", method, path, "principalKind",
          "principalId", "credentialId", "loginMethod", status, outcome, "problemCode", "durationMs"
        from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as x(at timestamptz, "requestId" text, transport text,
          "operationId" text, "toolName" text, method text, path text, "principalKind" text, "principalId" text,
          "credentialId" text, "loginMethod" text, status integer, outcome text, "problemCode" text, "durationMs" integer)`);
    } catch (err) {
      this.log(logLine('error', 'audit_write_failed', { entries: batch.length, error: errorSummary(err) }));
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }
}
