/** Account routes: the admin token for any tenant, a tenant key for its own accounts only. */
import { Hono, type Context } from 'hono';
import type { AccountService } from '../../../core/account-service.js';
import type { HttpEnv } from '../env.js';
import { readBody, readQuery, validate } from '../request-input.js';
import { accountBody, accountDeleteQuery, identifier, tenantScopeQuery } from '../schemas.js';
import { commandContext } from './tenants.js';

const pathId = (c: Context<HttpEnv>): string => validate(identifier, c.req.param('id'), 'account id');

export function accountRoutes(accounts: AccountService): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();

  app.post('/account', async (c) => {
    const input = await readBody(c, accountBody);
    const { account, created } = accounts.upsert(commandContext(c), input);
    return c.json({ ok: true, created, account }, created ? 201 : 200);
  });

  app.get('/accounts', async (c) => {
    const query = readQuery(c, tenantScopeQuery);
    return c.json({ accounts: await accounts.list(commandContext(c), query.tenant_id) });
  });

  app.get('/account/:id', async (c) => {
    const id = pathId(c);
    const query = readQuery(c, tenantScopeQuery);
    return c.json({ account: await accounts.get(commandContext(c), query.tenant_id, id) });
  });

  app.delete('/account/:id', (c) => {
    const id = pathId(c);
    const query = readQuery(c, accountDeleteQuery);
    accounts.delete(commandContext(c), query.tenant_id, id, { force: query.force ?? false });
    return c.json({ ok: true });
  });

  return app;
}
