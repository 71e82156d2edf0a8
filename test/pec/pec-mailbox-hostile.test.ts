/**
 * Hostile mail in a PEC account's mailbox (a real Dovecot): the bounce suite's
 * random and broken MIME, receipts cut short or with broken daticert.xml, a
 * 30 MB message. Each is flagged as ours and none is marked read; none stalls
 * or disconnects the watcher; a genuine acceptance appended after them all is
 * still applied to its message.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { hostileMessages, hugeMessage } from '../helpers/hostile-mime.js';
import { message } from '../helpers/queue-fixture.js';
import { startReportScenario } from '../helpers/report-fixture.js';
import { seededRng } from '../helpers/seeded-rng.js';
import { startDovecot } from '../peers/dovecot.js';
import { PEC_USER, pecAccountFields, relayedMessageId } from './pec-peers.js';
import { buildReceipt } from './receipt-fixtures.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const HOSTILE_COUNT = 30;
const SEED = 20261124;

describe('hostile mail in a PEC mailbox', () => {
  it('flags every hostile message without marking it read, stays connected, and applies the genuine receipt after them', async () => {
    const dovecot = await startDovecot({ users: [PEC_USER] });
    cleanups.push(() => dovecot.destroy());
    const s = await startReportScenario(cleanups, {
      extraToml: '[pec]\npoll_interval_seconds = 3600\nparse_timeout_seconds = 10\n',
    });
    const { key } = await s.addTenant('acme', '/acme');
    await s.fx.createAccount('acme', 'pec', s.sink, pecAccountFields(dovecot));
    expect((await s.fx.post(key, [message('atto-1', { to: 'ann@pec.dest.example', account_id: 'pec' })])).status).toBe(
      200,
    );
    await s.fx.settle();
    const messageId = relayedMessageId(s.sink, 'atto-1');

    // Receipts about nobody's message, cut anywhere or with a daticert.xml that is not XML.
    const rng = seededRng(SEED);
    const stranger = buildReceipt({
      type: 'avvenuta-consegna',
      referencedMessageId: '<nobody@elsewhere.example>',
      recipient: 'ann@pec.dest.example',
    });
    const broken = [
      ...Array.from({ length: 10 }, () => stranger.subarray(0, rng.int(1, stranger.length - 1))),
      buildReceipt({
        type: 'errore-consegna',
        messageId: '<broken-xml@pec.gestore.example>',
        referencedMessageId: '<nobody@elsewhere.example>',
        daticert: '<postacert tipo="errore-consegna"><dati><msgid>&lt;x',
      }),
      buildReceipt({
        type: 'accettazione',
        messageId: '<entity-bomb@pec.gestore.example>',
        referencedMessageId: '<nobody@elsewhere.example>',
        daticert: `<!DOCTYPE a [<!ENTITY a "${'x'.repeat(1000)}"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><postacert tipo="accettazione">&b;&b;&b;&b;&b;&b;&b;&b;</postacert>`,
      }),
    ];
    let stored = 0;
    for (const raw of [
      ...hostileMessages(SEED, HOSTILE_COUNT).map((hostile) => hostile.raw),
      ...broken,
      hugeMessage(30 * 1024 * 1024),
    ]) {
      try {
        await dovecot.append(raw);
        stored += 1;
      } catch {
        // refused by Dovecot (its own rules on NULs and bare CRs): not part of the mailbox
      }
    }
    expect(stored).toBeGreaterThanOrEqual((HOSTILE_COUNT + broken.length) * 0.8);
    await dovecot.append(buildReceipt({ type: 'accettazione', referencedMessageId: messageId }));

    await vi.waitFor(async () => expect((await s.fx.detail('acme', 'atto-1')).message.pec_rda_ts).not.toBeNull(), {
      timeout: 60_000,
      interval: 100,
    });
    await vi.waitFor(
      async () =>
        expect(
          (await dovecot.list()).filter((stored) => !stored.flags.some((flag) => flag.startsWith('$Mailproxy'))),
        ).toEqual([]),
      {
        timeout: 10_000,
        interval: 100,
      },
    );
    const mailbox = await dovecot.list();
    expect(mailbox).toHaveLength(stored + 1);
    expect(mailbox.filter((kept) => kept.flags.includes('\\Seen'))).toEqual([]);
    const status = ((await s.fx.admin('GET', '/bounce/status')).body.mailboxes as Array<Record<string, any>>).find(
      (one) => one.mailbox === 'pec:acme/pec',
    );
    expect(status).toMatchObject({ connected: true, last_error: null, handled: { processed: 1 } });
    expect(status?.handled.unmatched + status?.handled.not_bounce).toBe(stored);
    // Nothing of the strangers' was tied to atto-1: its only receipt is the genuine one.
    expect((await s.fx.detail('acme', 'atto-1')).pec_receipts.map((receipt) => receipt.receipt_type as string)).toEqual(
      ['accettazione'],
    );
  }, 120_000);
});
