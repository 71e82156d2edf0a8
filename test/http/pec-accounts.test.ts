/**
 * PEC accounts over the admin API on a real daemon: the flag and the account's
 * own IMAP mailbox are stored, shown (the password only as has_imap_password),
 * kept or cleared on update, and refused with a field-naming 400 when a PEC
 * account could not read its receipts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startTestDaemon, type TestDaemon } from '../helpers/test-daemon.js';

const RELAY_PASSWORD = 'pec-relay-password-4c2e8a';
const IMAP_PASSWORD = 'pec-imap-password-9d1f7b';

describe('PEC accounts over HTTP', () => {
  let t: TestDaemon;
  let key: string;
  const seen: string[] = [];
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await api(t.url, method, path, { token: key, body });
    seen.push(response.text);
    return response;
  };
  /** What the PEC watcher would be given for the account (credentials resolved). */
  const watched = (id: string) => t.daemon.store.accounts.pecMailboxes().find((box) => box.accountId === id);

  beforeAll(async () => {
    t = await startTestDaemon();
    key = (await api(t.url, 'POST', '/tenant', { token: t.adminToken, body: { id: 'studio' } })).body.api_key;
  });
  afterAll(async () => {
    await t.stop();
    t.cleanup();
  });

  it('creates a PEC account whose view shows the mailbox and has_imap_password, never the password', async () => {
    const created = await call('POST', '/account', {
      id: 'pec',
      host: 'smtps.pec.example',
      port: 465,
      tls_mode: 'implicit',
      user: 'studio@pec.example',
      password: RELAY_PASSWORD,
      is_pec: true,
      imap_host: 'imaps.pec.example',
      imap_user: 'box@pec.example',
      imap_password: IMAP_PASSWORD,
      imap_folder: 'Ricevute',
    });
    expect(created.status).toBe(201);
    const expected = {
      is_pec: true,
      imap_host: 'imaps.pec.example',
      imap_port: 993,
      imap_tls_mode: 'implicit',
      imap_user: 'box@pec.example',
      has_imap_password: true,
      imap_folder: 'Ricevute',
    };
    expect(created.body.account).toMatchObject(expected);
    expect((await call('GET', '/account/pec')).body.account).toMatchObject(expected);
    expect((await call('GET', '/accounts')).body.accounts[0]).toMatchObject(expected);
    expect(created.body.account).not.toHaveProperty('imap_password');
    expect(watched('pec')).toMatchObject({
      host: 'imaps.pec.example',
      port: 993,
      user: 'box@pec.example',
      password: IMAP_PASSWORD,
      folder: 'Ricevute',
    });
  });

  it('shows an account without a mailbox with null mailbox fields, and defaults the port to the TLS mode', async () => {
    const plain = await call('POST', '/account', { id: 'plain', host: 'smtp.example.com' });
    expect(plain.body.account).toMatchObject({
      is_pec: false,
      imap_host: null,
      imap_port: null,
      imap_tls_mode: null,
      imap_user: null,
      has_imap_password: false,
      imap_folder: null,
    });
    const starttls = await call('POST', '/account', {
      id: 'plain',
      host: 'smtp.example.com',
      imap_host: 'imap.example.com',
      imap_tls_mode: 'starttls',
    });
    expect(starttls.body.account).toMatchObject({
      is_pec: false,
      imap_host: 'imap.example.com',
      imap_port: 143,
      imap_tls_mode: 'starttls',
      imap_folder: 'INBOX',
    });
    // Not PEC: a mailbox alone is not watched.
    expect(watched('plain')).toBeUndefined();
  });

  it('keeps the stored mailbox and its password when an update omits them, and falls back to the relay password once it is cleared', async () => {
    const renamed = await call('POST', '/account', { id: 'pec', host: 'smtps2.pec.example' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.account).toMatchObject({
      host: 'smtps2.pec.example',
      is_pec: true,
      imap_host: 'imaps.pec.example',
      imap_folder: 'Ricevute',
      has_imap_password: true,
    });
    expect(watched('pec')?.password).toBe(IMAP_PASSWORD);

    const cleared = await call('POST', '/account', {
      id: 'pec',
      host: 'smtps2.pec.example',
      imap_password: null,
      imap_user: null,
    });
    expect(cleared.body.account).toMatchObject({ has_imap_password: false, imap_user: null, has_password: true });
    expect(watched('pec')).toMatchObject({ user: 'studio@pec.example', password: RELAY_PASSWORD });
  });

  it('keeps the mailbox settings when is_pec is cleared, and stops watching it', async () => {
    const off = await call('POST', '/account', { id: 'pec', host: 'smtps2.pec.example', is_pec: false });
    expect(off.body.account).toMatchObject({ is_pec: false, imap_host: 'imaps.pec.example', imap_folder: 'Ricevute' });
    expect(watched('pec')).toBeUndefined();
    const on = await call('POST', '/account', { id: 'pec', host: 'smtps2.pec.example', is_pec: true });
    expect(on.body.account).toMatchObject({ is_pec: true, imap_host: 'imaps.pec.example' });
  });

  const refusals: Array<[string, Record<string, unknown>, string]> = [
    [
      'is_pec without a mailbox host',
      { id: 'new-pec', host: 'smtp.pec.example', user: 'u', password: 'p', is_pec: true },
      'imap_host',
    ],
    [
      'is_pec without a user anywhere',
      { id: 'new-pec', host: 'smtp.pec.example', password: 'p', is_pec: true, imap_host: 'imap.pec.example' },
      'imap_user',
    ],
    [
      'is_pec without a password anywhere',
      { id: 'new-pec', host: 'smtp.pec.example', user: 'u', is_pec: true, imap_host: 'imap.pec.example' },
      'imap_password',
    ],
    [
      'a PEC account losing the relay password it falls back to',
      { id: 'pec', host: 'smtps2.pec.example', password: null },
      'imap_password',
    ],
    ['a PEC account losing its mailbox', { id: 'pec', host: 'smtps2.pec.example', imap_host: null }, 'imap_host'],
    [
      'mailbox settings without a mailbox host',
      { id: 'new-plain', host: 'smtp.example.com', imap_folder: 'INBOX' },
      'imap_host',
    ],
    [
      'an unknown TLS mode',
      { id: 'new-pec', host: 'smtp.pec.example', imap_host: 'imap.pec.example', imap_tls_mode: 'ssl' },
      'imap_tls_mode',
    ],
    [
      'a folder with CR/LF',
      {
        id: 'new-pec',
        host: 'smtp.pec.example',
        imap_host: 'imap.pec.example',
        imap_folder: 'INBOX\r\nA1 DELETE INBOX',
      },
      'imap_folder',
    ],
    [
      'a folder with another control character',
      { id: 'new-pec', host: 'smtp.pec.example', imap_host: 'imap.pec.example', imap_folder: 'IN\tBOX' },
      'imap_folder',
    ],
    [
      'a folder longer than 255',
      { id: 'new-pec', host: 'smtp.pec.example', imap_host: 'imap.pec.example', imap_folder: 'x'.repeat(256) },
      'imap_folder',
    ],
    [
      'an empty mailbox password',
      { id: 'new-pec', host: 'smtp.pec.example', imap_host: 'imap.pec.example', imap_password: '' },
      'imap_password',
    ],
    [
      'a mailbox host that is not a host',
      { id: 'new-pec', host: 'smtp.pec.example', imap_host: 'imap pec example' },
      'imap_host',
    ],
  ];

  it.each(refusals)('refuses %s with 400 VALIDATION_FAILED naming the field', async (_name, body, field) => {
    const response = await call('POST', '/account', body);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ path: field, message: expect.any(String) }],
    });
  });

  it('stored nothing from the refused requests', async () => {
    const ids = (await call('GET', '/accounts')).body.accounts.map((account: { id: string }) => account.id);
    expect(ids).toEqual(['pec', 'plain']);
    expect((await call('GET', '/account/pec')).body.account).toMatchObject({
      is_pec: true,
      has_password: true,
      imap_host: 'imaps.pec.example',
    });
  });

  it('never shows either password in a response or a log line', () => {
    expect(seen.length).toBeGreaterThan(15);
    for (const text of [...seen, ...t.logLines]) {
      expect(text).not.toContain(IMAP_PASSWORD);
      expect(text).not.toContain(RELAY_PASSWORD);
    }
  });
});
