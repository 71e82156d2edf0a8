/** The overview page and the admin pages (tenants, a tenant with its report log, suppression lists): reads only, through the core services. */
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { viewTenant } from '../../../core/contracts/index.js';
import { requireAdmin, scopeTenantOrAll } from '../../../core/tenant/index.js';
import { throughputSeries } from '../../../core/message/index.js';
import { validate, viewAccountState, queueOverview, viewReportAttempt } from '../../http/index.js';
import type { ConsoleDeps } from '../deps.js';
import type { ConsoleEnv } from '../env.js';
import { SuppressionsPage, TenantsPage } from '../pages/admin.js';
import { TenantPage } from '../pages/tenant.js';
import { OverviewPage } from '../pages/overview.js';
import { CONSOLE_PATH, currentSession } from '../session.js';
import { consoleContext, takeNotice } from '../request-context.js';

const CHART_MINUTES = 60;
const tenantParam = z.string().min(1).max(64);
const suppressionsQuery = z.object({
  tenant: z.string().max(64).optional(),
  address: z.string().max(320).optional().default(''),
  after: z.string().max(64).optional(),
});

type ConsoleContext = Context<ConsoleEnv>;

export function overviewRoutes(deps: ConsoleDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  app.get('/overview', (c) => overviewPage(deps, c));
  app.get('/tenants', (c) => tenantsPage(deps, c));
  app.get('/tenants/:id', (c) => tenantPage(deps, c));
  app.get('/suppressions', (c) => suppressionsPage(deps, c));
  return app;
}

async function overviewPage(deps: ConsoleDeps, c: ConsoleContext) {
  const session = currentSession(c);
  const admin = session.principal.kind === 'admin';
  const tenantId = scopeTenantOrAll(session.principal, undefined);
  const now = deps.clock.now();
  // Whole minutes: the last bar is the minute in progress.
  const since = Math.floor(now / 60_000) * 60_000 - (CHART_MINUTES - 1) * 60_000;
  const reports = deps.reports
    .list()
    .filter((sync) => sync.clientSyncUrl !== null && (tenantId === null || sync.tenantId === tenantId));
  return c.html(
    <OverviewPage
      session={session}
      now={now}
      notice={takeNotice(c)}
      queue={queueOverview(deps.queue.counts(tenantId), deps.queue.oldestDue(tenantId, now), now)}
      throughput={throughputSeries(deps.throughput.perMinute(tenantId, since), since, CHART_MINUTES)}
      accounts={(await deps.accounts.list(consoleContext(c), undefined)).map(viewAccountState)}
      reports={reports}
      bounces={admin ? deps.bounces() : null}
      mirror={admin ? deps.mirror() : null}
      fleet={admin && deps.fleetMessages ? await deps.fleetMessages.queues() : null}
      failingDomains={deps.failingDomains().filter((domain) => tenantId === null || domain.tenant_id === tenantId)}
    />,
  );
}

function tenantsPage(deps: ConsoleDeps, c: ConsoleContext) {
  const session = currentSession(c);
  return c.html(<TenantsPage session={session} tenants={deps.tenants.list(consoleContext(c)).map(viewTenant)} />);
}

/** A tenant key sees its own tenant only (the service scopes it); the report log is the last 50 attempts. */
function tenantPage(deps: ConsoleDeps, c: ConsoleContext) {
  const tenant = deps.tenants.get(consoleContext(c), validate(tenantParam, c.req.param('id'), 'tenant'));
  return c.html(
    <TenantPage
      session={currentSession(c)}
      tenant={viewTenant(tenant)}
      sync={deps.reports.get(tenant.id)}
      attempts={(deps.reports.log(tenant.id, 50) ?? []).map(viewReportAttempt)}
    />,
  );
}

function suppressionsPage(deps: ConsoleDeps, c: ConsoleContext) {
  const session = currentSession(c);
  requireAdmin(session.principal);
  const query = validate(suppressionsQuery, c.req.query(), 'filters');
  const tenants = deps.tenants.list(consoleContext(c)).map(viewTenant);
  const tenant = query.tenant ?? tenants[0]?.id;
  const page =
    tenant === undefined
      ? null
      : deps.suppressions.list(consoleContext(c), tenant, {
          limit: 100,
          ...(query.address === '' ? {} : { address: query.address }),
          ...(query.after === undefined ? {} : { after: query.after }),
        });
  const next = page?.next ?? null;
  const nextHref =
    next === null || tenant === undefined
      ? null
      : `${CONSOLE_PATH}/suppressions?${new URLSearchParams({ tenant, address: query.address, after: next }).toString()}`;
  return c.html(
    <SuppressionsPage
      session={session}
      tenants={tenants}
      tenant={tenant ?? ''}
      address={query.address}
      suppressions={page?.suppressions ?? null}
      nextHref={nextHref}
      notice={takeNotice(c)}
    />,
  );
}
