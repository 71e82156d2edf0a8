/**
 * Signing in and out. The token is checked by the API's authenticator (the
 * same throttle of failed attempts per client address) and then forgotten:
 * the session holds the principal. Signing out deletes the session.
 */
import { Hono } from 'hono';
import { AppError } from '../../../core/index.js';
import { clientAddress } from '../../http/index.js';
import type { ConsoleDeps } from '../deps.js';
import type { ConsoleEnv } from '../env.js';
import { SignInPage } from '../pages/sign-in.js';
import { checkForm, clearSessionCookie, CONSOLE_PATH, setSessionCookie } from '../session.js';
import { STYLESHEET } from '../stylesheet.js';
import { readForm } from '../form-body.js';

export function signInRoutes(deps: ConsoleDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();

  app.get('/assets/console.css', (c) => {
    c.header('Content-Type', 'text/css; charset=utf-8');
    return c.body(STYLESHEET);
  });

  app.get('/', (c) => c.redirect(`${CONSOLE_PATH}/overview`, 303));

  app.get('/sign-in', (c) =>
    c.get('session') === null ? c.html(<SignInPage />) : c.redirect(`${CONSOLE_PATH}/overview`, 303),
  );

  app.post('/sign-in', async (c) => {
    const form = await readForm(c);
    checkForm(c, form);
    const token = typeof form.token === 'string' ? form.token.trim() : '';
    try {
      const { principal, proof } = deps.authenticator.authenticateForSession(token, clientAddress(c));
      const previous = c.get('session');
      if (previous !== null) deps.sessions.delete(previous.id);
      // A new id at every sign-in: an id planted before it (session fixation) is worth nothing.
      const session = deps.sessions.create(principal, proof);
      setSessionCookie(c, session);
      deps.log.info(
        { requestId: c.get('requestId'), actor: principal.kind === 'admin' ? 'admin' : `tenant:${principal.tenantId}` },
        'console sign-in',
      );
      return c.redirect(`${CONSOLE_PATH}/overview`, 303);
    } catch (error) {
      if (!(error instanceof AppError) || (error.code !== 'UNAUTHORIZED' && error.code !== 'AUTH_THROTTLED'))
        throw error;
      const throttled = error.code === 'AUTH_THROTTLED';
      if (throttled)
        c.header(
          'Retry-After',
          String((error.details as { retry_after_seconds?: number } | undefined)?.retry_after_seconds ?? 5),
        );
      const message = throttled
        ? 'Too many failed attempts from this address: wait a little and try again.'
        : 'That key or token was not accepted.';
      return c.html(<SignInPage error={message} />, throttled ? 429 : 401);
    }
  });

  app.post('/sign-out', async (c) => {
    const form = await readForm(c);
    checkForm(c, form);
    const session = c.get('session');
    if (session !== null) deps.sessions.delete(session.id);
    clearSessionCookie(c);
    return c.redirect(`${CONSOLE_PATH}/sign-in`, 303);
  });

  return app;
}
