import { describe, expect, it } from 'vitest';
import { inMemoryAdminStore, refusal } from '../../../test/helpers/in-memory-admin-store.js';
import type { Principal } from './principal.js';
import { createTenantService, definedOnly } from './tenant-service.js';

const NOW = Date.UTC(2026, 6, 14, 10, 0, 0);
const admin = { principal: { kind: 'admin' } as Principal, correlationId: 'req-1' };
const acme = { principal: { kind: 'tenant', tenantId: 'acme' } as Principal, correlationId: 'req-2' };

function setup() {
  const store = inMemoryAdminStore();
  let keys = 0;
  let secrets = 0;
  let ids = 0;
  const refreshed: string[] = [];
  const tenants = createTenantService({
    store,
    holds: {
      refreshHolds: (tenantId) => {
        refreshed.push(tenantId);
        return 0;
      },
    },
    keys: { issue: () => ({ key: `key-${(keys += 1)}`, hash: `hash-${keys}` }), hash: (key) => `hash-of-${key}` },
    newSigningSecret: () => `signing-${(secrets += 1)}`,
    clock: { now: () => NOW },
    ids: { uuid: () => `id-${(ids += 1)}` },
  });
  return { store, tenants, refreshed };
}

describe('tenant create', () => {
  it('issues a key shown once (only its digest is stored) and a signing secret, with the defaults filled in', () => {
    const s = setup();
    const { tenant, key, signingSecret } = s.tenants.create(admin, {
      id: 'acme',
      clientBaseUrl: 'https://app.example',
      apiKeyExpiresInSeconds: 3600,
    });
    expect(tenant).toMatchObject({
      id: 'acme',
      clientSyncPath: '/mail-proxy/sync',
      active: true,
      clientSigningSecret: 'signing-1',
      apiKeyCreatedAt: NOW,
      apiKeyExpiresAt: NOW + 3_600_000,
    });
    expect(key).toEqual({ tenantId: 'acme', apiKey: 'key-1', expiresAt: NOW + 3_600_000 });
    expect(signingSecret).toBe('signing-1');
    expect(s.store.keyHashes.get('acme')).toBe('hash-1');
  });

  it('generates no signing secret when one is given, or null (unsigned reports)', () => {
    const s = setup();
    expect(s.tenants.create(admin, { id: 'a', clientSigningSecret: 'mine' })).toMatchObject({
      signingSecret: null,
      tenant: { clientSigningSecret: 'mine' },
    });
    expect(s.tenants.create(admin, { id: 'b', clientSigningSecret: null })).toMatchObject({
      signingSecret: null,
      tenant: { clientSigningSecret: null },
    });
  });

  it('records tenant.created with the tenant as its contract: client credentials redacted, no key, no secret', () => {
    const s = setup();
    s.tenants.create(admin, { id: 'acme', clientAuth: { method: 'basic', user: 'app', password: 'pw' } });
    const [change] = s.store.recorded;
    expect(change).toMatchObject({
      command: 'tenant.create',
      eventType: 'tenant.created',
      tenantId: 'acme',
      aggregateType: 'tenant',
      actor: 'admin',
      occurredAt: NOW,
    });
    expect(change?.data.tenant).toMatchObject({
      id: 'acme',
      client_auth: { method: 'basic', user: 'app' },
      client_signing_secret_set: true,
      created_at: new Date(NOW).toISOString(),
    });
    for (const secret of ['pw', 'key-1', 'signing-1']) expect(JSON.stringify(change?.data)).not.toContain(secret);
  });

  it('refuses an existing id with CONFLICT and changes nothing', () => {
    const s = setup();
    s.tenants.create(admin, { id: 'acme' });
    expect(refusal(() => s.tenants.create(admin, { id: 'acme', name: 'again' })).code).toBe('CONFLICT');
    expect(s.store.tenants.get('acme')?.name).toBeNull();
    expect(s.store.keyHashes.get('acme')).toBe('hash-1');
    expect(s.store.recorded).toHaveLength(1);
  });

  it('is for the admin token only', () => {
    const s = setup();
    expect(refusal(() => s.tenants.create(acme, { id: 'acme' })).code).toBe('FORBIDDEN');
    expect(refusal(() => s.tenants.list(acme)).code).toBe('FORBIDDEN');
    expect(s.store.tenants.list()).toEqual([]);
  });
});

