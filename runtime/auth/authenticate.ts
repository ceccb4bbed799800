// Authentication: `Authorization: Bearer <credential>` -> Principal (runtime/handler-types.ts).
//
// Decisions (the spec leaves these open; each is tested in test/auth/):
// - Header: scheme "Bearer" (any case), one credential of token68 characters. Missing, another
//   scheme, an empty or spaced credential -> 401 unauthorized. A credential in the query string is
//   refused by `credentialInUrl` (the transport calls it) -> unauthorized. A well-formed bearer that
//   is neither an API key nor a JWT -> invalid_token.
// - API keys: looked up by SHA-256 of the secret (the secret itself is never kept, cached or
//   logged; the cache is keyed by the hash). Refused (invalid_token): unknown, revoked, expired
//   (expiresAt, and never later than createdAt + 90 days), a request IP outside a non-empty
//   allowlist (CIDR or single addresses, IPv4 and IPv6; IPv4-mapped IPv6 is read as IPv4; no IP
//   known -> refused), an owner that is missing, disabled, or not an operator (keys act for
//   operators; client admins sign in with OAuth).
//   An unbound key is an `operator` principal (it may call operator-audience operations for its
//   owner) with its owner's client scope (allClients, or the clients of active memberships). A key
//   with clientIds is a `service_account`: its client scope is those clients, narrowed to its
//   owner's live reach. No API key is ever widened by visibility rules 1-3 (Policy.widened).
//   Lookups (key + owner + memberships) are cached 5 s of real time, so a role or membership change
//   takes effect within 5 s; expiry and the allowlist are checked on every request, revokedAt on
//   every cache miss. NOTIFY svc_key_revoked (payload: key id, see notifyKeyRevoked) drops that
//   key's entry on every instance at once; a payload that is not a key id clears the whole cache.
//   An unknown key's hash is remembered as a miss for the same 5 s (at most KEY_CACHE_MAX), so a
//   repeated bad key costs no database round trip; every NOTIFY on that channel (a key created,
//   rotated or revoked anywhere) forgets all misses, so a new key is never refused by a stale miss. lastUsedAt is written at most once a minute per key, off the
//   request path (fire and forget; close() waits for pending writes).
// - OAuth: jose jwtVerify with our KeySetCache (key-set.ts), issuer = config.oauthIssuer,
//   asymmetric algorithms only, exp required, 30 s clock tolerance. Audience: `{baseUrl}/mcp` or
//   `{baseUrl}` anywhere in aud is accepted; a token whose only audience is `authenticated` is
//   accepted in audLegacyMode 'accept' and refused in 'reject'; anything else is refused.
//   No issuer or JWKS URL configured -> not_configured (Retry-After: 30), like an empty key set.
//   The key set is fetched lazily on the first token; a server may warm it with jwks.refresh().
//   sub -> users.oauthSubject (unknown or disabled -> invalid_token). Client id: `client_id`, else
//   `azp`; neither -> invalid_token. Token scopes: `scope` (space separated) or `scp` (array).
//   Granted = the union of the user's active (not revoked) grants for that client (grantedScopes):
//   service scopes are consented on the grant, never requested, so a token carrying only
//   `openid email profile` gets the grant's scopes; a token whose scope names service scopes is
//   narrowed to them (never widened). A grant for (user, client) revoked after the token's iat
//   (any revoked grant when the token has no iat) -> invalid_token: the token may have been issued
//   under it. No grant row at all -> nothing is granted: the token still authenticates (meta.get
//   and oauth_grants.* need no scope, so the caller can see and fix its state) with no scope.
//   allowlist mode: the client needs an oauthClients row with allowlisted=true (otherwise
//   invalid_token) and granted is further ∩ its scopeCeiling. open mode ignores oauthClients.
//   credentialId = the (oldest active) grant id, else the jti, else "tok_" + 16 hex of SHA-256 of
//   the token (never the token).
// - Effective scopes = granted ∩ allowed by the LIVE role, read on every request (cache aside):
//   operator labels via deps.roleScopes (owner/admin/operator: every scope; viewer: none; an
//   unknown label: none). A client_admin: union over its active memberships of the membership
//   role when that role is a scope name, nothing otherwise; client scope = those memberships'
//   clients. Only canonical scopes (deps.scopes) ever come out.
// - Principal.role: the operator's users.role; for a client admin the sorted distinct roles of
//   its active memberships joined with "," (users.role when it has none).
import { createHash } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import { and, eq, isNull, sql, type SQL } from 'drizzle-orm';
import { jwtVerify, errors as joseErrors, type JWTPayload } from 'jose';
import type { Config } from '../config.ts';
import type { Db } from '../data/client.ts';
import { apiKeys, oauthClients, oauthGrants, users } from '../data/schema.ts';
import type { Principal } from '../handler-types.ts';
import { ProblemError } from '../problem-error.ts';
import { KeySetCache, keySetDefaults } from './key-set.ts';
import { hashSecret, looksLikeApiKey } from './secrets.ts';
import { keyExpiresAt, keyPrincipal, loadOwner, oauthPrincipal, type OwnerView, type RoleRules } from './principal.ts';
import { contractFeatures } from '../contract-facts.ts';

