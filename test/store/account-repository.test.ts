// The account repository against a real database file: a PEC account's mailbox round trip, its
// password sealed at rest under its own context, and the mailboxes the PEC watcher is given.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Account } from '../../src/core/account/account.js';
import { createAesGcmSecretBox } from '../../src/security/secret-box.js';
import { createSqliteAccountRepository } from '../../src/store/account-repository.js';
import { openDatabase } from '../../src/store/database.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function openRepository() {
  const dir = mkdtempSync(join(tmpdir(), 'mailproxy-accounts-'));
  dirs.push(dir);
  const { db } = openDatabase({ path: join(dir, 'mailproxy.db') });
  db.prepare(
    `INSERT INTO tenants (id, api_key_hash, api_key_created_at, created_at, updated_at) VALUES (?, ?, 0, 0, 0)`,
  ).run('acme', 'h1');
  db.prepare(
    `INSERT INTO tenants (id, api_key_hash, api_key_created_at, created_at, updated_at) VALUES (?, ?, 0, 0, 0)`,
  ).run('beta', 'h2');
  const secrets = createAesGcmSecretBox(randomBytes(32));
  return { db, dir, secrets, accounts: createSqliteAccountRepository(db, secrets) };
}

const account = (overrides: Partial<Account>): Account => ({
  tenantId: 'acme',
  id: 'relay',
  host: 'smtp.pec.example',
  port: 465,
  user: 'relay-user',
  password: 'relay-pass',
  tlsMode: 'implicit',
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
  isDefault: false,
  isPec: false,
  provider: null,
  imap: null,
  pausedAt: null,
  pausedReason: null,
  createdAt: 1000,
  updatedAt: 1000,
  ...overrides,
});

const IMAP_PASSWORD = `imap-pass-${randomBytes(8).toString('hex')}`;
const mailbox = {
  host: 'imap.pec.example',
  port: 993,
  tlsMode: 'implicit' as const,
  user: 'box-user',
  password: IMAP_PASSWORD,
  folder: 'Ricevute PEC',
};

describe('the SQLite account repository with PEC mailboxes', () => {
  it('reads back the PEC flag and the mailbox as saved, its password sealed (not in the database file)', () => {
    const { db, dir, accounts } = openRepository();
    const saved = account({ isPec: true, imap: mailbox });
    accounts.save(saved);
    accounts.save(account({ id: 'plain' }));
    expect(accounts.get('acme', 'relay')).toEqual(saved);
    expect(accounts.get('acme', 'plain')).toMatchObject({ isPec: false, imap: null });

    const row = db
      .prepare(
        `SELECT is_pec, imap_host, imap_port, imap_tls_mode, imap_user, imap_password_sealed, imap_folder FROM accounts WHERE id = 'relay'`,
      )
      .get() as Record<string, unknown>;
    expect(row).toMatchObject({
      is_pec: 1,
      imap_host: 'imap.pec.example',
      imap_port: 993,
      imap_tls_mode: 'implicit',
      imap_user: 'box-user',
      imap_folder: 'Ricevute PEC',
    });
    expect(row.imap_password_sealed).toMatch(/^v1\./);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    const bytes = Buffer.concat(readdirSync(dir).map((name) => readFileSync(join(dir, name))));
    expect(bytes.includes(Buffer.from('imap.pec.example'))).toBe(true); // the settings are there, in the clear
    expect(bytes.includes(Buffer.from(IMAP_PASSWORD))).toBe(false);
  });

  it("seals the mailbox password under its own context: the relay password's context does not open it", () => {
    const { db, secrets, accounts } = openRepository();
    accounts.save(account({ isPec: true, imap: mailbox }));
    const sealed = db.prepare(`SELECT imap_password_sealed FROM accounts WHERE id = 'relay'`).pluck().get() as string;
    expect(secrets.open(sealed, 'account:acme/relay:imap_password')).toBe(IMAP_PASSWORD);
    expect(() => secrets.open(sealed, 'account:acme/relay:password')).toThrow();
  });

  it('gives the watcher every PEC mailbox with credentials resolved, the relay ones when the mailbox has none, and no other account', () => {
    const { accounts } = openRepository();
    accounts.save(account({ tenantId: 'beta', id: 'own', isPec: true, imap: mailbox, tlsRejectUnauthorized: false }));
    accounts.save(
      account({
        id: 'shared',
        isPec: true,
        imap: {
          ...mailbox,
          host: 'imap.shared.example',
          port: 143,
          tlsMode: 'starttls',
          user: null,
          password: null,
          folder: 'INBOX',
        },
      }),
    );
    // Not PEC (any more): its mailbox is kept but not watched.
    accounts.save(account({ id: 'was-pec', imap: mailbox }));
    accounts.save(account({ id: 'plain' }));
    expect(accounts.pecMailboxes()).toEqual([
      {
        tenantId: 'acme',
        accountId: 'shared',
        host: 'imap.shared.example',
        port: 143,
        tlsMode: 'starttls',
        tlsRejectUnauthorized: true,
        user: 'relay-user',
        password: 'relay-pass',
        folder: 'INBOX',
      },
      {
        tenantId: 'beta',
        accountId: 'own',
        host: 'imap.pec.example',
        port: 993,
        tlsMode: 'implicit',
        tlsRejectUnauthorized: false,
        user: 'box-user',
        password: IMAP_PASSWORD,
        folder: 'Ricevute PEC',
      },
    ]);
  });

  it('changes its version on every save, even one in the same millisecond that changes only the mailbox', () => {
    const { accounts } = openRepository();
    accounts.save(account({}));
    const before = accounts.version();
    accounts.save(account({ isPec: true, imap: mailbox }));
    const after = accounts.version();
    expect(after).not.toBe(before);
    accounts.save(account({ isPec: true, imap: { ...mailbox, folder: 'Other' } }));
    expect(accounts.version()).not.toBe(after);
  });
});
