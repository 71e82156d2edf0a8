/** Tenant routes (admin token only): create, list, read, update, delete, rotate the key. */
import { Hono, type Context } from 'hono';
import { AppError } from '../../../core/index.js';
import { viewTenant } from '../../../core/contracts/index.js';
import { requireAdmin, type CommandContext, type TenantService } from '../../../core/tenant/index.js';
import type { HttpEnv } from '../env.js';
import { readBody, readQuery, validate } from '../request-input.js';
import { json, on, type RouteDoc } from '../route-doc.js';
import { deleteQuery, identifier, rotateKeyBody, tenantCreateBody, tenantUpdateBody } from '../schemas.js';
import { okOnly } from '../view-schemas/field.js';
import { routeTestBody } from '../routing-schema.js';
import {
  issuedKey,
  routeTested,
  signingSecret,
  tenantAnswer,
  tenantCreated,
  tenantList,
  tenantUpdated,
} from '../view-schemas/tenant.js';
import { viewIssuedKey, viewSigningSecret } from '../views/tenant-view.js';

export function commandContext(c: Context<HttpEnv>): CommandContext {
  return { principal: c.get('principal'), correlationId: c.get('requestId') };
}

const params = { id: identifier.meta({ description: 'The tenant id.', examples: ['acme'] }) };
const tenant = { tag: 'Tenants', access: 'admin' } as const;

export const TENANT_ROUTES = {
  create: {
    ...tenant,
    method: 'post',
    path: '/tenant',
    summary: 'Create a tenant',
    description:
      'The response holds `api_key` once, and `client_signing_secret` once when it was generated (omitted from the body).',
    body: tenantCreateBody,
    responses: { 201: json('created: the tenant and its API key, shown once', tenantCreated) },
    errors: ['CONFLICT'],
  },
  list: {
    ...tenant,
    method: 'get',
    path: '/tenants',
    summary: 'List tenants (secrets never shown)',
    responses: { 200: json('every tenant', tenantList) },
  },
  get: {
    ...tenant,
    method: 'get',
    path: '/tenant/{id}',
    summary: 'Read a tenant',
    params,
    responses: { 200: json('the tenant', tenantAnswer) },
    errors: ['NOT_FOUND'],
  },
  update: {
    ...tenant,
    method: 'put',
    path: '/tenant/{id}',
    summary: 'Update the fields given',
    description: '`id` may be repeated in the body, but must then match the path.',
    params,
    body: tenantUpdateBody,
    responses: { 200: json('updated: the tenant as it is now', tenantUpdated) },
    errors: ['NOT_FOUND'],
  },
  delete: {
    ...tenant,
    method: 'delete',
    path: '/tenant/{id}',
    summary: 'Delete a tenant',
    description: 'Refused (409) while it has undelivered mail unless `force`.',
    params,
    query: deleteQuery,
    responses: { 200: json('deleted', okOnly) },
    errors: ['NOT_FOUND', 'CONFLICT'],
  },
  rotateKey: {
    ...tenant,
    method: 'post',
    path: '/tenant/{id}/api-key',
    summary: 'Rotate the API key: the old key stops working at once',
    params,
    body: rotateKeyBody,
    responses: { 200: json('the new key, shown once', issuedKey) },
    errors: ['NOT_FOUND'],
  },
  testRoute: {
    ...tenant,
    method: 'post',
    path: '/tenant/{id}/routes/test',
    summary: 'Which account a message of the tenant would go through, and why (its routing rules, its default account)',
    params,
    body: routeTestBody,
    responses: { 200: json('the account and why', routeTested) },
    errors: ['NOT_FOUND', 'VALIDATION_FAILED'],
  },
  rotateSigningSecret: {
    ...tenant,
    method: 'post',
    path: '/tenant/{id}/signing-secret',
    summary: 'A new report-signing secret, returned once; the old one stops signing at once',
    params,
    responses: { 200: json('the new signing secret, shown once', signingSecret) },
    errors: ['NOT_FOUND'],
  },
} as const satisfies Record<string, RouteDoc>;

const pathId = (c: Context<HttpEnv>): string => validate(params.id, c.req.param('id'), 'tenant id');

export function tenantRoutes(tenants: TenantService): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  const routes = TENANT_ROUTES;
  // Admin routes answer 403 to a tenant key before looking at the input.
  for (const path of ['/tenant', '/tenant/*', '/tenants', '/tenants/*']) {
    app.use(path, async (c, next) => {
      requireAdmin(c.get('principal'));
      await next();
    });
  }

  on(app, routes.create, async (c) => {
    const input = await readBody(c, routes.create.body);
    const { tenant, key, signingSecret } = await tenants.create(commandContext(c), input);
    return c.json(
      {
        ok: true,
        tenant: viewTenant(tenant),
        api_key: key.apiKey,
        ...(signingSecret === null ? {} : { client_signing_secret: signingSecret }),
      },
      201,
    );
  });

  on(app, routes.list, (c) => c.json({ tenants: tenants.list(commandContext(c)).map(viewTenant) }));

  on(app, routes.get, (c) => c.json({ tenant: viewTenant(tenants.get(commandContext(c), pathId(c))) }));

  on(app, routes.update, async (c) => {
    const id = pathId(c);
    const input = await readBody(c, routes.update.body);
    if (input.id !== undefined && input.id !== id) {
      throw new AppError('VALIDATION_FAILED', 'invalid request body', {
        details: [{ path: 'id', message: 'must match the tenant id in the path' }],
      });
    }
    return c.json({ ok: true, tenant: viewTenant(await tenants.update(commandContext(c), id, input.fields)) });
  });

  on(app, routes.delete, async (c) => {
    const id = pathId(c);
    const query = readQuery(c, routes.delete.query);
    await tenants.delete(commandContext(c), id, { force: query.force ?? false });
    return c.json({ ok: true });
  });

  on(app, routes.rotateKey, async (c) => {
    const id = pathId(c);
    const input = await readBody(c, routes.rotateKey.body);
    return c.json({ ok: true, ...viewIssuedKey(await tenants.rotateKey(commandContext(c), id, input)) });
  });

  on(app, routes.testRoute, async (c) => {
    const sample = await readBody(c, routes.testRoute.body);
    const tested = tenants.testRoute(commandContext(c), pathId(c), sample);
    return c.json({ account_id: tested.accountId, chosen_by: tested.chosenBy, rule: tested.rule, why: tested.why });
  });

  on(app, routes.rotateSigningSecret, async (c) =>
    c.json({ ok: true, ...viewSigningSecret(await tenants.rotateSigningSecret(commandContext(c), pathId(c))) }),
  );

  return app;
}
