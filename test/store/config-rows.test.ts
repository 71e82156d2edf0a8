// Fleet mode's copy of the shared configuration, against real database files: an object read as
// its stored rows on one node and applied on another (both under one secret key) is the same
// object there: its sealed secrets open, its API key authenticates, the audit names the origin.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { Account } from '../../src/core/account/account.js';
import type { ChangeRecord } from '../../src/core/events/change-record.js';
import type { ConfigKey, ConfigRows } from '../../src/core/fleet/config-replica.js';
import type { Tenant } from '../../src/core/tenant/tenant.js';
import { createBlindIndex } from '../../src/security/blind-index.js';
import { createBodySeal, keyEncryptionKey } from '../../src/security/body-seal.js';
import { createAesGcmSecretBox } from '../../src/security/secret-box.js';
import { createSqliteStore, type SqliteStore } from '../../src/store/sqlite-store.js';

const NOW = Date.UTC(2026, 10, 25, 10, 0, 0);
const KEY = randomBytes(32);
/** Nodes share the master, so the blind index key it derives. */
const INDEX_KEY = randomBytes(32);
const dirs: string[] = [];
const stores: SqliteStore[] = [];
afterEach(() => {
  for (const store of stores.splice(0)) store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function node(nodeId = 'n2'): { store: SqliteStore; rows: ConfigRows; path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'mailproxy-config-rows-'));
  dirs.push(dir);
  let ids = 0;
  const store = createSqliteStore({
    path: join(dir, 'mailproxy.db'),
    secrets: createAesGcmSecretBox(KEY),
    bodies: createBodySeal([keyEncryptionKey(KEY)]),
    blindIndex: () => createBlindIndex(INDEX_KEY),
    ids: { uuid: () => `u-${(ids += 1)}` } as never,
    now: () => NOW,
  });
  stores.push(store);
  const rows = store.configRows({
    nodeId,
    changes: store.changes,
    tenants: store.tenants,
    refreshHolds: store.messages.refreshHolds,
    now: () => NOW,
  });
  return { store, rows, path: join(dir, 'mailproxy.db') };
}

const tenant = (overrides: Partial<Tenant> = {}): Tenant => ({
  id: 'acme',
  name: 'Acme',
  clientBaseUrl: 'https://app.example',
  clientSyncPath: '/mail-proxy/sync',
  clientAttachmentPath: null,
  clientAuth: { method: 'bearer', token: 'client-token' },
  clientSigningSecret: 'signing',
  active: true,
  routes: [],
  sendingDomains: [],
  listUnsubscribe: null,
  attachmentOffload: null,
  apiKeyCreatedAt: NOW,
  apiKeyExpiresAt: null,
  createdAt: NOW,
  updatedAt: NOW,
  ...overrides,
});

const account = (overrides: Partial<Account> = {}): Account => ({
  tenantId: 'acme',
  id: 'main',
  host: 'smtp.example',
  port: 587,
  user: 'mailer',
  password: 'relay-pass',
  tlsMode: 'starttls',
  tlsRejectUnauthorized: true,
  limitPerMinute: null,
  limitPerHour: null,
  limitPerDay: null,
  limitBehavior: 'defer',
  fallbackAccounts: [],
  failoverAfterSeconds: 60,
  warmUp: null,
  destinationLimits: [],
  maxConnections: 5,
  maxMessagesPerConnection: 100,
  isDefault: true,
  isPec: false,
  provider: null,
  imap: null,
  pausedAt: null,
  pausedReason: null,
  createdAt: NOW,
  updatedAt: NOW,
  ...overrides,
});

const change = (command: string, key: ConfigKey): ChangeRecord => ({
  eventId: `event-${command}`,
  occurredAt: NOW,
  actor: 'admin',
  command,
  tenantId: key.tenantId,
  aggregateType: key.kind === 'suspensions' ? 'suspension' : key.kind,
  aggregateId: key.tenantId,
  eventType: command,
  eventVersion: 1,
  data: {},
  correlationId: null,
});

