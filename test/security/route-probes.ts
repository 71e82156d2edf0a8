/**
 * One request per documented route, acting on a given tenant's resources and
 * naming that tenant wherever the route takes one. Routes that destroy or
 * replace something act on a scratch object made for the call, so the matrix
 * can run each of them under every credential. A route of the catalog that is
 * missing here fails the matrix: a new route must say how it is probed.
 */
import { message } from '../helpers/queue-fixture.js';
import type { Owner, World } from './matrix-world.js';

/** What a probe needs of the world: the tenants' names, the admin, fresh names. */
export type ProbeWorld = Pick<World, 'tenants' | 'admin' | 'unique'>;

export interface Call {
  method: string;
  path: string;
  body?: unknown;
}

/**
 * Routes verified by a provider's signature, not by an API credential: whatever token
 * comes with an unsigned request, it is refused (401 WEBHOOK_UNVERIFIED) and changes nothing.
 */
export const PROVIDER_SIGNED = new Set(['POST /webhooks/{provider}/{tenant_id}']);

/**
 * Routes proven by a sealed link token, not by an API credential: whatever token comes with a
 * forged link, it is refused (404, no such link) and changes nothing.
 */
export const LINK_PROVEN = new Set(['GET /unsubscribe/{token}', 'POST /unsubscribe/{token}', 'GET /files/{token}']);
const FORGED_LINK = '/unsubscribe/v1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA.AAAA';
/** A download token of the right shape (43 base64url characters) whose MAC does not hold. */
const FORGED_FILE = `/files/${'A'.repeat(43)}`;

/** Routes of fleet mode only: the matrix's daemon is a single node, where the admin's answer is their documented 409 CONFLICT. */
export const FLEET_ONLY = new Set(['POST /fleet/drain', 'GET /fleet/drain']);

export type Probe = (w: ProbeWorld, owner: Owner) => Call | Promise<Call>;

const get = (path: string): Call => ({ method: 'GET', path });
const post = (path: string, body?: unknown): Call => ({ method: 'POST', path, body });
const del = (path: string): Call => ({ method: 'DELETE', path });
const tid = (w: ProbeWorld, owner: Owner): string => w.tenants[owner].id;

async function scratchTenant(w: ProbeWorld): Promise<string> {
  const id = w.unique('scratch');
  const created = await w.admin('POST', '/tenant', { id });
  if (created.status !== 201) throw new Error(`scratch tenant: ${created.text}`);
  return id;
}

async function scratchAccount(w: ProbeWorld, owner: Owner): Promise<string> {
  const id = w.unique('scratch-acct');
  const created = await w.admin('POST', '/account', {
    id,
    tenant_id: tid(w, owner),
    host: '127.0.0.1',
    port: 9,
    tls_mode: 'none',
  });
  if (created.status >= 300) throw new Error(`scratch account: ${created.text}`);
  return id;
}

async function scratchDomain(w: ProbeWorld, owner: Owner): Promise<string> {
  const domain = `${w
    .unique('scratch')
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, '-')}.${owner}-scratch.example`;
  const created = await w.admin('POST', '/domains', { tenant_id: tid(w, owner), domain, selector: 'probe' });
  if (created.status !== 201) throw new Error(`scratch domain: ${created.text}`);
  return domain;
}

async function scratchSuppression(w: ProbeWorld, owner: Owner): Promise<string> {
  const address = `${w.unique('scratch')}@${owner}-scratch.example`;
  const created = await w.admin('POST', '/suppression', { tenant_id: tid(w, owner), address });
  if (created.status !== 201) throw new Error(`scratch suppression: ${created.text}`);
  return address;
}

async function scratchMessage(w: ProbeWorld, owner: Owner): Promise<string> {
  const id = w.unique('scratch-msg');
  // A day ahead of the real clock is ahead of a test clock moved by minutes too.
  const later = Math.floor(Date.now() / 1000) + 86_400;
  const posted = await w.admin('POST', '/add-messages', {
    messages: [message(id, { tenant_id: tid(w, owner), deferred_ts: later })],
  });
  if (posted.status !== 200 || posted.body.queued !== 1) throw new Error(`scratch message: ${posted.text}`);
  return id;
}

const submit =
  (path: string): Probe =>
  (w, owner) =>
    post(path, {
      messages: [
        message(w.unique(`probe-${owner}`), { tenant_id: tid(w, owner), account_id: w.tenants[owner].account }),
      ],
    });

/**
 * Routes that validate each message on its own (README: an invalid one is listed
 * in `rejected`): another tenant's id in a message is a rejected message, answered
 * 200 like a tenant that does not exist, not a refused request.
 */
export const PER_ITEM_TENANT: ReadonlySet<string> = new Set(['POST /add-messages', 'POST /commands/add-messages']);

