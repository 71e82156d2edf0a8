import { describe, expect, it } from 'vitest';
import { inMemoryAdminStore, refusal } from '../../../test/helpers/in-memory-admin-store.js';
import { createAccountService, type AccountServiceDeps } from './account-service.js';
import type { Principal } from '../tenant/principal.js';
import type { Tenant } from '../tenant/tenant.js';

const NOW = Date.UTC(2026, 6, 14, 10, 37, 25);
const admin = { principal: { kind: 'admin' } as Principal, correlationId: 'req-1' };
const acme = { principal: { kind: 'tenant', tenantId: 'acme' } as Principal, correlationId: 'req-2' };

const tenant = (id: string): Tenant => ({
  id,
  name: null,
  clientBaseUrl: null,
  clientSyncPath: '/mail-proxy/sync',
  clientAttachmentPath: null,
  clientAuth: null,
  clientSigningSecret: null,
  active: true,
  routes: [],
  sendingDomains: [],
  listUnsubscribe: null,
  attachmentOffload: null,
  apiKeyCreatedAt: 0,
  apiKeyExpiresAt: null,
  createdAt: 0,
  updatedAt: 0,
});

function setup(activity?: AccountServiceDeps['activity']) {
  const store = inMemoryAdminStore();
  store.tenants.insert(tenant('acme'), 'h1');
  store.tenants.insert(tenant('other'), 'h2');
  let ids = 0;
  let wakes = 0;
  const accounts = createAccountService({
    store,
    clock: { now: () => NOW },
    ids: { uuid: () => `id-${(ids += 1)}` },
    wake: () => {
      wakes += 1;
    },
    ...(activity === undefined ? {} : { activity }),
  });
  return { store, accounts, wakes: () => wakes };
}

describe('account upsert', () => {
  it('creates an account with defaults, records account.created without the password, and wakes the dispatcher', () => {
    const s = setup();
    const { account, created } = s.accounts.upsert(acme, {
      id: 'main',
      host: 'smtp.example',
      user: 'u',
      password: 'secret',
    });
    expect(created).toBe(true);
    expect(account).toMatchObject({
      tenantId: 'acme',
      id: 'main',
      port: 587,
      tlsMode: 'starttls',
      limitBehavior: 'defer',
      maxConnections: 5,
      createdAt: NOW,
      updatedAt: NOW,
    });
    expect(s.store.accounts.get('acme', 'main')?.password).toBe('secret');
    const [change] = s.store.recorded;
    expect(change).toMatchObject({
      command: 'account.upsert',
      eventType: 'account.created',
      tenantId: 'acme',
      aggregateId: 'acme/main',
      actor: 'tenant:acme',
      correlationId: 'req-2',
    });
    expect(change?.data.account).toMatchObject({
      id: 'main',
      tenant_id: 'acme',
      has_password: true,
      use_tls: true,
      tls_mode: 'starttls',
    });
    expect(JSON.stringify(change?.data)).not.toContain('secret');
    expect(s.wakes()).toBe(1);
  });

  it('keeps what an update leaves out, clears what it sets to null, and lifts a pause', () => {
    const s = setup();
    s.accounts.upsert(admin, {
      id: 'main',
      tenantId: 'acme',
      host: 'a.example',
      user: 'u',
      password: 'secret',
      limitPerHour: 100,
    });
    s.store.accounts.save({
      ...s.store.accounts.get('acme', 'main')!,
      pausedAt: NOW - 1000,
      pausedReason: 'AUTH: 535',
    });
    const { account, created } = s.accounts.upsert(admin, {
      id: 'main',
      tenantId: 'acme',
      host: 'b.example',
      user: null,
    });
    expect(created).toBe(false);
    expect(account).toMatchObject({
      host: 'b.example',
      user: null,
      password: 'secret',
      limitPerHour: 100,
      pausedAt: null,
      pausedReason: null,
    });
    expect(s.store.recorded.map((change) => change.eventType)).toEqual(['account.created', 'account.updated']);
  });

  it('reads the TLS mode from tls_mode first, then use_tls, then port 465, else keeps the stored one', () => {
    const s = setup();
    expect(s.accounts.upsert(acme, { id: 'a', host: 'h', tlsMode: 'none', useTls: true }).account).toMatchObject({
      tlsMode: 'none',
      port: 25,
    });
    expect(s.accounts.upsert(acme, { id: 'b', host: 'h', useTls: false }).account).toMatchObject({
      tlsMode: 'none',
      port: 25,
    });
    expect(s.accounts.upsert(acme, { id: 'c', host: 'h', useTls: true }).account).toMatchObject({
      tlsMode: 'implicit',
      port: 465,
    });
    expect(s.accounts.upsert(acme, { id: 'd', host: 'h', port: 465 }).account).toMatchObject({
      tlsMode: 'implicit',
      port: 465,
    });
    expect(s.accounts.upsert(acme, { id: 'b', host: 'h', port: 2525 }).account).toMatchObject({
      tlsMode: 'none',
      port: 2525,
    });
  });

  it('answers NOT_FOUND for an unknown tenant, and for another tenant named by a tenant key, saving nothing', () => {
    const s = setup();
    expect(refusal(() => s.accounts.upsert(admin, { id: 'main', tenantId: 'nobody', host: 'h' })).code).toBe(
      'NOT_FOUND',
    );
    expect(refusal(() => s.accounts.upsert(acme, { id: 'main', tenantId: 'other', host: 'h' })).code).toBe('NOT_FOUND');
    expect(s.store.accounts.list(null)).toEqual([]);
    expect(s.store.recorded).toEqual([]);
  });

  it('refuses a PEC account without a mailbox, and neither saves nor records it', () => {
    const s = setup();
    const error = refusal(() =>
      s.accounts.upsert(acme, { id: 'pec', host: 'h', isPec: true, user: 'u', password: 'p' }),
    );
    expect(error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'imap_host' }] });
    expect(s.store.accounts.get('acme', 'pec')).toBeNull();
    expect(s.store.recorded).toEqual([]);
  });
});

