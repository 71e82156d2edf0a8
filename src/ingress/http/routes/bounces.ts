/**
 * Bounce routes: each tenant's suppression list (its key for its own list, the
 * admin token for any), the mailbox messages the bounce poller handled
 * (unmatched ones are the admin's to look at), and the pollers' state.
 */
import { Hono } from 'hono';
import { z } from 'zod';
import type { BounceLedger, MailboxStatus } from '../../../core/bounce/index.js';
import { requireAdmin, scopeTenantOrAll, type SuppressionService } from '../../../core/tenant/index.js';
import type { HttpEnv } from '../env.js';
import { readBody, readQuery, validate } from '../request-input.js';
import { json, on, type RouteDoc } from '../route-doc.js';
import { tenantScope } from '../schemas.js';
import { okOnly } from '../view-schemas/field.js';
import { suppressionAdded, suppressionPage } from '../view-schemas/suppression.js';
import { viewBounceMessage } from '../views/bounce-message-view.js';
import { commandContext } from './tenants.js';

const limit = z.coerce
  .number()
  .int()
  .min(1)
  .max(1000)
  .optional()
  .meta({ description: 'Entries per page, 1-1000. Default 100.', examples: [100] });
const address = z.string().min(3).max(320);

const suppressionsQuery = z
  .object({
    tenant_id: tenantScope('required'),
    after: z
      .string()
      .regex(/^[0-9a-z]{1,64}$/, 'expected the `next` of a page')
      .optional()
      .meta({
        description: "The `next` of the previous page (an entry's `digest`): the entries after it.",
        examples: ['a3f09c1b27d4e6a5b8c90'],
      }),
    address: address.optional().meta({
      description:
        "Only this address's entry, any case. Addresses are kept sealed and matched by digest: there is no prefix or domain filter.",
      examples: ['ann@example.net'],
    }),
    limit,
  })
  .strict();
const suppressionBody = z
  .object({
    tenant_id: tenantScope('required'),
    address: address.meta({
      description: 'The e-mail address to stop sending to (an addr-spec; stored in lower case).',
      examples: ['ann@example.net'],
    }),
    reason: z
      .string()
      .max(500)
      .nullable()
      .optional()
      .meta({ description: 'Why, for people (at most 500 characters).', examples: ['asked to be removed by phone'] }),
    expires_ts: z
      .number()
      .int()
      .positive()
      .nullable()
      .optional()
      .meta({
        description: 'Epoch seconds when the entry lapses by itself; null or absent: until removed.',
        examples: [1767225600],
      }),
  })
  .strict();
const suppressionDeleteQuery = z.object({ tenant_id: tenantScope('required') }).strict();
const bouncesQuery = z
  .object({
    tenant_id: tenantScope('every tenant'),
    disposition: z
      .enum(['processed', 'unmatched', 'not_bounce'])
      .optional()
      .meta({
        description:
          '`processed`: applied to a message of ours; `unmatched`: a bounce no message of ours fits; `not_bounce`: mail that is not a bounce.',
        examples: ['unmatched'],
      }),
    before: z.coerce
      .number()
      .int()
      .positive()
      .optional()
      .meta({ description: 'The `next` of the previous page: entries older than it.', examples: [4812] }),
    limit,
  })
  .strict();

const view = (suppression: {
  address: string;
  digest: string;
  reason: string | null;
  source: string;
  createdAt: number;
  expiresAt: number | null;
}) => ({
  address: suppression.address,
  digest: suppression.digest,
  reason: suppression.reason,
  source: suppression.source,
  created_ts: Math.floor(suppression.createdAt / 1000),
  expires_ts: suppression.expiresAt === null ? null : Math.floor(suppression.expiresAt / 1000),
});