describe('tenant update', () => {
  it('changes only the fields given, and records which', () => {
    const s = setup();
    s.tenants.create(admin, { id: 'acme', name: 'Acme', clientBaseUrl: 'https://app.example' });
    const updated = s.tenants.update(admin, 'acme', { name: 'Acme Ltd', clientBaseUrl: undefined });
    expect(updated).toMatchObject({ name: 'Acme Ltd', clientBaseUrl: 'https://app.example' });
    expect(s.store.recorded.at(-1)).toMatchObject({
      eventType: 'tenant.updated',
      data: { changed: ['name'], tenant: { name: 'Acme Ltd' } },
    });
    expect(s.refreshed).toEqual([]);
  });

  it('re-derives the held messages when `active` changes, and only then', () => {
    const s = setup();
    s.tenants.create(admin, { id: 'acme' });
    s.tenants.update(admin, 'acme', { active: true });
    s.tenants.update(admin, 'acme', { active: false });
    expect(s.refreshed).toEqual(['acme']);
  });

  it('answers NOT_FOUND for an unknown tenant', () => {
    expect(refusal(() => setup().tenants.update(admin, 'nobody', { name: 'x' })).code).toBe('NOT_FOUND');
  });
});

describe('tenant delete', () => {
  it('refuses while the tenant has undelivered mail, unless forced', () => {
    const s = setup();
    s.tenants.create(admin, { id: 'acme' });
    s.store.pending.set('acme', 2);
    expect(refusal(() => s.tenants.delete(admin, 'acme', { force: false }))).toMatchObject({
      code: 'CONFLICT',
      details: { tenant_id: 'acme', pending_messages: 2 },
    });
    expect(s.store.tenants.get('acme')).not.toBeNull();
    s.tenants.delete(admin, 'acme', { force: true });
    expect(s.store.tenants.get('acme')).toBeNull();
    expect(s.store.recorded.at(-1)).toMatchObject({
      eventType: 'tenant.deleted',
      data: { tenant_id: 'acme', forced: true, pending_messages: 2 },
    });
  });
});

describe('tenant secrets', () => {
  it('rotating the key replaces the stored digest at once and records the new expiry, never the key', () => {
    const s = setup();
    s.tenants.create(admin, { id: 'acme' });
    const issued = s.tenants.rotateKey(admin, 'acme', { expiresInSeconds: 60 });
    expect(issued).toEqual({ tenantId: 'acme', apiKey: 'key-2', expiresAt: NOW + 60_000 });
    expect(s.store.keyHashes.get('acme')).toBe('hash-2');
    expect(s.store.recorded.at(-1)).toMatchObject({
      eventType: 'tenant.api_key_rotated',
      data: { tenant_id: 'acme', api_key_expires_at: new Date(NOW + 60_000).toISOString() },
    });
    expect(JSON.stringify(s.store.recorded)).not.toContain('key-2');
  });

  it('rotating the signing secret stores and answers the new one, and records only that it changed', () => {
    const s = setup();
    s.tenants.create(admin, { id: 'acme' });
    expect(s.tenants.rotateSigningSecret(admin, 'acme')).toEqual({ tenantId: 'acme', secret: 'signing-2' });
    expect(s.store.tenants.get('acme')?.clientSigningSecret).toBe('signing-2');
    expect(s.store.recorded.at(-1)).toMatchObject({
      eventType: 'tenant.signing_secret_rotated',
      data: { tenant_id: 'acme' },
    });
    expect(JSON.stringify(s.store.recorded)).not.toContain('signing-2');
  });

  it('rotating for an unknown tenant answers NOT_FOUND and stores no key', () => {
    const s = setup();
    expect(refusal(() => s.tenants.rotateKey(admin, 'nobody', {})).code).toBe('NOT_FOUND');
    expect(s.store.keyHashes.size).toBe(0);
  });
});

describe('definedOnly', () => {
  it('drops undefined fields and keeps null ones (null clears a field, undefined keeps it)', () => {
    expect(definedOnly({ a: 1, b: undefined, c: null })).toEqual({ a: 1, c: null });
  });
});
