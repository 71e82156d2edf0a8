/**
 * Bounce routes: each tenant's suppression list (its key for its own list, the
 * admin token for any), the mailbox messages the bounce poller handled
 * (unmatched ones are the admin's to look at), and the pollers' state.
 */
import { Hono } from 'hono';
import { z } from 'zod';
import type { BounceLedger, MailboxStatus } from '../../../core/bounce.js';
import { requireAdmin, scopeTenantOrAll } from '../../../core/principal.js';
import type { SuppressionService } from '../../../core/suppression-service.js';
import type { HttpEnv } from '../env.js';
import { readBody, readQuery } from '../request-input.js';
import { identifier } from '../schemas.js';
import { commandContext } from './tenants.js';

const limit = z.coerce.number().int().min(1).max(1000);
const address = z.string().min(3).max(320);

const suppressionsQuery = z.object({ tenant_id: identifier.optional(), after: address.optional(), prefix: z.string().max(320).optional(), limit: limit.optional() }).strict();
const suppressionBody = z
  .object({
    tenant_id: identifier.optional(),
    address,
    reason: z.string().max(500).nullable().optional(),
    expires_ts: z.number().int().positive().nullable().optional(),
  })
  .strict();
const suppressionDeleteQuery = z.object({ tenant_id: identifier.optional() }).strict();
const bouncesQuery = z
  .object({
    tenant_id: identifier.optional(),
    disposition: z.enum(['processed', 'unmatched', 'not_bounce']).optional(),
    before: z.coerce.number().int().positive().optional(),
    limit: limit.optional(),
  })
  .strict();

const view = (suppression: { address: string; reason: string | null; source: string; createdAt: number; expiresAt: number | null }) => ({
  address: suppression.address,
  reason: suppression.reason,
  source: suppression.source,
  created_ts: Math.floor(suppression.createdAt / 1000),
  expires_ts: suppression.expiresAt === null ? null : Math.floor(suppression.expiresAt / 1000),
});

export function bounceRoutes(deps: { suppressions: SuppressionService; ledger: BounceLedger; status: () => MailboxStatus[] }): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();

  app.get('/suppressions', (c) => {
    const query = readQuery(c, suppressionsQuery);
    const page = deps.suppressions.list(commandContext(c), query.tenant_id, {
      ...(query.after === undefined ? {} : { after: query.after.toLowerCase() }),
      ...(query.prefix === undefined ? {} : { prefix: query.prefix }),
      ...(query.limit === undefined ? {} : { limit: query.limit }),
    });
    return c.json({ suppressions: page.suppressions.map(view), next: page.next });
  });

  app.post('/suppression', async (c) => {
    const body = await readBody(c, suppressionBody);
    const suppression = deps.suppressions.add(commandContext(c), body.tenant_id, {
      address: body.address,
      reason: body.reason ?? null,
      expiresAt: body.expires_ts === undefined || body.expires_ts === null ? null : body.expires_ts * 1000,
    });
    return c.json({ ok: true, suppression: view(suppression) }, 201);
  });

  app.delete('/suppression/:address', (c) => {
    const query = readQuery(c, suppressionDeleteQuery);
    deps.suppressions.remove(commandContext(c), query.tenant_id, decodeURIComponent(c.req.param('address')));
    return c.json({ ok: true });
  });

  // A tenant key sees the bounces tied to its own messages; unmatched ones belong to no tenant and are the admin's.
  app.get('/bounces', (c) => {
    const query = readQuery(c, bouncesQuery);
    const limit = query.limit ?? 100;
    const rows = deps.ledger.list({ disposition: query.disposition ?? null, tenantId: scopeTenantOrAll(c.get('principal'), query.tenant_id), before: query.before ?? null, limit });
    return c.json({ bounces: rows, next: rows.length === limit ? (rows[rows.length - 1]?.seq ?? null) : null });
  });

  app.get('/bounce/status', (c) => {
    requireAdmin(c.get('principal'));
    return c.json({ mailboxes: deps.status() });
  });

  return app;
}
