// Bearer secrets in results (the contract's `x-svc-secret: true` fields, listed per operation as JSON
// pointers in generated/registry.ts `secretPointers`). DESIGN.md's rules, applied in one place:
//
// - the answer to the credential that caused the write carries the secret, once;
// - a copy the service must keep (an idempotency record, so a retry by the same credential gets the
//   same answer; an approved write's result, shown to its proposer) holds the secret sealed with
//   AES-256-GCM: `svc-sealed:v1:` + base64url(iv | tag | ciphertext), the operation id and pointer
//   as additional data, so a sealed value cannot be moved to another field;
// - every other view (dry-run previews, approval views of other credentials, event data) has the
//   member removed; a removed member is absent, never a placeholder a client could mistake for it.
//
// The key: SVC_SECRET_KEY (32 bytes, base64/base64url or 64 hex digits), else one generated on first
// use and kept in the database's settings table (fine for development; in production set
// SVC_SECRET_KEY so that a database copy alone cannot open the sealed values).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Db } from '../data/client.ts';
import { settings } from '../data/schema.ts';
import { parseSecretKey } from '../config.ts';

const SEALED_PREFIX = 'svc-sealed:v1:';
const KEY_SETTING = 'secret_fields_key';

export type SecretPointers = Readonly<Record<string, readonly string[]>>;

/** Walks one pointer (`*` = every array index) and replaces or removes (fn -> undefined) what it finds. Copies as it goes. */
function mapAt(value: unknown, parts: readonly string[], fn: (found: unknown) => unknown): unknown {
  if (parts.length === 0) return fn(value);
  if (value === null || typeof value !== 'object') return value;
  const [head, ...rest] = parts;
  if (Array.isArray(value)) {
    if (head !== '*') return value;
    return value.map((item) => mapAt(item, rest, fn));
  }
  const record = value as Record<string, unknown>;
  if (!Object.hasOwn(record, head!)) return value;
  const copy: Record<string, unknown> = { ...record };
  if (rest.length === 0) {
    const next = fn(record[head!]);
    if (next === undefined) delete copy[head!];
    else copy[head!] = next;
  } else {
    copy[head!] = mapAt(record[head!], rest, fn);
  }
  return copy;
}

function partsOf(pointer: string): string[] {
  return pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

export function isSealed(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(SEALED_PREFIX);
}

/** True when a stored value still holds a sealed secret anywhere. */
export function hasSealed(value: unknown): boolean {
  return value !== null && value !== undefined && JSON.stringify(value).includes(SEALED_PREFIX);
}

export interface SecretFields {
  /** True when the operation's result carries secrets. */
  has(operationId: string): boolean;
  /** The result with each secret removed: for previews, other credentials, events. */
  strip(operationId: string, result: unknown): unknown;
  /**
   * Loads the key (SVC_SECRET_KEY, else the database's, created on first use). Call it outside any
   * transaction before seal/open: a key created inside a rolled-back transaction would be lost.
   */
  ready(db: Db): Promise<void>;
  /** The result with each secret sealed, for storage. */
  seal(operationId: string, result: unknown): unknown;
  /** A stored result with its sealed secrets opened, for the credential that caused them. */
  open(operationId: string, stored: unknown): unknown;
  /** The clear secret values of a result (to make sure nothing else carries them). */
  values(operationId: string, result: unknown): string[];
}

export interface SecretFieldsOptions {
  pointers: SecretPointers;
  /** SVC_SECRET_KEY's bytes; null: the per-database key. */
  key: Buffer | null;
}

/** AES-256-GCM: `svc-sealed:v1:` + base64url(iv | tag | ciphertext), `aad` bound as additional data. */
function sealWith(key: Buffer, aad: string, clear: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(clear, 'utf8'), cipher.final()]);
  return SEALED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

