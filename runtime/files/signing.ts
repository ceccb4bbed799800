// Signed file URLs (files.upload_url, files.download_url): an HMAC-SHA256 over the method, the path,
// the expiry and the size limit, with a per-database secret (settings `file_url_secret`, created on
// first use, so every process sharing the database verifies the same URLs). The query parameters
// are `expires` and `signature` (never `token` or `key`, which the API reads as a credential in a
// URL). The URLs are bearer secrets: the contract marks them x-svc-secret, so the runtime keeps
// them out of audit, logs, previews and events (runtime/auth/secret-fields.ts).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Db } from '../data/client.ts';
import { settings } from '../data/schema.ts';

export const FILE_URL_SECRET_SETTING = 'file_url_secret';
export const UPLOAD_PATH = '/uploads';
export const DOWNLOAD_PATH = '/downloads';

export async function fileUrlSecret(db: Db): Promise<string> {
  const found = await db.select({ value: settings.value }).from(settings).where(eq(settings.key, FILE_URL_SECRET_SETTING));
  if (found[0]) return found[0].value;
  await db.insert(settings).values({ key: FILE_URL_SECRET_SETTING, value: randomBytes(32).toString('base64url') }).onConflictDoNothing({ target: settings.key });
  const [again] = await db.select({ value: settings.value }).from(settings).where(eq(settings.key, FILE_URL_SECRET_SETTING));
  return again!.value;
}

function mac(secret: string, method: string, path: string, expires: number, maxBytes: number): string {
  return createHmac('sha256', secret).update(`${method}\n${path}\n${expires}\n${maxBytes}`).digest('base64url');
}

/** `${baseUrl}${path}?expires=…&signature=…` valid until `expiresAt`. */
export function signUrl(secret: string, baseUrl: string, method: 'PUT' | 'GET', path: string, expiresAt: Date, maxBytes = 0): string {
  const expires = Math.floor(expiresAt.getTime() / 1000);
  const signature = mac(secret, method, path, expires, maxBytes);
  return `${baseUrl}${path}?expires=${expires}&signature=${signature}`;
}

export type SignatureCheck = 'ok' | 'invalid' | 'expired';

/** Checks a request's `expires` and `signature` against the path (altered -> invalid; past -> expired). */
export function checkSignature(secret: string, method: string, path: string, query: URLSearchParams, maxBytes: number, now: Date): SignatureCheck {
  const expiresText = query.get('expires') ?? '';
  const given = query.get('signature') ?? '';
  if (!/^\d{1,12}$/.test(expiresText) || given === '') return 'invalid';
  const expires = Number(expiresText);
  const want = Buffer.from(mac(secret, method, path, expires, maxBytes));
  const got = Buffer.from(given);
  if (want.length !== got.length || !timingSafeEqual(want, got)) return 'invalid';
  if (expires * 1000 <= now.getTime()) return 'expired';
  return 'ok';
}
