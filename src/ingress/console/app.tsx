/**
 * The web console as its own hono app under /ui: server-rendered pages over
 * the core services the JSON API uses. It is not part of the API (nor of its
 * OpenAPI document); the server puts it in front of the API (front.ts).
 */
import { Hono, type Context } from 'hono';
import { AppError } from '../../core/index.js';
import { statusOf, type HttpError, bodyLimit } from '../http/index.js';
import type { ConsoleDeps } from './deps.js';
import type { ConsoleEnv } from './env.js';
import { ErrorPage } from './pages/error-page.js';
import { accountConsoleRoutes } from './routes/account-routes.js';
import { bulkConsoleRoutes } from './routes/bulk-routes.js';
import { messageConsoleRoutes } from './routes/message-routes.js';
import { overviewRoutes } from './routes/overview-routes.js';
import { signInRoutes } from './routes/sign-in-routes.js';
import { suppressionConsoleRoutes } from './routes/suppression-routes.js';
import { securityHeaders } from './security.js';
import { CONSOLE_PATH, loadSession } from './session.js';

/** A console form is a few fields; nothing larger is read. */
const MAX_FORM_BYTES = 16 * 1024;

const TITLES: Partial<Record<HttpError['code'], string>> = {
  NOT_FOUND: 'Not found',
  FORBIDDEN: 'Not allowed',
  VALIDATION_FAILED: 'Not understood',
};

function errorPage(c: Context<ConsoleEnv>, error: HttpError): Response | Promise<Response> {
  const session = c.get('session') ?? null;
  return c.html(
    <ErrorPage
      session={session}
      title={TITLES[error.code] ?? 'Something went wrong'}
      message={error.message}
      code={error.code}
    />,
    statusOf(error.code),
  );
}

export function createConsoleApp(deps: ConsoleDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>().basePath(CONSOLE_PATH);

  app.use('*', async (c, next) => {
    const requestId = deps.ids.uuid();
    c.set('requestId', requestId);
    c.header('X-Request-Id', requestId);
    const startedAt = performance.now();
    await next();
    const principal = c.get('session')?.principal;
    // The path only: a query string may carry a recipient's address, which stays out of the log.
    deps.log.info(
      {
        requestId,
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        durationMs: Math.round((performance.now() - startedAt) * 10) / 10,
        actor:
          principal === undefined
            ? null
            : principal.kind === 'admin'
              ? 'admin@console'
              : `tenant:${principal.tenantId}@console`,
      },
      'console request',
    );
  });
  app.use('*', securityHeaders());
  // Before the session is loaded: an over-limit form is refused unread, signed in or not.
  app.use('*', bodyLimit<ConsoleEnv>(MAX_FORM_BYTES));
  app.use('*', loadSession(deps.sessions, deps.authenticator));

  app.route('/', signInRoutes(deps));
  app.route('/', messageConsoleRoutes(deps));
  app.route('/', bulkConsoleRoutes(deps));
  app.route('/', overviewRoutes(deps));
  app.route('/', accountConsoleRoutes(deps));
  app.route('/', suppressionConsoleRoutes(deps));

  app.notFound((c) => errorPage(c, new AppError('NOT_FOUND', 'There is no such page.')));
  app.onError((error, c) => {
    if (error instanceof AppError) return errorPage(c, error as HttpError);
    deps.log.error(
      { err: error, method: c.req.method, path: c.req.path },
      'console request failed with an unexpected error',
    );
    return errorPage(
      c,
      new AppError('INTERNAL', 'Internal error: nothing was changed. The daemon log has the details.'),
    );
  });
  return app;
}