export const KEY_REVOKED_CHANNEL = 'svc_key_revoked';

/**
 * What moves whenever KEY_REVOKED_CHANNEL would be notified (a key created, rotated, revoked or
 * expired early; a membership changed; an OAuth grant revoked; a user disabled or enabled): polled
 * instead of LISTEN behind a transaction pooler without DATABASE_DIRECT_URL (runtime/data/notifications.ts).
 * Aggregates over small tables (credentials and memberships, not the per-write ones).
 */
export const KEY_CHANGES_WATERMARK = sql`select concat_ws('|',
  (select count(*) || ':' || coalesce(max(revoked_at)::text, '') || ':' || coalesce(max(rotated_at)::text, '') || ':' || coalesce(min(expires_at)::text, '') from api_keys),
  (select count(*) || ':' || coalesce(max(updated_at)::text, '') || ':' || coalesce(max(revoked_at)::text, '') from memberships),
  (select count(*) || ':' || coalesce(max(revoked_at)::text, '') from oauth_grants),
  (select count(disabled_at) || ':' || coalesce(max(disabled_at)::text, '') from users)) as w`;
export { apiKeyMaxLifetimeMs } from './principal.ts';
/** Key lookups are cached this long (real time), and at most KEY_CACHE_MAX of them. */
export const KEY_CACHE_TTL_MS = 5_000; // not a contract limit
const KEY_CACHE_MAX = 10_000; // not a contract limit
export const LAST_USED_INTERVAL_MS = 60_000;
export const LEGACY_AUDIENCE = 'authenticated';
const CLOCK_TOLERANCE_S = 30; // not a contract limit

export interface NotifyBus {
  listen(channel: string, fn: (payload: string) => void, options?: { watermark?: SQL | string }): Promise<() => Promise<void>>;
  notify(channel: string, payload: string): Promise<void>;
}

export interface AuthenticatorDeps {
  db: Db;
  /** LISTEN/NOTIFY for cross-instance key revocation; without it only the 5 s cache age applies. */
  database?: NotifyBus;
  config: Config;
  /** Canonical scopes (generated registry service.scopes). */
  scopes: readonly string[];
  /** Operator role label -> scopes it allows (generated registry service.roleScopes). */
  roleScopes: Record<string, readonly string[]>;
  now?: () => Date;
  /** Key set for OAuth tokens; by default one is made from config.oauthJwksUrl. */
  jwks?: KeySetCache;
  /** Called with short reasons (never a secret) when something is refused or fails in the background. */
  onEvent?: (event: string) => void;
}