const TENANT: ConfigKey = { kind: 'tenant', tenantId: 'acme' };
const MAIN: ConfigKey = { kind: 'account', tenantId: 'acme', accountId: 'main' };

/** Copies the object from `from` to `to` at `revision`, as the bucket would carry it. */
function carry(from: ConfigRows, to: ConfigRows, key: ConfigKey, revision: number, command = 'copy'): boolean {
  return to.apply({ key, revision, value: { rows: from.read(key), origin: 'n1', changes: [change(command, key)] } });
}

describe('shared configuration rows', () => {
  it('applies a tenant and its account read on another node: secrets open, the API key authenticates, the audit names the origin', () => {
    const [one, two] = [node(), node()];
    one.store.tenants.insert(tenant(), 'digest-1');
    one.store.accounts.save(account());
    expect(carry(one.rows, two.rows, TENANT, 1, 'tenant.create')).toBe(true);
    expect(carry(one.rows, two.rows, MAIN, 2, 'account.upsert')).toBe(true);

    expect(two.store.tenants.get('acme')).toEqual(tenant());
    expect(two.store.accounts.get('acme', 'main')).toEqual(account());
    expect(two.store.tenants.findKeyHolder('digest-1')).toEqual({ tenantId: 'acme', apiKeyExpiresAt: null });
    expect(two.rows.appliedRevision(MAIN)).toBe(2);
    expect(two.rows.lastRevision()).toBe(2);
    const db = new Database(two.path, { readonly: true });
    expect(db.prepare(`SELECT command, node_id FROM command_log ORDER BY seq`).all()).toEqual([
      { command: 'tenant.create', node_id: 'n1' },
      { command: 'account.upsert', node_id: 'n1' },
    ]);
    // n1 took the changes and mirrors their events; here they are only audited.
    expect(db.prepare(`SELECT count(*) FROM outbox`).pluck().get()).toBe(0);
    db.close();
  });

  it('writes the event of a change this node took itself when it applies it (the node that took it mirrors it, once)', () => {
    const [one, self] = [node(), node('n1')];
    one.store.tenants.insert(tenant(), 'digest-1');
    expect(carry(one.rows, self.rows, TENANT, 1, 'tenant.create')).toBe(true);
    const db = new Database(self.path, { readonly: true });
    expect(db.prepare(`SELECT event_type FROM outbox`).pluck().all()).toEqual(['tenant.create']);
    expect(db.prepare(`SELECT node_id FROM command_log`).pluck().all()).toEqual(['n1']);
    db.close();
  });

  it('applies each revision once: an older or repeated one changes nothing', () => {
    const [one, two] = [node(), node()];
    one.store.tenants.insert(tenant(), 'digest-1');
    expect(carry(one.rows, two.rows, TENANT, 5)).toBe(true);
    one.store.tenants.update(tenant({ name: 'Older', updatedAt: NOW + 1 }));
    expect(carry(one.rows, two.rows, TENANT, 5)).toBe(false);
    expect(carry(one.rows, two.rows, TENANT, 4)).toBe(false);
    expect(two.store.tenants.get('acme')?.name).toBe('Acme');
  });

  it('applies a change to a tenant the receiving node has read (and cached) already: the new row is what it reads', () => {
    const [one, two] = [node(), node()];
    one.store.tenants.insert(tenant(), 'digest-1');
    carry(one.rows, two.rows, TENANT, 1);
    // Read on the receiving node first, as its delivery and intake read it for every message.
    expect(two.store.tenants.get('acme')?.name).toBe('Acme');
    const changed = tenant({
      name: 'Acme Mail',
      listUnsubscribe: { baseUrl: 'https://mail.example.com', mailto: null, scope: 'all' },
      updatedAt: NOW + 1,
    });
    one.store.tenants.update(changed);
    expect(carry(one.rows, two.rows, TENANT, 2)).toBe(true);
    expect(two.store.tenants.get('acme')).toEqual(changed);
    expect(new Database(two.path, { readonly: true }).prepare(`SELECT name FROM tenants`).pluck().get()).toBe(
      'Acme Mail',
    );
  });

  it('forgets a rotated API key on the receiving node at once', () => {
    const [one, two] = [node(), node()];
    one.store.tenants.insert(tenant(), 'digest-1');
    carry(one.rows, two.rows, TENANT, 1);
    expect(two.store.tenants.findKeyHolder('digest-1')).not.toBeNull();
    one.store.tenants.replaceApiKey('acme', 'digest-2', NOW + 5, null);
    carry(one.rows, two.rows, TENANT, 2);
    expect(two.store.tenants.findKeyHolder('digest-1')).toBeNull();
    expect(two.store.tenants.findKeyHolder('digest-2')).toMatchObject({ tenantId: 'acme' });
  });

  it('keeps one default account when the new default arrives before the former one is unmarked', () => {
    const [one, two] = [node(), node()];
    one.store.tenants.insert(tenant(), 'digest-1');
    carry(one.rows, two.rows, TENANT, 1);
    two.store.accounts.save(account({ id: 'old', isDefault: true }));
    one.store.accounts.save(account({ id: 'main', isDefault: true }));
    carry(one.rows, two.rows, MAIN, 2);
    expect(two.store.accounts.choices('acme')).toEqual(
      expect.arrayContaining([
        { id: 'main', isDefault: true },
        { id: 'old', isDefault: false },
      ]),
    );
  });

  it('carries a suppression under its digest, the address sealed: it opens and matches on the other node', () => {
    const [one, two] = [node(), node()];
    one.store.tenants.insert(tenant(), 'digest-1');
    carry(one.rows, two.rows, TENANT, 1);
    const address = 'ann.rossi@example.net';
    one.store.suppressions.upsert({
      tenantId: 'acme',
      address,
      reason: 'asked',
      source: 'manual',
      createdAt: NOW,
      expiresAt: null,
    });
    const key: ConfigKey = { kind: 'suppression', tenantId: 'acme', digest: one.store.suppressions.digestOf(address) };
    const rows = one.rows.read(key);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain('example.net');
    expect(carry(one.rows, two.rows, key, 2, 'suppression.add')).toBe(true);
    expect(two.store.suppressions.get('acme', 'Ann.Rossi@Example.NET', NOW)).toMatchObject({
      address,
      reason: 'asked',
    });
    expect([...two.store.queue.suppressed('acme', [address], NOW)]).toEqual([address]);

    one.store.suppressions.remove('acme', address);
    carry(one.rows, two.rows, key, 3, 'suppression.remove');
    expect(two.store.suppressions.get('acme', address, NOW)).toBeNull();
  });

  it('replaces a tenant suspension set whole, and deletes what the origin deleted', () => {
    const [one, two] = [node(), node()];
    const suspensions: ConfigKey = { kind: 'suspensions', tenantId: 'acme' };
    one.store.tenants.insert(tenant(), 'digest-1');
    carry(one.rows, two.rows, TENANT, 1);
    one.store.messages.suspend('acme', 'spring', NOW);
    one.store.messages.suspend('acme', 'autumn', NOW);
    carry(one.rows, two.rows, suspensions, 2);
    expect(two.store.messages.suspensions('acme').sort()).toEqual(['autumn', 'spring']);
    one.store.messages.activate('acme', '*', NOW);
    carry(one.rows, two.rows, suspensions, 3);
    expect(two.store.messages.suspensions('acme')).toEqual([]);

    one.store.tenants.delete('acme');
    carry(one.rows, two.rows, TENANT, 4, 'tenant.delete');
    expect(two.store.tenants.get('acme')).toBeNull();
  });
});
