// Prefixed random identifiers: `apr_` + 20 characters of Crockford base32 (100 random bits).
// They match the contract's Id pattern (^[A-Za-z0-9_-]+$) and carry no personal data.
import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case

// The machinery's own kinds only: an API's record kinds and prefixes live beside its handlers
// (the Platform API's: handlers/data/ids.ts) and reach newId as an explicit prefix.
export const ID_PREFIXES = {
  client: 'cli',
  user: 'usr',
  membership: 'mem',
  apiKey: 'key',
  oauthClient: 'oac',
  oauthGrant: 'grt',
  approval: 'apr',
  event: 'evt',
  webhookEndpoint: 'whe',
  webhookDelivery: 'whd',
  operation: 'op',
  file: 'fil',
  upload: 'upl',
  request: 'req',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

// Random bytes are drawn from a pool filled by the CSPRNG a few kilobytes at a time (as Node's own
// randomUUID does): one randomBytes call per id was 2.4% of a write's CPU under load (docs/writes.md).
const POOL_BYTES = 4096; // not a contract limit
const pool = Buffer.alloc(POOL_BYTES);
let poolAt = POOL_BYTES;

/** n characters of random base32. */
export function randomBase32(n: number): string {
  let out = '';
  for (let i = 0; i < n; i++) {
    if (poolAt === POOL_BYTES) {
      randomFillSync(pool);
      poolAt = 0;
    }
    out += ALPHABET[pool[poolAt++]! & 31];
  }
  return out;
}

/** A new id for a machinery kind (newId('approval') -> apr_…) or with an explicit prefix (newId('abc')). */
export function newId(kind: IdKind | string, length = 20): string {
  const prefix = (ID_PREFIXES as Record<string, string>)[kind] ?? kind;
  return `${prefix}_${randomBase32(length)}`;
}