/** By `METHOD /openapi/path`, as in the route catalog. */
export const PROBES: Readonly<Record<string, Probe>> = {
  'GET /health': () => get('/health'),
  'GET /ready': () => get('/ready'),
  'GET /openapi.json': () => get('/openapi.json'),
  'GET /docs': () => get('/docs'),
  'POST /webhooks/{provider}/{tenant_id}': (w, owner) =>
    post(`/webhooks/mailgun/${tid(w, owner)}`, {
      signature: { timestamp: '1', token: 't', signature: '00' },
      'event-data': { event: 'delivered' },
    }),

  'GET /unsubscribe/{token}': () => get(FORGED_LINK),
  'POST /unsubscribe/{token}': () => post(FORGED_LINK),
  'GET /files/{token}': () => get(FORGED_FILE),

  'POST /tenant': (w) => post('/tenant', { id: w.unique('new') }),
  'GET /tenants': () => get('/tenants'),
  'GET /tenant/{id}': (w, owner) => get(`/tenant/${tid(w, owner)}`),
  'PUT /tenant/{id}': async (w) => ({
    method: 'PUT',
    path: `/tenant/${await scratchTenant(w)}`,
    body: { name: 'renamed' },
  }),
  'DELETE /tenant/{id}': async (w) => del(`/tenant/${await scratchTenant(w)}`),
  'POST /tenant/{id}/api-key': async (w) => post(`/tenant/${await scratchTenant(w)}/api-key`, {}),
  'POST /tenant/{id}/signing-secret': async (w) => post(`/tenant/${await scratchTenant(w)}/signing-secret`),
  'POST /tenant/{id}/routes/test': (w, owner) =>
    post(`/tenant/${tid(w, owner)}/routes/test`, { from: 'a@example.com' }),
  'GET /tenants/sync-status': () => get('/tenants/sync-status'),
  'GET /mirror/status': () => get('/mirror/status'),
  'GET /metrics': () => get('/metrics'),
  'GET /backup': () => get('/backup'),
  'GET /bounce/status': () => get('/bounce/status'),
  // Fleet-only routes: on the matrix's single node the admin gets their documented refusal (FLEET_ONLY).
  'POST /fleet/drain': () => post('/fleet/drain'),
  'GET /fleet/drain': () => get('/fleet/drain'),

  'POST /account': (w, owner) =>
    post('/account', {
      id: w.unique('new-acct'),
      tenant_id: tid(w, owner),
      host: '127.0.0.1',
      port: 9,
      tls_mode: 'none',
    }),
  'GET /accounts': (w, owner) => get(`/accounts?tenant_id=${tid(w, owner)}`),
  'GET /account/{id}': (w, owner) => get(`/account/${w.tenants[owner].account}?tenant_id=${tid(w, owner)}`),
  'DELETE /account/{id}': async (w, owner) =>
    del(`/account/${await scratchAccount(w, owner)}?tenant_id=${tid(w, owner)}`),
  // A scratch account on the discard port: refused or closed at once, bounded by a 1 s timeout.
  'POST /account/{id}/test': async (w, owner) =>
    post(`/account/${await scratchAccount(w, owner)}/test?tenant_id=${tid(w, owner)}&timeout_seconds=1`),
  'POST /account/{id}/resume': (w, owner) =>
    post(`/account/${w.tenants[owner].account}/resume?tenant_id=${tid(w, owner)}`),

  'POST /domains': (w, owner) =>
    post('/domains', {
      tenant_id: tid(w, owner),
      domain: `${w
        .unique('new')
        .toLowerCase()
        .replace(/[^a-z0-9-]/g, '-')}.example`,
      selector: 'probe',
    }),
  'GET /domains': (w, owner) => get(`/domains?tenant_id=${tid(w, owner)}`),
  'GET /domains/{domain}': async (w, owner) =>
    get(`/domains/${await scratchDomain(w, owner)}?tenant_id=${tid(w, owner)}`),
  // The DNS asked is the system's: the answers are findings (a check that fails is an answer too).
  'GET /domains/{domain}/check': async (w, owner) =>
    get(`/domains/${await scratchDomain(w, owner)}/check?tenant_id=${tid(w, owner)}`),
  'POST /domains/{domain}/rotate': async (w, owner) =>
    post(`/domains/${await scratchDomain(w, owner)}/rotate?tenant_id=${tid(w, owner)}`, { selector: 'probe2' }),
  'DELETE /domains/{domain}': async (w, owner) =>
    del(`/domains/${await scratchDomain(w, owner)}?tenant_id=${tid(w, owner)}`),

  'POST /add-messages': submit('/add-messages'),
  'POST /commands/add-messages': submit('/commands/add-messages'),
  'POST /commands/run-now': (w, owner) => post('/commands/run-now', { tenant_id: tid(w, owner) }),
  'POST /commands/suspend': (w, owner) =>
    post('/commands/suspend', { tenant_id: tid(w, owner), batch_code: w.unique('probe-batch') }),
  'POST /commands/activate': (w, owner) =>
    post('/commands/activate', { tenant_id: tid(w, owner), batch_code: w.unique('probe-batch') }),
  'POST /commands/delete-messages': async (w, owner) =>
    post('/commands/delete-messages', { tenant_id: tid(w, owner), ids: [await scratchMessage(w, owner)] }),
  'POST /commands/resend': async (w, owner) =>
    post('/commands/resend', { tenant_id: tid(w, owner), ids: [await scratchMessage(w, owner)] }),
  'POST /commands/erase': async (w, owner) =>
    post('/commands/erase', { tenant_id: tid(w, owner), ids: [await scratchMessage(w, owner)] }),
  'POST /commands/retry-now': async (w, owner) =>
    post('/commands/retry-now', { tenant_id: tid(w, owner), ids: [await scratchMessage(w, owner)] }),
  // A real run over a batch of the probe's own: it reaches nothing else of the tenant.
  'POST /commands/bulk': (w, owner) =>
    post('/commands/bulk', { action: 'delete', tenant_id: tid(w, owner), batch_code: w.unique('probe-batch') }),
  'POST /commands/cleanup-messages': (w, owner) =>
    post('/commands/cleanup-messages', { tenant_id: tid(w, owner), older_than_seconds: 10 * 365 * 86400 }),
  'GET /messages': (w, owner) => get(`/messages?tenant_id=${tid(w, owner)}`),
  'GET /messages/{id}': (w, owner) => get(`/messages/${w.tenants[owner].messages.sent}?tenant_id=${tid(w, owner)}`),
  'GET /status': (w, owner) => get(`/status?tenant_id=${tid(w, owner)}`),

  'GET /tenant/{id}/sync-status': (w, owner) => get(`/tenant/${tid(w, owner)}/sync-status`),
  'POST /tenant/{id}/sync-now': (w, owner) => post(`/tenant/${tid(w, owner)}/sync-now`),
  'GET /tenant/{id}/report-log': (w, owner) => get(`/tenant/${tid(w, owner)}/report-log`),

  'GET /suppressions': (w, owner) => get(`/suppressions?tenant_id=${tid(w, owner)}`),
  'POST /suppression': (w, owner) =>
    post('/suppression', { tenant_id: tid(w, owner), address: `${w.unique('new')}@${owner}-scratch.example` }),
  'DELETE /suppression/{address}': async (w, owner) =>
    del(`/suppression/${encodeURIComponent(await scratchSuppression(w, owner))}?tenant_id=${tid(w, owner)}`),
  'GET /bounces': (w, owner) => get(`/bounces?tenant_id=${tid(w, owner)}`),
  'GET /pec-receipts': (w, owner) => get(`/pec-receipts?tenant_id=${tid(w, owner)}`),
  'GET /pec-receipts/{receipt_id}/raw': (w, owner) =>
    get(`/pec-receipts/${w.tenants[owner].receipt}/raw?tenant_id=${tid(w, owner)}`),
};

