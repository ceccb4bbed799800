// Structured logs: one JSON object a line (`time`, `level`, `event`, then fields), written to stderr
// by default. What reaches a log line is chosen here, never copied from a request:
//
// - errors are summarised by errorSummary: the class, the SQLSTATE and the names of the constraint,
//   table and column for database errors (never their message or detail, which quote the bound
//   values: "invalid input syntax for type integer: "hunter2""), and for other errors a message
//   whose quoted parts are blanked, plus the stack frames;
// - a field named like a contract field marked personal or secret (x-svc-personal, x-svc-secret) is
//   written as "[redacted]" (setLogRedactions, from the registry at start);
// - JSON.stringify escapes control characters, so a line is always text.
//
// Every `log` a module receives is `(line: string) => void` taking a line made by logLine.

export type LogLevel = 'info' | 'warn' | 'error';
type Scalar = string | number | boolean | null | undefined;
export type LogFields = Record<string, Scalar | Record<string, Scalar | string[]> | string[]>;

let redacted: ReadonlySet<string> = new Set(['authorization', 'password', 'secret', 'token']);

/** Field names the contract marks personal or secret (added to the built-in few). */
export function setLogRedactions(names: Iterable<string>): void {
  redacted = new Set([...redacted, ...[...names].map((n) => n.toLowerCase())]);
}

function redact(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    out[k] = redacted.has(k.toLowerCase()) ? '[redacted]' : v;
  }
  return out;
}

export function logLine(level: LogLevel, event: string, fields: LogFields = {}): string {
  return JSON.stringify({ time: new Date().toISOString(), level, event, ...redact(fields) });
}

/** The default sink: stderr, one line each. */
export function stderrLog(line: string): void {
  process.stderr.write(`${line}\n`);
}

interface DbErrorShape {
  code?: unknown;
  constraint?: unknown;
  constraint_name?: unknown;
  table?: unknown;
  table_name?: unknown;
  column?: unknown;
  column_name?: unknown;
  routine?: unknown;
  severity?: unknown;
}

function isSqlState(code: unknown): code is string {
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}

/** The database error behind err (drizzle wraps the driver's in `cause`), if any. */
function databaseError(err: unknown): DbErrorShape | null {
  for (let e = err as { cause?: unknown } | null, depth = 0; e && typeof e === 'object' && depth < 5; e = e.cause as never, depth++) {
    if (isSqlState((e as DbErrorShape).code)) return e as DbErrorShape;
  }
  return null;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** Blanks every quoted part of a message ("…", '…', `…`): where engines quote the data they saw. */
export function blankQuoted(message: string): string {
  return message
    .replace(/"(?:[^"\\]|\\.)*"/g, '"…"')
    .replace(/'(?:[^'\\]|\\.)*'/g, "'…'")
    .replace(/`(?:[^`\\]|\\.)*`/g, '`…`')
    .slice(0, 300); // not a contract limit: the longest error message kept in a log line
}

/**
 * An error whose message the runtime composed from no request data (a handler result that breaks
 * the contract: operation, pointers, schema messages): logged as it is, quotes included.
 */
export class SafeMessageError extends Error {
  override name = 'SafeMessageError';
}

/** What a log line may say about an error. */
export function errorSummary(err: unknown): Record<string, Scalar | string[]> {
  const name = err instanceof Error ? err.name : typeof err;
  const frames = err instanceof Error && err.stack ? err.stack.split('\n').filter((l) => /^\s+at /.test(l)).slice(0, 12).map((l) => l.trim()) : [];
  const db = databaseError(err);
  if (db) {
    return {
      name,
      sqlState: db.code as string,
      constraint: str(db.constraint) ?? str(db.constraint_name),
      table: str(db.table) ?? str(db.table_name),
      column: str(db.column) ?? str(db.column_name),
      routine: str(db.routine),
      stack: frames,
    };
  }
  const message = err instanceof Error ? err.message : typeof err === 'string' ? err : '';
  return { name, message: err instanceof SafeMessageError ? message.slice(0, 2000) : blankQuoted(message), stack: frames };
}
