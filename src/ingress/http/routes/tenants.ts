/** Tenant routes (admin token only): create, list, read, update, delete, rotate the key. */
import { Hono, type Context } from 'hono';
import { AppError } from '../../../core/app-error.js';
import { requireAdmin } from '../../../core/principal.js';
import type { CommandContext, TenantService } from '../../../core/tenant-service.js';
import type { HttpEnv } from '../env.js';
import { readBody, readQuery, validate } from '../request-input.js';
import { deleteQuery, identifier, rotateKeyBody, tenantCreateBody, tenantUpdateBody } from '../schemas.js';

export function commandContext(c: Context<HttpEnv>): CommandContext {
  return { principal: c.get('principal'), correlationId: c.get('requestId') };
}

const pathId = (c: Context<HttpEnv>): string => validate(identifier, c.req.param('id'), 'tenant id');

export function tenantRoutes(tenants: TenantService): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  // Admin routes answer 403 to a tenant key before looking at the input.
  for (const path of ['/tenant', '/tenant/*', '/tenants', '/tenants/*']) {
    app.use(path, async (c, next) => {
      requireAdmin(c.get('principal'));
      await next();
    });
  }

  app.post('/tenant', async (c) => {
    const input = await readBody(c, tenantCreateBody);
    const { tenant, key, signingSecret } = tenants.create(commandContext(c), input);
    return c.json({ ok: true, tenant, api_key: key.api_key, ...(signingSecret === null ? {} : { client_signing_secret: signingSecret }) }, 201);
  });

  app.get('/tenants', (c) => c.json({ tenants: tenants.list(commandContext(c)) }));

  app.get('/tenant/:id', (c) => c.json({ tenant: tenants.get(commandContext(c), pathId(c)) }));

  app.put('/tenant/:id', async (c) => {
    const id = pathId(c);
    const input = await readBody(c, tenantUpdateBody);
    if (input.id !== undefined && input.id !== id) {
      throw new AppError('VALIDATION_FAILED', 'invalid request body', { details: [{ path: 'id', message: 'must match the tenant id in the path' }] });
    }
    return c.json({ ok: true, tenant: tenants.update(commandContext(c), id, input.fields) });
  });

  app.delete('/tenant/:id', (c) => {
    const id = pathId(c);
    const query = readQuery(c, deleteQuery);
    tenants.delete(commandContext(c), id, { force: query.force ?? false });
    return c.json({ ok: true });
  });

  app.post('/tenant/:id/api-key', async (c) => {
    const id = pathId(c);
    const input = await readBody(c, rotateKeyBody);
    return c.json({ ok: true, ...tenants.rotateKey(commandContext(c), id, input) });
  });

  app.post('/tenant/:id/signing-secret', (c) => c.json({ ok: true, ...tenants.rotateSigningSecret(commandContext(c), pathId(c)) }));

  return app;
}