function openWith(key: Buffer, aad: string, sealed: string): string {
  const raw = Buffer.from(sealed.slice(SEALED_PREFIX.length), 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}

/** The sealing key: SVC_SECRET_KEY when set, else the database's (created on first use), as createSecretFields uses. */
async function keyOf(db: Db): Promise<Buffer> {
  if (process.env.SVC_SECRET_KEY) return parseSecretKey(process.env.SVC_SECRET_KEY);
  await db.insert(settings).values({ key: KEY_SETTING, value: randomBytes(32).toString('base64url') }).onConflictDoNothing({ target: settings.key });
  const [row] = await db.select({ value: settings.value }).from(settings).where(eq(settings.key, KEY_SETTING));
  return Buffer.from(row!.value, 'base64url');
}

/**
 * One secret kept at rest (a webhook endpoint's signing secret): sealed with the same key and
 * cipher as stored results; `purpose` (for example `webhook_secret:whe_…`) is bound as additional
 * data so a sealed value cannot be moved to another record.
 */
export async function sealSecret(db: Db, purpose: string, clear: string): Promise<string> {
  return sealWith(await keyOf(db), purpose, clear);
}

/** Opens a value sealed by sealSecret for the same purpose. */
export async function openSecret(db: Db, purpose: string, sealed: string): Promise<string> {
  return openWith(await keyOf(db), purpose, sealed);
}

export function createSecretFields(options: SecretFieldsOptions): SecretFields {
  const { pointers } = options;
  let key: Buffer | null = options.key;

  let loading: Promise<void> | null = null;

  async function load(db: Db): Promise<void> {
    await db.insert(settings).values({ key: KEY_SETTING, value: randomBytes(32).toString('base64url') }).onConflictDoNothing({ target: settings.key });
    const [row] = await db.select({ value: settings.value }).from(settings).where(eq(settings.key, KEY_SETTING));
    key = Buffer.from(row!.value, 'base64url');
  }

  function keyNow(): Buffer {
    if (!key) throw new Error('secret fields: ready(db) was not awaited before seal/open');
    return key;
  }

  function each(operationId: string, result: unknown, fn: (found: unknown, pointer: string) => unknown): unknown {
    let out = result;
    for (const pointer of pointers[operationId] ?? []) out = mapAt(out, partsOf(pointer), (found) => fn(found, pointer));
    return out;
  }

  return {
    has: (operationId) => (pointers[operationId]?.length ?? 0) > 0,

    strip: (operationId, result) => each(operationId, result, () => undefined),

    async ready(db) {
      if (key) return;
      loading ??= load(db).finally(() => {
        loading = null;
      });
      await loading;
    },

    seal(operationId, result) {
      if (!pointers[operationId]) return result;
      const k = keyNow();
      return each(operationId, result, (found, pointer) => {
        if (typeof found !== 'string' || isSealed(found)) return found;
        return sealWith(k, `${operationId}${pointer}`, found);
      });
    },

    open(operationId, stored) {
      if (!pointers[operationId]) return stored;
      const k = keyNow();
      return each(operationId, stored, (found, pointer) => {
        if (!isSealed(found)) return found;
        return openWith(k, `${operationId}${pointer}`, found);
      });
    },

    values(operationId, result) {
      const found: string[] = [];
      each(operationId, result, (value) => {
        if (typeof value === 'string' && value !== '' && !isSealed(value)) found.push(value);
        return value;
      });
      return found;
    },
  };
}

/** Removes every member (at any depth) whose value is one of the given secrets: event data's last guard. */
export function withoutValues(value: unknown, secrets: ReadonlySet<string>): unknown {
  if (secrets.size === 0 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.filter((v) => !(typeof v === 'string' && secrets.has(v))).map((v) => withoutValues(v, secrets));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v === 'string' && secrets.has(v)) continue;
    out[k] = withoutValues(v, secrets);
  }
  return out;
}

/** Removes every sealed value (at any depth): what a stored result shows anyone but the credential that caused it. */
export function withoutSealed(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.filter((v) => !isSealed(v)).map(withoutSealed);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (isSealed(v)) continue;
    out[k] = withoutSealed(v);
  }
  return out;
}