export interface Authenticator {
  authenticate(authorization: string | undefined, ip: string | null): Promise<Principal>;
  /**
   * Like authenticate, but only from what is cached, with no database round trip: null when the
   * credential is not an API key whose lookup is cached (an address throttled for failed
   * authentication keeps its known-good keys working while unknown ones cost nothing).
   */
  authenticateCached(authorization: string | undefined, ip: string | null): Promise<Principal | null>;
  /** Drop cached lookups (one key id, or everything). */
  forget(keyId?: string): void;
  /** Resolves once the LISTEN subscription is in place (no-op without a database bus). */
  ready(): Promise<void>;
  /** Resolves once background writes (lastUsedAt) started so far are done. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** Tell every instance that a key was revoked (call after the revokedAt update commits). */
export async function notifyKeyRevoked(database: Pick<NotifyBus, 'notify'>, keyId: string): Promise<void> {
  await database.notify(KEY_REVOKED_CHANNEL, keyId);
}

/** The forget() of every authenticator open in this process (see announceKeyChange). */
const openAuthenticators = new Set<(keyId?: string) => void>();

/**
 * A key was created, rotated or revoked (or an owner's memberships changed: payload "*") inside the
 * transaction `db`: NOTIFY there, so PostgreSQL delivers it to every instance at commit (a rollback
 * or dry run delivers nothing), and drop the key from this process's caches now, so this instance's
 * very next request reads the committed row instead of waiting for its own notification to arrive.
 */
export async function announceKeyChange(db: Db, payload: string): Promise<void> {
  await db.execute(sql`select pg_notify(${KEY_REVOKED_CHANNEL}, ${payload})`);
  const id = payload.trim();
  for (const forget of openAuthenticators) forget(id && KEY_ID_RE.test(id) ? id : undefined);
}

const KEY_ID_RE = /^[\w.:-]{1,200}$/; // not a contract limit: an id length bound

const CREDENTIAL_PARAMS = new Set(['access_token', 'api_key', 'apikey', 'key', 'token', 'authorization', 'bearer']);

/** True when a URL's query carries something that looks like a credential (spec: never in a URL). */
export function credentialInUrl(url: string | URL): boolean {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url, 'http://x') : url;
  } catch {
    return false;
  }
  for (const [name, value] of parsed.searchParams) {
    if (CREDENTIAL_PARAMS.has(name.toLowerCase())) return true;
    if (looksLikeApiKey(value)) return true;
    // Paging cursors are base64url JSON too (they start with eyJ): a tampered one is the cursor's
    // 422, not a credential in the URL.
    if (name !== 'cursor' && /^eyJ[\w-]*\.[\w-]+\.[\w-]*$/.test(value)) return true;
  }
  return false;
}

function unauthorized(detail: string): ProblemError {
  return new ProblemError('unauthorized', detail);
}
function invalidToken(detail: string): ProblemError {
  return new ProblemError('invalid_token', detail);
}
function notConfigured(detail: string): ProblemError {
  return new ProblemError('not_configured', detail, { headers: { 'Retry-After': String(keySetDefaults().retryAfterSeconds) } });
}

const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;

/** The bearer credential of an Authorization header, or a ProblemError unauthorized. */
export function bearerCredential(authorization: string | undefined): string {
  if (authorization === undefined || authorization.trim() === '') throw unauthorized('An Authorization: Bearer credential is required.');
  const match = /^\s*([A-Za-z]+) +(\S+)\s*$/.exec(authorization);
  if (!match || match[1].toLowerCase() !== 'bearer') {
    throw unauthorized('The Authorization header must be "Bearer <API key or access token>".');
  }
  const credential = match[2];
  if (credential.length > 8192 || !TOKEN68.test(credential)) throw unauthorized('The bearer credential is malformed.');
  return credential;
}

// ---------------------------------------------------------------------------------------------
// IP allowlists

/** IPv4-mapped IPv6 (::ffff:10.0.0.1) -> IPv4; zone ids dropped. */
function normaliseIp(ip: string): { address: string; family: 'ipv4' | 'ipv6' } | null {
  let address = ip.trim().replace(/%.*$/, '');
  if (address.startsWith('[') && address.endsWith(']')) address = address.slice(1, -1);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) address = mapped[1];
  const v = isIP(address);
  if (v === 4) return { address, family: 'ipv4' };
  if (v === 6) return { address, family: 'ipv6' };
  return null;
}

/** A matcher for an allowlist (entries that do not parse match nothing). */
export function ipAllowlist(entries: readonly string[]): (ip: string | null) => boolean {
  const list = new BlockList();
  let usable = 0;
  for (const entry of entries) {
    const [addr, prefixText, ...rest] = entry.trim().split('/');
    if (rest.length) continue;
    const n = normaliseIp(addr ?? '');
    if (!n) continue;
    const max = n.family === 'ipv4' ? 32 : 128;
    // A mapped IPv4 written as IPv6 with a /96+ prefix: shift it onto IPv4.
    let prefix = prefixText === undefined ? max : Number(prefixText);
    if (n.family === 'ipv4' && /^::ffff:/i.test(addr) && prefixText !== undefined) prefix -= 96;
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > max || (prefixText !== undefined && !/^\d+$/.test(prefixText))) continue;
    try {
      if (prefix === max) list.addAddress(n.address, n.family);
      else list.addSubnet(n.address, prefix, n.family);
      usable += 1;
    } catch {
      /* not an address node accepts */
    }
  }
  return (ip) => {
    if (usable === 0 || ip === null) return false;
    const n = normaliseIp(ip);
    return n !== null && list.check(n.address, n.family);
  };
}

