/**
 * A bounce for a forwarded or aliased recipient, end to end: the daemon relays
 * a message to two recipients through a real SMTP sink, a DSN about it names
 * the mailbox a forward reached, and the daemon reads it from a real Dovecot.
 * The suppression must hit the address we sent to, never the forwarding target.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startDovecot, type DovecotPeer } from '../peers/dovecot.js';
import { dsnFor } from '../helpers/bounce-mail.js';
import { idleBounceToml, sentThroughSink } from '../helpers/bounce-scenario.js';
import { message } from '../helpers/queue-fixture.js';
import { startReportScenario, type ReportScenario } from '../helpers/report-fixture.js';

const cleanups: Array<() => Promise<void>> = [];
let dovecot: DovecotPeer;

beforeEach(async () => {
  dovecot = await startDovecot();
  cleanups.push(() => dovecot.destroy());
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const startWithBounceMailbox = (peer: DovecotPeer): Promise<ReportScenario> =>
  startReportScenario(cleanups, { extraToml: idleBounceToml(peer) });
const sent = sentThroughSink;

const suppressed = async (s: ReportScenario): Promise<string[]> =>
  ((await s.fx.admin('GET', '/suppressions?tenant_id=acme')).body.suppressions as Array<{ address: string }>)
    .map((entry) => entry.address)
    .sort();

describe('a bounce for a forwarded recipient on a real Dovecot', () => {
  it('suppresses the address we sent to, found by Original-Recipient or as a host-qualified form, and never the forwarding target', async () => {
    const s = await startWithBounceMailbox(dovecot);
    const { key } = await s.addTenant('acme', '/acme');
    const first = await sent(s, key, 'fwd-1', ['ann@example.net', 'bob@example.org']);
    const second = await sent(s, key, 'fwd-2', ['cid@example.net', 'dan@example.org']);

    // A forward to another domain, our address kept as Original-Recipient.
    await dovecot.append(
      dsnFor(first, { recipient: 'ann@example.net', finalRecipient: 'ann.lee@forward.example.com' }),
    );
    // The mailbox named with the host that holds it, and no Original-Recipient.
    await dovecot.append(
      dsnFor(second, {
        recipient: 'dan@example.org',
        finalRecipient: 'dan@store2.example.org',
        withOriginalRecipient: false,
      }),
    );

    await vi.waitFor(async () => expect(await dovecot.list('Processed')).toHaveLength(2), {
      timeout: 15_000,
      interval: 50,
    });
    expect(await suppressed(s)).toEqual(['ann@example.net', 'dan@example.org']);
    await s.client.waitFor(
      'both bounce items',
      () => s.client.items('/acme').filter((item) => item.event === 'bounced').length === 2,
    );
    const recipients = s.client
      .items('/acme')
      .filter((item) => item.event === 'bounced')
      .map((item) => [item.id, item.bounce_recipient]);
    expect(recipients.sort()).toEqual([
      ['fwd-1', 'ann@example.net'],
      ['fwd-2', 'dan@example.org'],
    ]);
    // New mail to the forwarding target is not refused: it was never suppressed.
    expect((await s.fx.post(key, [message('fwd-3', { to: 'ann.lee@forward.example.com' })])).body).toMatchObject({
      ok: true,
      queued: 1,
    });
  });
});
