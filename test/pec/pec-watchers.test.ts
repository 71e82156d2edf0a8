/**
 * PEC mailbox watchers follow the accounts: a PEC account saved is watched at
 * once, a changed mailbox is watched where it now is, and an account no longer
 * PEC (or deleted) is watched no more. A real Dovecot; status from the API.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { message } from '../helpers/queue-fixture.js';
import { startReportScenario } from '../helpers/report-fixture.js';
import { startDovecot, type DovecotPeer } from '../peers/dovecot.js';
import { buildReceipt } from './receipt-fixtures.js';

const cleanups: Array<() => Promise<void>> = [];
let dovecot: DovecotPeer;

beforeEach(async () => {
  dovecot = await startDovecot({ users: [{ user: 'fatture', password: 'pec-secret' }] });
  cleanups.push(() => dovecot.destroy());
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const WAIT = { timeout: 15_000, interval: 50 };

describe('PEC mailbox watchers', () => {
  it('start when a PEC account is saved, move with its mailbox settings, and stop when it is no longer PEC or is deleted', async () => {
    const s = await startReportScenario(cleanups, { extraToml: '[pec]\npoll_interval_seconds = 3600\n' });
    const { key } = await s.addTenant('acme', '/acme');
    const mailboxes = async () => ((await s.fx.admin('GET', '/bounce/status')).body.mailboxes as Array<{ mailbox: string; state: string }>).map((m) => `${m.mailbox} ${m.state}`);
    expect(await mailboxes()).toEqual([]);

    const pecAccount = { is_pec: true, user: 'fatture', password: 'pec-secret', imap_host: '127.0.0.1', imap_port: dovecot.port, imap_tls_mode: 'none' };
    await s.fx.createAccount('acme', 'pec', s.sink, pecAccount);
    await vi.waitFor(async () => expect(await mailboxes()).toEqual(['pec:acme/pec waiting']), WAIT);

    // The receipts now arrive in another folder: the account says so, and the watcher follows.
    await dovecot.createFolder('Ricevute');
    await s.fx.createAccount('acme', 'pec', s.sink, { ...pecAccount, imap_folder: 'Ricevute' });
    await s.fx.post(key, [message('atto-1', { to: 'ann@pec.dest.example', account_id: 'pec' })]);
    await s.fx.settle();
    const copy = s.sink.messages.find((received) => received.raw.toString('utf8').includes('X-Genro-Mail-ID: atto-1'));
    const messageId = /^Message-ID:\s*(<[^>]+>)/im.exec(copy?.raw.toString('utf8') ?? '')?.[1] ?? '<missing>';
    await dovecot.append(buildReceipt({ type: 'accettazione', referencedMessageId: messageId }), 'Ricevute');
    await vi.waitFor(async () => expect((await s.fx.detail('acme', 'atto-1')).message.pec_rda_ts).not.toBeNull(), WAIT);
    expect(await mailboxes()).toEqual(['pec:acme/pec waiting']);

    await s.fx.createAccount('acme', 'pec', s.sink, { ...pecAccount, imap_folder: 'Ricevute', is_pec: false });
    await vi.waitFor(async () => expect(await mailboxes()).toEqual([]), WAIT);
    await s.fx.createAccount('acme', 'pec', s.sink, { ...pecAccount, imap_folder: 'Ricevute' });
    await vi.waitFor(async () => expect(await mailboxes()).toEqual(['pec:acme/pec waiting']), WAIT);
    expect((await s.fx.admin('DELETE', '/account/pec?tenant_id=acme')).status).toBe(200);
    await vi.waitFor(async () => expect(await mailboxes()).toEqual([]), WAIT);
  });
});
