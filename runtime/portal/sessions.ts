// Portal sessions: server-side rows (portal_sessions) behind the cookie `svc_session`, which holds a
// random secret (only its SHA-256 hash is stored) and is HttpOnly, Secure, SameSite=Lax, Path=/.
// A session is live while: not expired (SESSION_LIFETIME_MS after sign-in), not signed out, its user
// exists and is not disabled, and (signed in with an API key) that key is neither revoked nor expired.
// Every lookup checks all of it in one query, so revoking the user or the key ends the session at once.
import { createHash, randomBytes } from 'node:crypto';
import { and, eq, gt, inArray, isNull, lt, or } from 'drizzle-orm';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { Db } from '../data/client.ts';
import { apiKeys, portalSessions, portalSignIns, users } from '../data/schema.ts';
import { newId } from '../data/ids.ts';

export const SESSION_COOKIE = 'svc_session';
/** Ended sessions deleted by one sign-in. */
const SWEEP_BATCH = 100; // not a contract limit
/** Sessions last 8 hours from sign-in (decision: a working day; sign in again after). */
export const SESSION_LIFETIME_MS = 8 * 3600 * 1000; // not a contract limit
/** An OIDC sign-in must come back from the identity provider within 10 minutes. */
export const SIGN_IN_LIFETIME_MS = 10 * 60 * 1000; // not a contract limit
export const SIGN_IN_COOKIE = 'svc_sign_in';

export function hashToken(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

export interface SessionUser {
  sessionId: string;
  userId: string;
  name: string;
  email: string;
  kind: string; // operator | client_admin
  loginMethod: string;
  expiresAt: Date;
}

const COOKIE_FLAGS = { httpOnly: true, secure: true, sameSite: 'Lax', path: '/' } as const;

export class SessionStore {
  constructor(
    private readonly db: Db,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Starts a session for a user and sets its cookie on the response. */
  async start(c: Context, user: { userId: string; loginMethod: 'oidc' | 'api_key'; apiKeyId?: string | null }): Promise<void> {
    const secret = randomToken();
    const expiresAt = new Date(this.now().getTime() + SESSION_LIFETIME_MS);
    // Rows of sessions that ended more than a day ago are of no use; each sign-in sweeps them.
    // At most SWEEP_BATCH a sign-in: a short statement, and every sign-in takes its share.
    const ended = new Date(this.now().getTime() - 24 * 3600 * 1000); // not a contract limit
    await this.db.delete(portalSessions).where(inArray(portalSessions.id, this.db.select({ id: portalSessions.id }).from(portalSessions).where(lt(portalSessions.expiresAt, ended)).limit(SWEEP_BATCH)));
    await this.db.insert(portalSessions).values({
      id: newId('ses'),
      secretHash: hashToken(secret),
      userId: user.userId,
      loginMethod: user.loginMethod,
      apiKeyId: user.apiKeyId ?? null,
      expiresAt,
      createdAt: this.now(),
    });
    setCookie(c, SESSION_COOKIE, secret, { ...COOKIE_FLAGS, expires: expiresAt });
  }

  /** The live session of this request's cookie, or null. */
  async current(c: Context): Promise<SessionUser | null> {
    const secret = getCookie(c, SESSION_COOKIE);
    if (!secret || secret.length > 200) return null; // not a contract limit
    const now = this.now();
    const rows = await this.db
      .select({
        sessionId: portalSessions.id,
        userId: users.id,
        name: users.name,
        email: users.email,
        kind: users.kind,
        loginMethod: portalSessions.loginMethod,
        expiresAt: portalSessions.expiresAt,
      })
      .from(portalSessions)
      .innerJoin(users, eq(users.id, portalSessions.userId))
      .leftJoin(apiKeys, eq(apiKeys.id, portalSessions.apiKeyId))
      .where(
        and(
          eq(portalSessions.secretHash, hashToken(secret)),
          isNull(portalSessions.revokedAt),
          gt(portalSessions.expiresAt, now),
          isNull(users.disabledAt),
          or(
            isNull(portalSessions.apiKeyId),
            and(isNull(apiKeys.revokedAt), gt(apiKeys.expiresAt, now), eq(apiKeys.ownerUserId, portalSessions.userId)),
          ),
        ),
      )
      .limit(1);
    return rows[0] ?? null;
  }

  /** Ends this request's session (sign-out) and clears its cookie. */
  async end(c: Context): Promise<void> {
    const secret = getCookie(c, SESSION_COOKIE);
    if (secret) await this.db.update(portalSessions).set({ revokedAt: this.now() }).where(eq(portalSessions.secretHash, hashToken(secret)));
    deleteCookie(c, SESSION_COOKIE, COOKIE_FLAGS);
  }

  /** Ends every session of a user (for example when the user is disabled elsewhere). */
  async endAllOf(userId: string): Promise<void> {
    await this.db.update(portalSessions).set({ revokedAt: this.now() }).where(and(eq(portalSessions.userId, userId), isNull(portalSessions.revokedAt)));
  }

  /** Records an OIDC sign-in under way; its id travels in a short-lived cookie. */
  async beginSignIn(c: Context, pending: { state: string; nonce: string; codeVerifier: string; next: string }): Promise<void> {
    const secret = randomToken();
    await this.db.delete(portalSignIns).where(lt(portalSignIns.expiresAt, this.now()));
    await this.db.insert(portalSignIns).values({ id: hashToken(secret), ...pending, expiresAt: new Date(this.now().getTime() + SIGN_IN_LIFETIME_MS) });
    setCookie(c, SIGN_IN_COOKIE, secret, { ...COOKIE_FLAGS, maxAge: SIGN_IN_LIFETIME_MS / 1000 });
  }

  /** Takes (single use) the sign-in under way of this browser, or null. */
  async takeSignIn(c: Context): Promise<{ state: string; nonce: string; codeVerifier: string; next: string } | null> {
    const secret = getCookie(c, SIGN_IN_COOKIE);
    deleteCookie(c, SIGN_IN_COOKIE, COOKIE_FLAGS);
    if (!secret || secret.length > 200) return null; // not a contract limit
    const rows = await this.db
      .delete(portalSignIns)
      .where(and(eq(portalSignIns.id, hashToken(secret)), gt(portalSignIns.expiresAt, this.now())))
      .returning();
    const row = rows[0];
    return row ? { state: row.state, nonce: row.nonce, codeVerifier: row.codeVerifier, next: row.next } : null;
  }
}

/**
 * `next` after sign-in: only a path on this server ("/docs/rest?x=1"), never an absolute or
 * protocol-relative URL ("//evil", "/\\evil", "https://…"), so sign-in is no open redirect.
 */
export function safeNext(next: string | undefined | null): string {
  if (!next || next.length > 2000) return '/';
  if (!next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return '/';
  if (/[\u0000-\u001f\u007f\\]/.test(next)) return '/';
  try {
    const u = new URL(next, 'http://portal.invalid');
    if (u.origin !== 'http://portal.invalid') return '/';
    return u.pathname + u.search + u.hash;
  } catch {
    return '/';
  }
}

