/**
 * Bulk actions over the message list's filter: a confirmation page with the
 * count (GET /ui/bulk/:action?<filters>) and a POST that runs the same core
 * use-case as POST /commands/bulk, audited as `<actor>@console`.
 */
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { AppError } from '../../../core/index.js';
import { BULK_ACTIONS, type BulkAction, type BulkRequest } from '../../../core/message/index.js';
import { validate } from '../../http/index.js';
import type { ConsoleDeps } from '../deps.js';
import type { ConsoleEnv } from '../env.js';
import { blankToNull, filterOf, filtersQuery } from '../message-filter.js';
import { BULK_LABELS, BulkConfirmPage } from '../pages/bulk-confirm.js';
import { checkForm, currentSession } from '../session.js';
import { consoleContext } from '../request-context.js';
import { filterHref } from './message-routes.js';
import { readForm } from '../form-body.js';

/** Most messages one click acts on; a larger selection is done by confirming again. */
const CONSOLE_BULK_MAX = 10_000;

const actionOf = (c: Context<ConsoleEnv>): BulkAction => {
  const action = c.req.param('action') ?? '';
  if (!(BULK_ACTIONS as readonly string[]).includes(action))
    throw new AppError('NOT_FOUND', 'no such action', { details: { action } });
  return action as BulkAction;
};

const formFields = filtersQuery
  .omit({ cursor: true })
  .extend({ all_tenants: z.literal('1').optional(), _csrf: z.string().optional() });

export function bulkConsoleRoutes(deps: ConsoleDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();

  /** The request the filters make. The admin naming no tenant means every tenant: said on the page, and sent back explicitly. */
  const requestOf = (
    c: Context<ConsoleEnv>,
    action: BulkAction,
    fields: z.output<typeof formFields>,
    allTenants: boolean,
  ): BulkRequest => {
    const tenant = blankToNull(fields.tenant) ?? undefined;
    const admin = currentSession(c).principal.kind === 'admin';
    return {
      action,
      filter: filterOf(fields),
      tenantId: tenant,
      allTenants: admin && tenant === undefined && allTenants,
      max: CONSOLE_BULK_MAX,
    };
  };

  app.get('/bulk/:action', (c) => {
    const action = actionOf(c);
    const { cursor: _cursor, ...filters } = validate(filtersQuery, c.req.query(), 'filters');
    const session = currentSession(c);
    const request = requestOf(c, action, filters, true);
    const preview = deps.bulk.preview(consoleContext(c), request);
    return c.html(
      <BulkConfirmPage
        session={session}
        action={action}
        filters={filters}
        allTenants={request.allTenants}
        preview={preview}
        backHref={filterHref(filters, null)}
      />,
    );
  });

  app.post('/bulk/:action', async (c) => {
    const form = await readForm(c);
    checkForm(c, form);
    const action = actionOf(c);
    const { all_tenants: allTenants, _csrf, ...filters } = validate(formFields, form, 'form');
    const result = await deps.bulk.run(
      consoleContext(c),
      requestOf(c, action, { ...filters, all_tenants: allTenants }, allTenants === '1'),
    );
    const notes = [
      result.not_applicable === 0 ? null : `${result.not_applicable} matching not applicable`,
      result.remaining === 0 ? null : `${result.remaining} remain: confirm again for more`,
    ].filter((note) => note !== null);
    currentSession(c).flash =
      `${BULK_LABELS[action].done} ${result.done} message${result.done === 1 ? '' : 's'}${notes.length === 0 ? '' : ` (${notes.join('; ')})`}.`;
    return c.redirect(filterHref(filters, null), 303);
  });

  return app;
}
