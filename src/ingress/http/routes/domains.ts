/** Sending-domain routes (DKIM): the admin token for any tenant, a tenant key for its own domains only. */
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { checkDomain, type SendingDomainService } from '../../../core/tenant/index.js';
import type { HttpEnv } from '../env.js';
import { domainPattern, identifier } from '../identifier.js';
import { readBody, readQuery, validate } from '../request-input.js';
import { json, on, type RouteDoc } from '../route-doc.js';
import { tenantQuery } from '../schemas.js';
import { okOnly } from '../view-schemas/field.js';
import {
  domainCheckAnswer,
  sendingDomainAdded,
  sendingDomainAnswer,
  sendingDomainList,
} from '../view-schemas/sending-domain.js';
import { commandContext } from './tenants.js';

const domainName = domainPattern.meta({
  description: 'The From domain its mail is signed for.',
  examples: ['example.com'],
});
const params = { domain: domainName };

const domainBody = z
  .object({
    tenant_id: identifier.optional().meta({
      description: 'The tenant it belongs to: required with the admin token, implied by a tenant key.',
      examples: ['acme'],
    }),
    domain: domainName,
    selector: z
      .string()
      .min(1)
      .max(63)
      .meta({ description: "The key's selector: one DNS label (letters, digits, hyphens).", examples: ['mp1'] }),
    ed25519: z
      .boolean()
      .optional()
      .meta({
        description:
          'An Ed25519 key too (RFC 8463), signing beside the RSA one under `<selector>-ed25519`. Default false.',
        examples: [true],
      }),
  })
  .strict()
  .transform((body) => ({
    tenantId: body.tenant_id,
    domain: body.domain,
    selector: body.selector,
    ed25519: body.ed25519,
  }));

const rotateBody = z
  .object({
    selector: z
      .string()
      .min(1)
      .max(63)
      .meta({ description: "The new keys' selector: one DNS label, not in use.", examples: ['mp2'] }),
    retire_after_seconds: z
      .number()
      .int()
      .min(0)
      .max(365 * 86_400)
      .optional()
      .meta({
        description: 'How long the replaced keys stay published once the new ones sign. Default a week.',
        examples: [604800],
      }),
  })
  .strict()
  .transform((body) => ({ selector: body.selector, retireAfterSeconds: body.retire_after_seconds }));

const domains = { tag: 'Sending domains', access: 'tenant' } as const;

export const DOMAIN_ROUTES = {
  add: {
    ...domains,
    method: 'post',
    path: '/domains',
    summary: 'Add a sending domain: the daemon makes its DKIM keys and answers the DNS records to publish',
    description:
      "Mail whose From domain is this one is DKIM-signed (relaxed/relaxed, after every header the proxy adds, `List-Unsubscribe` and `List-Unsubscribe-Post` included) by each of its keys: RSA 2048, and Ed25519 beside it when `ed25519` is true. The private keys never leave the daemon (sealed at rest like the relays' passwords); publish `dns_records` before sending: a signature whose key is not published fails verification. 409 when the tenant has the domain already.",
    body: domainBody,
    responses: { 201: json('added', sendingDomainAdded) },
    errors: ['NOT_FOUND', 'CONFLICT'],
  },
  list: {
    ...domains,
    method: 'get',
    path: '/domains',
    summary: "List a tenant's sending domains with their DNS records",
    query: tenantQuery,
    responses: { 200: json('the domains', sendingDomainList) },
    errors: ['NOT_FOUND'],
  },
  get: {
    ...domains,
    method: 'get',
    path: '/domains/{domain}',
    summary: 'Read a sending domain and its DNS records',
    params,
    query: tenantQuery,
    responses: { 200: json('the domain', sendingDomainAnswer) },
    errors: ['NOT_FOUND'],
  },
  check: {
    ...domains,
    method: 'get',
    path: '/domains/{domain}/check',
    summary: "Check a sending domain's DNS as the big receivers do: SPF, DKIM, DMARC, MX",
    description:
      "Asks the DNS (`dns.servers`, else the system's) now. SPF: does the record authorise the address of each relay the tenant's accounts send through (evaluated whole: includes, macros, the 10-lookup limit). DKIM: does each key's selector publish the key we sign with. DMARC: is there a record with a policy (DKIM aligns: we sign with d= the From domain). MX: does the domain receive mail. Each finding has a `fix`. The daemon also checks every domain by itself (`dns.check_interval_seconds`) and lists the failing ones in GET /status `domains`.",
    params,
    query: tenantQuery,
    responses: { 200: json('the findings', domainCheckAnswer) },
    errors: ['NOT_FOUND'],
  },
  rotate: {
    ...domains,
    method: 'post',
    path: '/domains/{domain}/rotate',
    summary:
      'Rotate the DKIM keys of a sending domain, under a new selector, without a failed verification at any moment',
    description:
      "Makes new keys (of the algorithms that sign now) under `selector`, `pending`: publish their records. They are not used until a check (GET /domains/{domain}/check, or the daemon's own every `dns.check_interval_seconds`) sees them all published; from then they sign, and the keys they replace are `retiring`: no longer used, their records to be kept published for `retire_after_seconds` (default a week), after which they are removed. 409 while a rotation is under way or the selector is in use.",
    params,
    query: tenantQuery,
    body: rotateBody,
    responses: { 200: json('the rotation begun', sendingDomainAnswer) },
    errors: ['NOT_FOUND', 'CONFLICT'],
  },
  remove: {
    ...domains,
    method: 'delete',
    path: '/domains/{domain}',
    summary: 'Remove a sending domain: its mail is no longer signed, and its keys are gone',
    params,
    query: tenantQuery,
    responses: { 200: json('removed', okOnly) },
    errors: ['NOT_FOUND'],
  },
} as const satisfies Record<string, RouteDoc>;

const pathDomain = (c: Context<HttpEnv>): string => validate(params.domain, c.req.param('domain'), 'domain');

export function domainRoutes(service: SendingDomainService): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  const routes = DOMAIN_ROUTES;
  on(app, routes.add, async (c) => {
    const input = await readBody(c, routes.add.body);
    return c.json({ ok: true, domain: await service.add(commandContext(c), input) }, 201);
  });
  on(app, routes.list, (c) => {
    const query = readQuery(c, routes.list.query);
    return c.json({ domains: service.list(commandContext(c), query.tenant_id) });
  });
  on(app, routes.get, (c) => {
    const domain = pathDomain(c);
    const query = readQuery(c, routes.get.query);
    return c.json({ domain: service.get(commandContext(c), query.tenant_id, domain) });
  });
  on(app, routes.check, async (c) => {
    const domain = pathDomain(c);
    const query = readQuery(c, routes.check.query);
    return c.json(await checkDomain(service, commandContext(c), query.tenant_id, domain));
  });
  on(app, routes.rotate, async (c) => {
    const domain = pathDomain(c);
    const query = readQuery(c, routes.rotate.query);
    const input = await readBody(c, routes.rotate.body);
    return c.json({ domain: await service.rotate(commandContext(c), query.tenant_id, domain, input) });
  });
  on(app, routes.remove, async (c) => {
    const domain = pathDomain(c);
    const query = readQuery(c, routes.remove.query);
    await service.remove(commandContext(c), query.tenant_id, domain);
    return c.json({ ok: true });
  });
  return app;
}
