/** Account routes: the admin token for any tenant, a tenant key for its own accounts only. */
import { Hono, type Context } from 'hono';
import type { AccountService } from '../../../core/account/index.js';
import { viewAccount } from '../../../core/contracts/index.js';
import type { HttpEnv } from '../env.js';
import { readBody, readQuery, validate } from '../request-input.js';
import { json, on, type RouteDoc } from '../route-doc.js';
import { accountBody, accountDeleteQuery } from '../account-schemas.js';
import { accountTestQuery, identifier, tenantQuery, tenantScopeQuery } from '../schemas.js';
import { accountAnswer, accountDeleted, accountList, accountUpserted } from '../view-schemas/account.js';
import { viewAccountState } from '../views/account-view.js';
import { viewConnectionTest } from '../views/connection-test-view.js';
import { commandContext } from './tenants.js';

const params = { id: identifier.meta({ description: 'The account id.', examples: ['main'] }) };
const account = { tag: 'Accounts', access: 'tenant' } as const;

export const ACCOUNT_ROUTES = {
  upsert: {
    ...account,
    method: 'post',
    path: '/account',
    summary: 'Create or update a sending account',
    description:
      '`tenant_id` is implied by a tenant key. Omit `password` to keep the stored one. `tls_mode` wins; without it, `use_tls` is read as genro-mail-proxy reads it: ' +
      'true = implicit TLS on port 465 and STARTTLS required on any other port, false = plain, null or absent = implicit on port 465 ' +
      '(else the stored mode; STARTTLS for a new account). ' +
      "A PEC account (`is_pec`) reads its provider's receipts from its own IMAP mailbox: `imap_host` (null removes the mailbox), `imap_port` " +
      "(993 for implicit TLS, 143 otherwise), `imap_tls_mode` (implicit), `imap_folder` (INBOX), `imap_user` and `imap_password` (null: the relay's; " +
      'omit `imap_password` to keep the stored one). On an update, omitted fields keep their stored values. A PEC account needs a mailbox and its ' +
      'credentials (400 VALIDATION_FAILED naming the field); clearing `is_pec` keeps the mailbox settings. ' +
      '`is_default` marks the account that sends messages naming no account (no `account_id`; over SMTP no `<tenant>/<account>` user); at most one ' +
      "per tenant, so true clears it on the tenant's other accounts. A tenant's first account becomes its default unless `is_default` is false. " +
      "`warnings` lists what the save did to the tenant's default: `NO_DEFAULT_ACCOUNT` when the tenant is left without one (messages naming " +
      'no account are then refused), `DEFAULT_ACCOUNT_CHANGED` when it moved to this account.',
    body: accountBody,
    responses: {
      200: json('updated (`created`: false)', accountUpserted),
      201: json('created (`created`: true)', accountUpserted),
    },
    errors: ['NOT_FOUND'],
  },
  list: {
    ...account,
    method: 'get',
    path: '/accounts',
    summary: 'List accounts with their state, usage per limit window and waiting messages',
    query: tenantScopeQuery,
    responses: {
      200: json('the accounts (`has_password` and `has_imap_password` instead of the passwords)', accountList),
    },
  },
  get: {
    ...account,
    method: 'get',
    path: '/account/{id}',
    summary: 'Read an account',
    params,
    query: tenantQuery,
    responses: { 200: json('the account', accountAnswer) },
    errors: ['NOT_FOUND'],
  },
  delete: {
    ...account,
    method: 'delete',
    path: '/account/{id}',
    summary: 'Delete an account',
    description:
      'Refused (409) while it has undelivered mail unless `force`. Deleting the default account leaves the tenant without one: ' +
      '`warnings` then carries `NO_DEFAULT_ACCOUNT` (messages naming no account are refused until another account is saved with `is_default` true).',
    params,
    query: accountDeleteQuery,
    responses: { 200: json('deleted', accountDeleted) },
    errors: ['NOT_FOUND', 'CONFLICT'],
  },
  test: {
    ...account,
    method: 'post',
    path: '/account/{id}/test',
    summary: "Test the connection to the account's relay",
    description:
      'Connects, says EHLO, upgrades with STARTTLS as `tls_mode` says, logs in with the stored credentials and says QUIT: no MAIL FROM, nothing sent. ' +
      'A failed test is an answer too (200, `ok: false`): `failed_step` (`connect`, `ehlo`, `starttls`, `auth`, `quit`) and `reason` name it as a paused ' +
      "account's reason does. Each step has the relay's reply (`reply_code`, `enhanced_status`, `text`) and `duration_ms`; `tls` has the version, " +
      'cipher and certificate verdict (`trusted`; `untrusted`, accepted because `tls_reject_unauthorized` is off; `rejected`, the connection refused for it).',
    params,
    query: accountTestQuery,
    responses: {
      200: json(
        '`{"ok":false,"failed_step":"auth","reason":"AUTH: 535 5.7.8 ...","stage":"auth","error_code":"EAUTH","duration_ms":42,"tls":{...},"steps":[{"step":"connect","ok":true,"reply_code":220,...}]}`',
      ),
    },
    errors: ['NOT_FOUND'],
  },
  resume: {
    ...account,
    method: 'post',
    path: '/account/{id}/resume',
    summary: 'Resume an account paused by a relay failure',
    description:
      'Clears `paused_at` and `paused_reason` and wakes the dispatcher: the waiting mail is tried again now. `resumed` is false when the account was not paused (nothing changes).',
    params,
    query: tenantQuery,
    responses: { 200: json('`{"ok":true,"resumed":true,"account":{...}}`') },
    errors: ['NOT_FOUND'],
  },
} as const satisfies Record<string, RouteDoc>;

const pathId = (c: Context<HttpEnv>): string => validate(params.id, c.req.param('id'), 'account id');

export function accountRoutes(accounts: AccountService): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  const routes = ACCOUNT_ROUTES;

  on(app, routes.upsert, async (c) => {
    const input = await readBody(c, routes.upsert.body);
    const { account, created, warnings } = await accounts.upsert(commandContext(c), input);
    return c.json({ ok: true, created, account: viewAccount(account), warnings }, created ? 201 : 200);
  });

  on(app, routes.list, async (c) => {
    const query = readQuery(c, routes.list.query);
    return c.json({ accounts: (await accounts.list(commandContext(c), query.tenant_id)).map(viewAccountState) });
  });

  on(app, routes.get, async (c) => {
    const id = pathId(c);
    const query = readQuery(c, routes.get.query);
    return c.json({ account: viewAccountState(await accounts.get(commandContext(c), query.tenant_id, id)) });
  });

  on(app, routes.delete, async (c) => {
    const id = pathId(c);
    const query = readQuery(c, routes.delete.query);
    const { warnings } = await accounts.delete(commandContext(c), query.tenant_id, id, { force: query.force ?? false });
    return c.json({ ok: true, warnings });
  });

  on(app, routes.test, async (c) => {
    const id = pathId(c);
    const query = readQuery(c, routes.test.query);
    const timeoutMs = query.timeout_seconds === undefined ? undefined : query.timeout_seconds * 1000;
    const result = await accounts.test(
      commandContext(c),
      query.tenant_id,
      id,
      timeoutMs === undefined ? {} : { timeoutMs },
    );
    return c.json(viewConnectionTest(result));
  });

  on(app, routes.resume, (c) => {
    const id = pathId(c);
    const query = readQuery(c, routes.resume.query);
    const { account, resumed } = accounts.resume(commandContext(c), query.tenant_id, id);
    return c.json({ ok: true, resumed, account: viewAccount(account) });
  });

  return app;
}
