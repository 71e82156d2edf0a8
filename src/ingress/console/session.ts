/**
 * The session cookie and the checks every request passes: a known, live
 * session (else to the sign-in page), and on every POST the session's CSRF
 * token plus, when the browser sends one, an Origin of this very host.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { AppError } from '../../core/index.js';
import type { Authenticator, Principal } from '../../core/tenant/index.js';
import type { ConsoleEnv } from './env.js';
import type { ConsoleSession, SessionStore } from './session-store.js';

export const SESSION_COOKIE = 'mailproxy_console';
export const CONSOLE_PATH = '/ui';

const secure = (c: Context): boolean => new URL(c.req.url).protocol === 'https:';

/** A browser-session cookie (no Max-Age): the server's store decides when a session ends. */
export function setSessionCookie(c: Context<ConsoleEnv>, session: ConsoleSession): void {
  setCookie(c, SESSION_COOKIE, session.id, {
    path: CONSOLE_PATH,
    httpOnly: true,
    sameSite: 'Strict',
    secure: secure(c),
  });
}

export function clearSessionCookie(c: Context<ConsoleEnv>): void {
  deleteCookie(c, SESSION_COOKIE, { path: CONSOLE_PATH, httpOnly: true, sameSite: 'Strict', secure: secure(c) });
}

/** Pages anyone may load: signing in, and what it is drawn with. */
const OPEN_PATHS = new Set([`${CONSOLE_PATH}/sign-in`, `${CONSOLE_PATH}/assets/console.css`]);

/**
 * The request's live session, or the sign-in page. A session whose key no longer
 * opens anything (rotated, expired, its tenant deleted) ends now: rotating a
 * leaked key must also close the browser sessions signed in with it.
 */
export function loadSession(
  sessions: SessionStore,
  authenticator: Pick<Authenticator, 'resolveProof'>,
): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    const id = getCookie(c, SESSION_COOKIE);
    let session = id === undefined ? null : sessions.touch(id);
    if (session !== null && !samePrincipal(authenticator.resolveProof(session.proof), session.principal)) {
      sessions.delete(session.id);
      session = null;
    }
    c.set('session', session);
    if (session === null && !OPEN_PATHS.has(c.req.path)) {
      if (id !== undefined) clearSessionCookie(c);
      return c.redirect(`${CONSOLE_PATH}/sign-in`, 303);
    }
    await next();
  };
}

function samePrincipal(now: Principal | null, then: Principal): boolean {
  if (now === null || now.kind !== then.kind) return false;
  return now.kind === 'admin' || (then.kind === 'tenant' && now.tenantId === then.tenantId);
}

/** A form POST: same origin, and the session's token in `_csrf`. The sign-in form has no session yet: origin only. */
export function checkForm(c: Context<ConsoleEnv>, form: Record<string, unknown>): void {
  const origin = c.req.header('origin');
  if (origin !== undefined && origin !== new URL(c.req.url).origin) {
    throw new AppError('FORBIDDEN', 'the form was sent from another site');
  }
  const session = c.get('session');
  if (session !== null && form._csrf !== session.csrfToken) {
    throw new AppError(
      'FORBIDDEN',
      'the form is stale or was not sent from this console; reload the page and try again',
    );
  }
}

export function currentSession(c: Context<ConsoleEnv>): ConsoleSession {
  const session = c.get('session');
  if (session === null) throw new AppError('UNAUTHORIZED', 'sign in first');
  return session;
}
