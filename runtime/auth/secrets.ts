// API key secrets: generated here, shown once, kept only as a SHA-256 hash.
import { createHash, randomBytes } from 'node:crypto';

export type KeyMode = 'live' | 'test';

export const KEY_PREFIXES = { live: 'svc_sk_live_', test: 'svc_sk_test_' } as const;

/** A new secret: prefix + 32 random bytes in base64url (43 characters). */
export function generateApiKeySecret(mode: KeyMode): string {
  return KEY_PREFIXES[mode] + randomBytes(32).toString('base64url');
}

/** The stored form. A fast hash is right here: the secret has 256 bits of entropy. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** What may be shown of a key: its prefix and the first 4 characters of the random part. */
export function displayPrefix(secret: string): string {
  const mode = secret.startsWith(KEY_PREFIXES.test) ? 'test' : 'live';
  return secret.slice(0, KEY_PREFIXES[mode].length + 4);
}

export function looksLikeApiKey(credential: string): boolean {
  return credential.startsWith(KEY_PREFIXES.live) || credential.startsWith(KEY_PREFIXES.test);
}