describe('account reading', () => {
  it('lists a tenant key its own accounts only, and the admin every account without a tenant_id', async () => {
    const s = setup();
    s.accounts.upsert(admin, { id: 'a1', tenantId: 'acme', host: 'h' });
    s.accounts.upsert(admin, { id: 'o1', tenantId: 'other', host: 'h' });
    expect((await s.accounts.list(acme, undefined)).map((state) => state.account.id)).toEqual(['a1']);
    expect((await s.accounts.list(admin, undefined)).map((state) => state.account.id)).toEqual(['a1', 'o1']);
    await expect(s.accounts.list(acme, 'other')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(s.accounts.get(acme, undefined, 'o1')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('has no activity when the daemon tells none', async () => {
    const s = setup();
    s.accounts.upsert(acme, { id: 'a1', host: 'h' });
    expect(await s.accounts.get(acme, undefined, 'a1')).toMatchObject({ account: { id: 'a1' }, activity: null });
  });

  it("tells each account's window use with the end of each window, its waiting messages, connections and last attempts", async () => {
    const attempts = { lastError: { text: '451 later', replyCode: 451, at: NOW - 5000 }, lastSuccessAt: NOW - 60_000 };
    const s = setup({
      usage: () => ({ minute: 3, hour: 40, day: 200 }),
      waiting: () => [
        { tenantId: 'acme', accountId: 'a1', count: 2 },
        { tenantId: 'acme', accountId: 'a1', count: 5 },
        { tenantId: 'acme', accountId: 'a2', count: 1 },
      ],
      connections: async () => [{ tenantId: 'acme', accountId: 'a1', open: 2, inUse: 1 }],
      attempts: () => attempts,
    });
    s.accounts.upsert(acme, { id: 'a1', host: 'h', limitPerMinute: 10, maxConnections: 3 });
    const state = await s.accounts.get(acme, undefined, 'a1');
    expect(state.activity).toEqual({
      usage: {
        minute: { used: 3, limit: 10, resetsAt: Date.UTC(2026, 6, 14, 10, 38) },
        hour: { used: 40, limit: null, resetsAt: Date.UTC(2026, 6, 14, 11) },
        day: { used: 200, limit: null, resetsAt: Date.UTC(2026, 6, 15) },
      },
      waiting: 7,
      connections: { open: 2, inUse: 1, max: 3 },
      attempts,
    });
  });
});

describe('account delete', () => {
  it('refuses while the account has undelivered mail, unless forced, and records what it deleted', () => {
    const s = setup();
    s.accounts.upsert(acme, { id: 'a1', host: 'h' });
    s.store.pending.set('acme/a1', 4);
    expect(refusal(() => s.accounts.delete(acme, undefined, 'a1', { force: false }))).toMatchObject({
      code: 'CONFLICT',
      details: { account_id: 'a1', pending_messages: 4 },
    });
    expect(s.store.accounts.get('acme', 'a1')).not.toBeNull();
    s.accounts.delete(acme, undefined, 'a1', { force: true });
    expect(s.store.accounts.get('acme', 'a1')).toBeNull();
    expect(s.store.recorded.at(-1)).toMatchObject({
      eventType: 'account.deleted',
      data: { account_id: 'a1', forced: true, pending_messages: 4 },
    });
  });

  it('answers NOT_FOUND for an account that does not exist', () => {
    const s = setup();
    expect(refusal(() => s.accounts.delete(acme, undefined, 'ghost', { force: true })).code).toBe('NOT_FOUND');
  });
});

describe("a tenant's default account", () => {
  const defaults = (s: ReturnType<typeof setup>) => s.store.accounts.choices('acme');

  it('is its first account, with nothing to warn about; a second account leaves it in place', () => {
    const s = setup();
    expect(s.accounts.upsert(acme, { id: 'a1', host: 'h' })).toMatchObject({
      account: { isDefault: true },
      warnings: [],
    });
    expect(s.accounts.upsert(acme, { id: 'a2', host: 'h' })).toMatchObject({
      account: { isDefault: false },
      warnings: [],
    });
    expect(defaults(s)).toEqual([
      { id: 'a1', isDefault: true },
      { id: 'a2', isDefault: false },
    ]);
  });

  it("moves to an account saved with isDefault, cleared on the tenant's others in the same save, and says so", () => {
    const s = setup();
    s.accounts.upsert(acme, { id: 'a1', host: 'h' });
    s.accounts.upsert(admin, { id: 'o1', tenantId: 'other', host: 'h' });
    const { warnings } = s.accounts.upsert(acme, { id: 'a2', host: 'h', isDefault: true });
    expect(warnings.map((warning) => warning.code)).toEqual(['DEFAULT_ACCOUNT_CHANGED']);
    expect(defaults(s)).toEqual([
      { id: 'a1', isDefault: false },
      { id: 'a2', isDefault: true },
    ]);
    expect(s.store.accounts.get('other', 'o1')?.isDefault).toBe(true);
    // The former default's change is recorded and mirrored too, before the new default's.
    expect(
      s.store.recorded.slice(-2).map((record) => [record.aggregateId, record.eventType, record.data.account]),
    ).toEqual([
      ['acme/a1', 'account.updated', expect.objectContaining({ id: 'a1', is_default: false })],
      ['acme/a2', 'account.created', expect.objectContaining({ id: 'a2', is_default: true })],
    ]);
  });

  it('warns NO_DEFAULT_ACCOUNT when an account is added to a tenant whose only account is not the default', () => {
    const s = setup();
    s.accounts.upsert(acme, { id: 'a1', host: 'h', isDefault: false });
    const { warnings } = s.accounts.upsert(acme, { id: 'a2', host: 'h' });
    expect(warnings).toEqual([
      { code: 'NO_DEFAULT_ACCOUNT', message: expect.stringContaining('its accounts: a1, a2') },
    ]);
  });

  it('is gone when it is deleted, and the answer says so', () => {
    const s = setup();
    s.accounts.upsert(acme, { id: 'a1', host: 'h' });
    s.accounts.upsert(acme, { id: 'a2', host: 'h' });
    expect(s.accounts.delete(acme, undefined, 'a2', { force: false })).toEqual({ warnings: [] });
    s.accounts.upsert(acme, { id: 'a2', host: 'h' });
    const { warnings } = s.accounts.delete(acme, undefined, 'a1', { force: false });
    expect(warnings).toEqual([{ code: 'NO_DEFAULT_ACCOUNT', message: expect.stringContaining('its accounts: a2') }]);
    expect(defaults(s)).toEqual([{ id: 'a2', isDefault: false }]);
  });
});
