/**
 * Two tenants with data of every kind the API serves (accounts, messages in a
 * batch, suppressions, bounces from a real Dovecot, delivery reports to a real
 * client endpoint), a third whose key has expired, and the strings that belong
 * to one tenant only: the markers that must never reach the other.
 */
import { randomBytes } from 'node:crypto';
import { vi } from 'vitest';
import { dsnFor, ordinaryMail } from '../helpers/bounce-mail.js';
import { message } from '../helpers/queue-fixture.js';
import { startReportScenario, type ReportScenario } from '../helpers/report-fixture.js';
import { api, type ApiResponse } from '../helpers/test-daemon.js';
import { bounceToml, startDovecot, type DovecotPeer } from '../peers/dovecot.js';
import { relayedMessageId } from '../pec/pec-peers.js';
import { buildReceipt } from '../pec/receipt-fixtures.js';

export type Owner = 'a' | 'b';
export const OWNERS: readonly Owner[] = ['a', 'b'];
export const other = (owner: Owner): Owner => (owner === 'a' ? 'b' : 'a');

export interface TenantData {
  id: string;
  key: string;
  account: string;
  batch: string;
  /** Client ids of its seeded messages: sent, deferred in its batch, bounced. */
  messages: { sent: string; deferred: string; bounced: string };
  suppressed: string;
  /** Its PEC account's receipt (about its sent message): the receipt routes' object. */
  receipt: string;
  /** Strings of this tenant's data that no other tenant's response may hold. */
  markers: string[];
}

export interface World {
  s: ReportScenario;
  dovecot: DovecotPeer;
  tenants: Record<Owner, TenantData>;
  /** A tenant key past its expiry (the test clock was moved beyond it). */
  expiredKey: string;
  /** A marker of the unmatched bounce, which belongs to no tenant. */
  unmatchedMarker: string;
  url: string;
  adminToken: string;
  admin(method: string, path: string, body?: unknown): Promise<ApiResponse>;
  /** A name nobody has used yet in this world. */
  unique(prefix: string): string;
}

async function ok(response: Promise<ApiResponse>, what: string): Promise<ApiResponse> {
  const done = await response;
  if (done.status >= 300) throw new Error(`seeding ${what}: ${done.status} ${done.text}`);
  return done;
}

async function seedTenant(s: ReportScenario, owner: Owner, tag: string, dovecotPort: number): Promise<TenantData> {
  const id = `tenant-${owner}`;
  const only = `${owner}-only-${tag}.example`;
  const t: TenantData = {
    id,
    key: '',
    account: `acct-${owner}`,
    batch: `batch-${owner}-${tag}`,
    messages: {
      sent: `${owner}-sent-${tag}`,
      deferred: `${owner}-deferred-${tag}`,
      bounced: `${owner}-bounced-${tag}`,
    },
    suppressed: `supp-${owner}@${only}`,
    receipt: '',
    markers: [],
  };
  const created = await ok(
    s.fx.admin('POST', '/tenant', {
      id,
      name: `Name of ${owner} ${tag}`,
      client_base_url: `${s.client.base}/client-${owner}-${tag}`,
      client_auth: { method: 'bearer', token: `client-token-${owner}-${tag}` },
    }),
    id,
  );
  t.key = created.body.api_key as string;
  await s.fx.createAccount(id, t.account, s.sink, {
    is_default: true,
    user: `relay-user-${owner}-${tag}`,
    password: `relay-pass-${owner}-${tag}`,
  });
  // Its PEC account reads its own mailbox (a Dovecot user of its own): receipts are the tenant's.
  await s.fx.createAccount(id, `pec-${owner}`, s.sink, {
    is_pec: true,
    user: `pec-${owner}`,
    password: PEC_PASSWORD,
    imap_host: '127.0.0.1',
    imap_port: dovecotPort,
    imap_tls_mode: 'none',
  });
  const later = Math.floor(s.fx.clock.now() / 1000) + 86_400;
  await ok(
    s.fx.post(t.key, [
      message(t.messages.sent, { to: `rcpt-${owner}@${only}`, subject: `subject-${owner}-${tag}` }),
      message(t.messages.deferred, { to: `waiting-${owner}@${only}`, batch_code: t.batch, deferred_ts: later }),
      message(t.messages.bounced, { to: `gone-${owner}@${only}` }),
    ]),
    `${id} messages`,
  );
  await ok(
    api(s.fx.t.url, 'POST', '/suppression', {
      token: t.key,
      body: { address: t.suppressed, reason: `reason-${owner}-${tag}` },
    }),
    `${id} suppression`,
  );
  t.markers = [
    id,
    only,
    t.account,
    t.batch,
    ...Object.values(t.messages),
    `Name of ${owner} ${tag}`,
    `client-${owner}-${tag}`,
    `relay-user-${owner}-${tag}`,
    `subject-${owner}-${tag}`,
    `reason-${owner}-${tag}`,
  ];
  return t;
}