/**
 * OAuth granted scopes: the live grant's consented scopes (∩ the allowlist ceiling). Service scopes
 * are consented on the grant, never requested, so a token normally names only sign-in scopes
 * (openid email profile) and gets the grant's scopes; a token whose scope names service scopes is
 * narrowed to them, never widened.
 */
export function grantedScopes(
  consented: ReadonlySet<string>,
  tokenScopes: readonly string[],
  ceiling: ReadonlySet<string> | null,
  canonical: readonly string[],
): string[] {
  const requested = tokenScopes.filter((s) => canonical.includes(s));
  const narrow = requested.length > 0 ? new Set(requested) : null;
  return canonical.filter((s) => consented.has(s) && (ceiling === null || ceiling.has(s)) && (narrow === null || narrow.has(s)));
}

// ---------------------------------------------------------------------------------------------

interface KeyEntry {
  id: string;
  revoked: boolean;
  createdAt: Date;
  expiresAt: Date;
  rotatedAt: Date | null;
  scopes: string[];
  clientIds: string[];
  ipAllowlist: string[];
  allows: (ip: string | null) => boolean;
  owner: OwnerView | null;
  loadedAt: number;
  /** The key's principal, built once per cache entry (the entry is dropped whenever its key, owner or memberships change). */
  principal?: Principal;
}

