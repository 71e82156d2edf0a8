/**
 * Suppressions in the console (admin, as the list page): add an address, and remove one
 * after a confirmation page; the same core service as POST /suppression and DELETE
 * /suppression/{address}, audited as `admin@console`.
 */
import { Hono } from 'hono';
import { z } from 'zod';
import { requireAdmin } from '../../../core/tenant/index.js';
import { validate } from '../../http/index.js';
import type { ConsoleDeps } from '../deps.js';
import type { ConsoleEnv } from '../env.js';
import { RemoveSuppressionPage } from '../pages/suppression-confirm.js';
import { checkForm, CONSOLE_PATH, currentSession } from '../session.js';
import { consoleContext } from '../request-context.js';
import { readForm } from '../form-body.js';

const target = z.object({ tenant: z.string().min(1).max(64), address: z.string().trim().min(1).max(320) });
const addForm = target.extend({ reason: z.string().trim().max(500).optional().default('') });
const listHref = (tenant: string): string =>
  `${CONSOLE_PATH}/suppressions?${new URLSearchParams({ tenant }).toString()}`;

export function suppressionConsoleRoutes(deps: ConsoleDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();

  app.post('/suppressions/add', async (c) => {
    const body = await readForm(c);
    checkForm(c, body);
    const session = currentSession(c);
    requireAdmin(session.principal);
    const form = validate(addForm, body, 'suppression');
    const added = await deps.suppressions.add(consoleContext(c), form.tenant, {
      address: form.address,
      reason: form.reason === '' ? null : form.reason,
    });
    session.flash = `${added.address} suppressed for tenant ${form.tenant}.`;
    return c.redirect(listHref(form.tenant), 303);
  });

  app.get('/suppressions/remove', (c) => {
    const session = currentSession(c);
    requireAdmin(session.principal);
    const query = validate(target, c.req.query(), 'suppression');
    return c.html(<RemoveSuppressionPage session={session} tenant={query.tenant} address={query.address} />);
  });

  app.post('/suppressions/remove', async (c) => {
    const body = await readForm(c);
    checkForm(c, body);
    const session = currentSession(c);
    requireAdmin(session.principal);
    const form = validate(target, body, 'suppression');
    await deps.suppressions.remove(consoleContext(c), form.tenant, form.address);
    session.flash = `${form.address} removed from tenant ${form.tenant}'s suppression list.`;
    return c.redirect(listHref(form.tenant), 303);
  });

  return app;
}
