/**
 * Accounts in the console: the list, one account's page, and its actions (save the form,
 * resume a paused account, test the connection), each a POST with the session's CSRF token
 * that runs the same core use-case as the API, audited as `<actor>@console`.
 */
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import type { AccountInput } from '../../../core/account/index.js';
import { validate, viewAccountState, viewConnectionTest, type ConnectionTestView } from '../../http/index.js';
import type { ConsoleDeps } from '../deps.js';
import type { ConsoleEnv } from '../env.js';
import { accountHref, AccountPage, AccountsPage } from '../pages/accounts.js';
import { checkForm, currentSession } from '../session.js';
import { consoleContext, takeNotice } from '../request-context.js';
import { readForm } from '../form-body.js';

const pathParams = z.object({ tenant: z.string().min(1).max(64), id: z.string().min(1).max(64) });
const blank = (text: unknown): unknown => (typeof text === 'string' && text.trim() === '' ? undefined : text);
const count = z.preprocess(blank, z.coerce.number().int().min(1).max(1_000_000_000).optional());
/** The edit form as a browser posts it: numbers as text, an empty limit for none, an empty password to keep the stored one. */
const accountForm = z.object({
  host: z.string().trim().min(1).max(255),
  port: z.coerce.number().int().min(1).max(65535),
  tls_mode: z.enum(['implicit', 'starttls', 'none']),
  user: z.string().max(255).optional().default(''),
  password: z.string().max(1024).optional().default(''),
  limit_per_minute: count,
  limit_per_hour: count,
  limit_per_day: count,
  max_connections: z.coerce.number().int().min(1).max(100),
});

export function accountConsoleRoutes(deps: ConsoleDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();

  app.get('/accounts', async (c) => {
    const accounts = await deps.accounts.list(consoleContext(c), undefined);
    return c.html(
      <AccountsPage session={currentSession(c)} accounts={accounts.map(viewAccountState)} notice={takeNotice(c)} />,
    );
  });

  const page = async (c: Context<ConsoleEnv>, test: ConnectionTestView | null) => {
    const { tenant, id } = validate(pathParams, c.req.param(), 'account');
    const account = viewAccountState(await deps.accounts.get(consoleContext(c), tenant, id));
    return c.html(<AccountPage session={currentSession(c)} account={account} notice={takeNotice(c)} test={test} />);
  };

  app.get('/accounts/:tenant/:id', (c) => page(c, null));

  app.post('/accounts/:tenant/:id/save', async (c) => {
    const body = await readForm(c);
    checkForm(c, body);
    const { tenant, id } = validate(pathParams, c.req.param(), 'account');
    const form = validate(accountForm, body, 'account');
    const input: AccountInput = {
      id,
      tenantId: tenant,
      host: form.host,
      port: form.port,
      tlsMode: form.tls_mode,
      user: form.user.trim() === '' ? null : form.user.trim(),
      ...(form.password === '' ? {} : { password: form.password }),
      limitPerMinute: form.limit_per_minute ?? null,
      limitPerHour: form.limit_per_hour ?? null,
      limitPerDay: form.limit_per_day ?? null,
      maxConnections: form.max_connections,
    };
    // Loaded first: the console edits an account, it does not create one under a typed URL.
    await deps.accounts.get(consoleContext(c), tenant, id);
    await deps.accounts.upsert(consoleContext(c), input);
    currentSession(c).flash = `Account ${id} saved.`;
    return c.redirect(accountHref({ tenant_id: tenant, id }), 303);
  });

  app.post('/accounts/:tenant/:id/resume', async (c) => {
    checkForm(c, await readForm(c));
    const { tenant, id } = validate(pathParams, c.req.param(), 'account');
    const { resumed } = deps.accounts.resume(consoleContext(c), tenant, id);
    currentSession(c).flash = resumed
      ? `Account ${id} resumed: its waiting mail is tried again now.`
      : `Account ${id} was not paused.`;
    return c.redirect(accountHref({ tenant_id: tenant, id }), 303);
  });

  // The result is shown on the page this POST answers: it is the test's only record.
  app.post('/accounts/:tenant/:id/test', async (c) => {
    checkForm(c, await readForm(c));
    const { tenant, id } = validate(pathParams, c.req.param(), 'account');
    const result = await deps.accounts.test(consoleContext(c), tenant, id);
    return page(c, viewConnectionTest(result));
  });

  return app;
}