export function createAuthenticator(deps: AuthenticatorDeps): Authenticator {
  const { db, config } = deps;
  const now = deps.now ?? (() => new Date());
  const onEvent = deps.onEvent ?? (() => {});
  const rules: RoleRules = { scopes: deps.scopes, roleScopes: deps.roleScopes };
  const jwks = deps.jwks ?? (config.oauthJwksUrl ? new KeySetCache({ url: config.oauthJwksUrl, onProblem: onEvent }) : null);
  const ownsJwks = !deps.jwks && jwks !== null;

  const keyCache = new Map<string, KeyEntry>(); // by secret hash
  /** Hashes no key has, with when that was read: a repeated unknown key costs no database round trip. */
  const missCache = new Map<string, number>();
  const lastUsedWritten = new Map<string, number>();
  const pending = new Set<Promise<unknown>>();
  let closed = false;
  let unlisten: (() => Promise<void>) | null = null;

  /** Drop aged entries; if the cache is still full, drop everything (it refills from the database). */
  function sweep(): void {
    const t = Date.now();
    for (const [hash, entry] of keyCache) if (t - entry.loadedAt >= KEY_CACHE_TTL_MS) keyCache.delete(hash);
    if (keyCache.size >= KEY_CACHE_MAX) keyCache.clear();
  }

  function forget(keyId?: string): void {
    // Any key event (created, rotated, revoked) may give a cached miss a key: forget every miss.
    missCache.clear();
    if (keyId === undefined) {
      keyCache.clear();
      return;
    }
    for (const [hash, entry] of keyCache) if (entry.id === keyId) keyCache.delete(hash);
  }

  openAuthenticators.add(forget);
  const listening: Promise<void> = deps.database
    ? deps.database
        .listen(KEY_REVOKED_CHANNEL, (payload) => {
          const id = payload.trim();
          if (id && KEY_ID_RE.test(id)) forget(id);
          else forget();
        }, { watermark: KEY_CHANGES_WATERMARK })
        .then(
          (fn) => {
            if (closed) return void fn().catch(() => {});
            unlisten = fn;
          },
          (err: unknown) => onEvent(`listen ${KEY_REVOKED_CHANNEL} failed: ${err instanceof Error ? err.message : String(err)}`),
        )
    : Promise.resolve();

  function track<T>(p: Promise<T>): void {
    const q = p.catch((err: unknown) => onEvent(`background write failed: ${err instanceof Error ? err.message : String(err)}`));
    pending.add(q);
    void q.finally(() => pending.delete(q));
  }

  // ------------------------------------------------------------------------------------------
  // API keys

  async function loadKey(hash: string): Promise<KeyEntry | null> {
    const [row] = await db.select().from(apiKeys).where(eq(apiKeys.secretHash, hash)).limit(1);
    if (!row) return null;
    return {
      id: row.id,
      revoked: row.revokedAt !== null,
      createdAt: row.createdAt,
      expiresAt: row.expiresAt,
      rotatedAt: row.rotatedAt,
      scopes: row.scopes,
      clientIds: row.clientIds,
      ipAllowlist: row.ipAllowlist,
      allows: ipAllowlist(row.ipAllowlist),
      owner: await loadOwner(db, row.ownerUserId),
      loadedAt: Date.now(),
    };
  }

  async function authenticateKey(secret: string, ip: string | null, cachedOnly = false): Promise<Principal | null> {
    if (secret.length > 200 || !/^svc_sk_(live|test)_[A-Za-z0-9_-]+$/.test(secret)) throw invalidToken('The API key is not valid.');
    const hash = hashSecret(secret);
    let entry = keyCache.get(hash);
    if (entry && Date.now() - entry.loadedAt >= KEY_CACHE_TTL_MS) {
      keyCache.delete(hash);
      entry = undefined;
    }
    if (!entry && cachedOnly) return null;
    if (!entry) {
      const missedAt = missCache.get(hash);
      if (missedAt !== undefined && Date.now() - missedAt < KEY_CACHE_TTL_MS) throw invalidToken('The API key is not valid.');
      const loaded = await loadKey(hash);
      if (!loaded) {
        if (!closed) {
          if (missCache.size >= KEY_CACHE_MAX) missCache.clear();
          missCache.set(hash, Date.now());
        }
        throw invalidToken('The API key is not valid.');
      }
      missCache.delete(hash);
      entry = loaded;
      if (!closed) {
        if (keyCache.size >= KEY_CACHE_MAX) sweep();
        keyCache.set(hash, entry);
      }
    }
    const at = now();
    if (entry.revoked) throw invalidToken('The API key has been revoked.');
    if (at.getTime() >= keyExpiresAt(entry)) throw invalidToken('The API key has expired.');
    if (entry.ipAllowlist.length > 0 && !entry.allows(ip)) throw invalidToken('The API key may not be used from this address.');
    const owner = entry.owner;
    if (!owner || owner.disabled) throw invalidToken('The API key owner is not active.');
    if (owner.kind !== 'operator') throw invalidToken('The API key owner is not an operator.');

    noteUse(entry.id, at);
    // One principal per cache entry; the caller copies it per request (app.ts authenticateRequest).
    entry.principal ??= keyPrincipal(owner, entry, rules);
    return entry.principal;
  }

  function noteUse(keyId: string, at: Date): void {
    const last = lastUsedWritten.get(keyId);
    if (closed || (last !== undefined && at.getTime() - last < LAST_USED_INTERVAL_MS)) return;
    lastUsedWritten.set(keyId, at.getTime());
    track(db.update(apiKeys).set({ lastUsedAt: at }).where(eq(apiKeys.id, keyId)));
  }

  /** oauth_grants.lastUsedAt, like a key's: at most once a minute per grant, off the request path. */
  function noteGrantUse(grantId: string, at: Date): void {
    const slot = `grant:${grantId}`;
    const last = lastUsedWritten.get(slot);
    if (closed || (last !== undefined && at.getTime() - last < LAST_USED_INTERVAL_MS)) return;
    lastUsedWritten.set(slot, at.getTime());
    track(db.update(oauthGrants).set({ lastUsedAt: at }).where(eq(oauthGrants.id, grantId)));
  }

  // ------------------------------------------------------------------------------------------
  // OAuth access tokens

  function audienceOk(aud: JWTPayload['aud']): boolean {
    const list = aud === undefined ? [] : Array.isArray(aud) ? aud : [aud];
    const base = config.baseUrl.replace(/\/+$/, '');
    if (list.includes(`${base}/mcp`) || list.includes(base)) return true;
    if (list.length === 1 && list[0] === LEGACY_AUDIENCE) {
      if (config.audLegacyMode === 'accept') return true;
      throw invalidToken('Tokens with the generic "authenticated" audience are no longer accepted; authorize again.');
    }
    return false;
  }

  function tokenScopes(payload: JWTPayload): string[] {
    const out: string[] = [];
    if (typeof payload.scope === 'string') out.push(...payload.scope.split(/\s+/).filter(Boolean));
    const scp = (payload as { scp?: unknown }).scp;
    if (Array.isArray(scp)) out.push(...scp.filter((s): s is string => typeof s === 'string'));
    else if (typeof scp === 'string') out.push(...scp.split(/\s+/).filter(Boolean));
    return out;
  }

  async function authenticateJwt(token: string): Promise<Principal> {
    if (!jwks || !config.oauthIssuer) throw notConfigured('OAuth token verification is not configured.');
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, jwks.getKey, {
        issuer: config.oauthIssuer,
        algorithms: [...jwks.algorithms],
        clockTolerance: CLOCK_TOLERANCE_S,
        requiredClaims: ['exp', 'sub'],
        currentDate: now(),
      }));
    } catch (err) {
      if (err instanceof ProblemError) throw err;
      if (err instanceof joseErrors.JWTExpired) throw invalidToken('The access token has expired.');
      if (err instanceof joseErrors.JWTClaimValidationFailed) throw invalidToken(`The access token was refused (${err.claim} claim).`);
      if (err instanceof joseErrors.JWKSNoMatchingKey) throw invalidToken('The access token is signed with an unknown key.');
      throw invalidToken('The access token was refused.');
    }
    if (!audienceOk(payload.aud)) throw invalidToken('The access token is not meant for this service (audience).');
    const sub = payload.sub!;
    const clientId =
      typeof (payload as { client_id?: unknown }).client_id === 'string'
        ? ((payload as { client_id: string }).client_id)
        : typeof payload.azp === 'string'
          ? (payload.azp as string)
          : null;
    if (!clientId) throw invalidToken('The access token names no OAuth client.');

    const [user] = await db.select({ id: users.id }).from(users).where(eq(users.oauthSubject, sub)).limit(1);
    const owner = user ? await loadOwner(db, user.id) : null;
    if (!owner || owner.disabled) throw invalidToken('The access token subject is not an active user.');
    if (owner.kind !== 'operator' && owner.kind !== 'client_admin') throw invalidToken('The access token subject is not an active user.');
    // Without client tenancy (svc.yaml features) there are no client administrators to act as.
    if (owner.kind === 'client_admin' && !contractFeatures().clientTenancy) throw invalidToken('This service has no client administrators.');

    let ceiling: Set<string> | null = null;
    if (config.oauthClientMode === 'allowlist') {
      const [policy] = await db.select().from(oauthClients).where(eq(oauthClients.id, clientId)).limit(1);
      if (!policy || !policy.allowlisted) throw invalidToken('This OAuth client is not allowed.');
      ceiling = new Set(policy.scopeCeiling);
    }

    const grants = await db
      .select({ id: oauthGrants.id, scopes: oauthGrants.scopes, createdAt: oauthGrants.createdAt, revokedAt: oauthGrants.revokedAt })
      .from(oauthGrants)
      .where(and(eq(oauthGrants.userId, owner.id), eq(oauthGrants.oauthClientId, clientId)));
    const live = grants.filter((g) => g.revokedAt === null);
    live.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
    // A grant revoked after the token was issued may be the grant the token came from: refuse it.
    // iat has whole seconds: a revocation within the token's second counts as after it. Without iat
    // the token's age is unknown, so any revoked grant for this client refuses it.
    const iat = typeof payload.iat === 'number' ? payload.iat : null;
    if (grants.some((g) => g.revokedAt !== null && (iat === null || Math.floor(g.revokedAt.getTime() / 1000) >= iat))) {
      throw invalidToken('The grant this access token was issued under has been revoked; authorize again.');
    }
    const consented = new Set(live.flatMap((g) => g.scopes));
    const granted = grantedScopes(consented, tokenScopes(payload), ceiling, rules.scopes);

    const credentialId =
      live[0]?.id ??
      (typeof payload.jti === 'string' && payload.jti ? payload.jti : `tok_${createHash('sha256').update(token).digest('hex').slice(0, 16)}`);
    for (const g of live) noteGrantUse(g.id, now());
    // exp is required (requiredClaims): an event stream opened with this token ends then.
    return { ...oauthPrincipal(owner, { credentialId, oauthClientId: clientId, granted }, rules), expiresAt: new Date(payload.exp! * 1000) };
  }

  return {
    async authenticate(authorization, ip) {
      const credential = bearerCredential(authorization);
      if (looksLikeApiKey(credential)) return (await authenticateKey(credential, ip))!;
      if (/^[\w-]+\.[\w-]+\.[\w-]+$/.test(credential)) return authenticateJwt(credential);
      throw invalidToken('The bearer credential is neither an API key nor an access token.');
    },
    async authenticateCached(authorization, ip) {
      const credential = bearerCredential(authorization);
      return looksLikeApiKey(credential) ? authenticateKey(credential, ip, true) : null;
    },
    forget,
    ready: () => listening,
    async flush() {
      await Promise.all([...pending]);
    },
    async close() {
      closed = true;
      openAuthenticators.delete(forget);
      keyCache.clear();
      missCache.clear();
      await listening;
      if (unlisten) {
        const fn = unlisten;
        unlisten = null;
        await fn().catch(() => {});
      }
      await Promise.all([...pending]);
      if (ownsJwks) jwks!.close();
    },
  };
}