export const BOUNCE_ROUTES = {
  suppressions: {
    method: 'get',
    path: '/suppressions',
    tag: 'Bounces and suppressions',
    summary: "A tenant's suppression list, in the order of the addresses' digests",
    description:
      'Addresses are kept sealed and matched by a keyed digest: the list is paged in digest order (stable, unrelated to the addresses) and filtered by exact address only. `next` is the `after` of the next page; expired entries are left out.',
    access: 'tenant',
    query: suppressionsQuery,
    responses: { 200: json('a page of the list', suppressionPage) },
  },
  suppress: {
    method: 'post',
    path: '/suppression',
    tag: 'Bounces and suppressions',
    summary: "Add an address to a tenant's suppression list",
    description:
      '`tenant_id` is implied by a tenant key. New mail to the address is refused until it is removed or `expires_ts` passes.',
    access: 'tenant',
    body: suppressionBody,
    responses: { 201: json('added', suppressionAdded) },
    errors: ['NOT_FOUND'],
  },
  unsuppress: {
    method: 'delete',
    path: '/suppression/{address}',
    tag: 'Bounces and suppressions',
    summary: "Remove an address from a tenant's suppression list",
    access: 'tenant',
    // Any text: an address that is not on the list answers 404 whatever it looks like.
    params: {
      address: z.string().meta({ description: 'The address to remove, URL-encoded.', examples: ['ann%40example.net'] }),
    },
    query: suppressionDeleteQuery,
    responses: { 200: json('removed', okOnly) },
    errors: ['NOT_FOUND'],
  },
  bounces: {
    method: 'get',
    path: '/bounces',
    tag: 'Bounces and suppressions',
    summary: 'Handled bounce mailbox messages, newest first',
    description:
      "Each with `kind`, `disposition`, `unmatched_reason`, `matched_by`, the message and the verdict per recipient. A tenant key sees its own messages' bounces only; `next` is the `before` of the next page.",
    access: 'tenant',
    query: bouncesQuery,
    responses: { 200: json('`{"bounces":[...],"next":...}`') },
  },
  mailboxStatus: {
    method: 'get',
    path: '/bounce/status',
    tag: 'Bounces and suppressions',
    summary: "Each bounce mailbox poller's state, position, last error and counts",
    access: 'admin',
    responses: { 200: json('`{"mailboxes":[...]}`') },
  },
} as const satisfies Record<string, RouteDoc>;

export function bounceRoutes(deps: {
  suppressions: SuppressionService;
  ledger: BounceLedger;
  status: () => MailboxStatus[];
}): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  const routes = BOUNCE_ROUTES;

  on(app, routes.suppressions, (c) => {
    const query = readQuery(c, routes.suppressions.query);
    const page = deps.suppressions.list(commandContext(c), query.tenant_id, {
      ...(query.after === undefined ? {} : { after: query.after }),
      ...(query.address === undefined ? {} : { address: query.address }),
      ...(query.limit === undefined ? {} : { limit: query.limit }),
    });
    return c.json({ suppressions: page.suppressions.map(view), next: page.next });
  });

  on(app, routes.suppress, async (c) => {
    const body = await readBody(c, routes.suppress.body);
    const suppression = await deps.suppressions.add(commandContext(c), body.tenant_id, {
      address: body.address,
      reason: body.reason ?? null,
      expiresAt: body.expires_ts === undefined || body.expires_ts === null ? null : body.expires_ts * 1000,
    });
    return c.json({ ok: true, suppression: view(suppression) }, 201);
  });

  on(app, routes.unsuppress, async (c) => {
    const query = readQuery(c, routes.unsuppress.query);
    // The router has already decoded the path parameter: decoding again would misread a `%` of the address.
    await deps.suppressions.remove(
      commandContext(c),
      query.tenant_id,
      validate(routes.unsuppress.params.address, c.req.param('address'), 'address'),
    );
    return c.json({ ok: true });
  });

  // A tenant key sees the bounces tied to its own messages; unmatched ones belong to no tenant and are the admin's.
  on(app, routes.bounces, (c) => {
    const query = readQuery(c, routes.bounces.query);
    const limit = query.limit ?? 100;
    const rows = deps.ledger.list({
      disposition: query.disposition ?? null,
      tenantId: scopeTenantOrAll(c.get('principal'), query.tenant_id),
      before: query.before ?? null,
      limit,
    });
    return c.json({
      bounces: rows.map(viewBounceMessage),
      next: rows.length === limit ? (rows[rows.length - 1]?.seq ?? null) : null,
    });
  });

  on(app, routes.mailboxStatus, (c) => {
    requireAdmin(c.get('principal'));
    return c.json({ mailboxes: deps.status() });
  });

  return app;
}