/** Relays the tenant's bounced message to the sink and puts a DSN for it in the mailbox. */
async function bounce(w: Pick<World, 's' | 'dovecot'>, t: TenantData, tag: string, owner: Owner): Promise<void> {
  const copy = w.s.sink.messages.find((received) =>
    received.raw.toString('utf8').includes(`X-Genro-Mail-ID: ${t.messages.bounced}`),
  );
  if (copy === undefined) throw new Error(`the sink did not receive ${t.messages.bounced}`);
  await w.dovecot.append(dsnFor(copy.raw, { recipient: `gone-${owner}@${owner}-only-${tag}.example` }));
}

/** Both tenants' PEC mailboxes (Dovecot users pec-a, pec-b). */
const PEC_PASSWORD = 'pec-mailbox-secret';

export async function startWorld(
  cleanups: Array<() => Promise<void>>,
  options: { extraToml?: string } = {},
): Promise<World> {
  const tag = randomBytes(3).toString('hex');
  const dovecot = await startDovecot({
    users: [
      { user: 'bounces', password: 'secret' },
      ...OWNERS.map((owner) => ({ user: `pec-${owner}`, password: PEC_PASSWORD })),
    ],
  });
  cleanups.push(() => dovecot.destroy());
  const s = await startReportScenario(cleanups, {
    extraToml: `${options.extraToml ?? ''}
${bounceToml(dovecot)}poll_interval_seconds = 3600
reconnect_initial_seconds = 0.1
reconnect_max_seconds = 0.5
`,
  });
  const a = await seedTenant(s, 'a', tag, dovecot.port);
  const b = await seedTenant(s, 'b', tag, dovecot.port);
  await s.fx.settle();
  await s.sink.waitForMessages(4);
  const unmatchedMarker = `unmatched-${tag}`;
  await bounce({ s, dovecot }, a, tag, 'a');
  await bounce({ s, dovecot }, b, tag, 'b');
  await dovecot.append(ordinaryMail(`Subject ${unmatchedMarker}`));
  const admin = (method: string, path: string, body?: unknown) =>
    api(s.fx.t.url, method, path, { token: s.fx.t.adminToken, body });
  await vi.waitFor(
    async () => {
      const all = (await admin('GET', '/bounces')).body.bounces as unknown[];
      if (all.length < 3) throw new Error(`${all.length} of 3 bounces handled`);
    },
    { timeout: 15_000, interval: 50 },
  );
  // A PEC acceptance for each tenant's sent message, in its own PEC mailbox.
  for (const [owner, t] of [
    ['a', a],
    ['b', b],
  ] as const) {
    await dovecot.append(
      buildReceipt({ type: 'accettazione', referencedMessageId: relayedMessageId(s.sink, t.messages.sent) }),
      'INBOX',
      [],
      `pec-${owner}`,
    );
  }
  await vi.waitFor(
    async () => {
      for (const t of [a, b]) {
        const receipts = (await admin('GET', `/pec-receipts?tenant_id=${t.id}`)).body.receipts as Array<{
          receipt_id: string;
          message_id: string | null;
        }>;
        if (receipts[0]?.message_id !== t.messages.sent) throw new Error(`${t.id}: its receipt is not recorded yet`);
        t.receipt = receipts[0].receipt_id;
      }
    },
    { timeout: 15_000, interval: 50 },
  );
  for (const t of [a, b]) t.markers.push(t.receipt);
  // Every tenant's reports delivered: the client endpoint holds data of both.
  await s.client.waitFor(
    'reports of both tenants',
    (client) =>
      OWNERS.every((owner) => client.items(`/client-${owner}-${tag}`).some((item) => item.event === 'bounced')),
    15_000,
  );

  const expired = await ok(admin('POST', '/tenant', { id: 'tenant-x', api_key_expires_in_seconds: 60 }), 'tenant-x');
  s.fx.clock.advance(61_000);

  let counter = 0;
  return {
    s,
    dovecot,
    tenants: { a, b },
    expiredKey: expired.body.api_key as string,
    unmatchedMarker,
    url: s.fx.t.url,
    adminToken: s.fx.t.adminToken,
    admin,
    // `u` before the random tag: a tag starting with `a` or `b` made `new-acct-b…` read as tenant b's marker `acct-b` (1 run in 16).
    unique: (prefix) => `${prefix}-u${tag}-${(counter += 1)}`,
  };
}

/** What an admin sees of a tenant: compared before and after another tenant's attempts on it. */
export async function snapshot(w: World, owner: Owner): Promise<unknown> {
  const t = w.tenants[owner];
  const read = async (path: string) => (await w.admin('GET', path)).body;
  const accounts = ((await read(`/accounts?tenant_id=${t.id}`)).accounts as Array<Record<string, unknown>>).map(
    ({ id, host, port, user, has_password, is_default, state }) => ({
      id,
      host,
      port,
      user,
      has_password,
      is_default,
      state,
    }),
  );
  const details = [];
  for (const id of Object.values(t.messages)) details.push(await read(`/messages/${id}?tenant_id=${t.id}`));
  return {
    tenant: await read(`/tenant/${t.id}`),
    accounts,
    messages: (await read(`/messages?tenant_id=${t.id}`)).messages,
    details,
    suppressions: await read(`/suppressions?tenant_id=${t.id}`),
    bounces: await read(`/bounces?tenant_id=${t.id}`),
  };
}