/**
 * The attacker's key with the victim's ids and names, naming no tenant: the
 * route scopes everything to the attacker, so each finds nothing of the victim,
 * changes nothing of it, or acts on a same-named object of the attacker's own.
 */
export function implicitProbes(w: ProbeWorld, victim: Owner): Call[] {
  const v = w.tenants[victim];
  const q = encodeURIComponent;
  return [
    get(`/account/${v.account}`),
    del(`/account/${v.account}?force=true`),
    post('/account', { id: v.account, host: '127.0.0.1', port: 9, tls_mode: 'none', user: 'hijack' }),
    get(`/accounts`),
    get(`/messages/${v.messages.sent}`),
    get(`/messages?batch_code=${q(v.batch)}`),
    get(`/messages?account_id=${v.account}`),
    get(`/messages?recipient=${q(`rcpt-${victim}@${v.suppressed.split('@')[1]}`)}`),
    get(`/messages?q=${q(v.messages.sent)}`),
    get('/messages'),
    get('/status'),
    get('/suppressions'),
    get(`/suppressions?address=${q(v.suppressed)}`),
    del(`/suppression/${q(v.suppressed)}`),
    get('/bounces'),
    get('/bounces?disposition=unmatched'),
    get('/pec-receipts'),
    get(`/pec-receipts?message_id=${q(v.messages.sent)}`),
    get(`/pec-receipts/${v.receipt}/raw`),
    post('/add-messages', { messages: [message(v.messages.deferred, { account_id: v.account })] }),
    post('/commands/suspend', { batch_code: v.batch }),
    post('/commands/activate', { batch_code: v.batch }),
    post('/commands/delete-messages', { ids: Object.values(v.messages) }),
    post('/commands/resend', { ids: Object.values(v.messages) }),
    post('/commands/run-now'),
    post(`/commands/suspend?tenant_id=${v.id}`, {}),
    // An erasure reaches the attacker's own tenant only, whatever it names.
    post('/commands/erase', { ids: Object.values(v.messages) }),
    post('/commands/erase', { address: v.suppressed }),
    post(`/commands/erase?tenant_id=${v.id}`, { whole_tenant: true }),
    // Last: it removes the attacker's own reported messages.
    post('/commands/cleanup-messages', { older_than_seconds: 0 }),
  ];
}
