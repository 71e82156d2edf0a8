/**
 * The bounce mailbox end to end: a real Dovecot holds the mailbox, the daemon
 * relays to a real SMTP sink and reports to a real client endpoint. A DSN
 * built around the message the sink received is appended over IMAP, and what
 * follows is observed from outside: the message's state, the report item,
 * the suppression list, the folders of the mailbox.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startDovecot, type DovecotPeer } from '../peers/dovecot.js';
import { arfFor, dsnFor, ordinaryMail } from '../helpers/bounce-mail.js';
import { idleBounceToml, sentThroughSink } from '../helpers/bounce-scenario.js';
import { message } from '../helpers/queue-fixture.js';
import { openSubmission } from '../helpers/smtp-submit.js';
import { startReportScenario, type ReportScenario } from '../helpers/report-fixture.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const cleanups: Array<() => Promise<void>> = [];
let dovecot: DovecotPeer;

beforeEach(async () => {
  dovecot = await startDovecot();
  cleanups.push(() => dovecot.destroy());
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const sent = sentThroughSink;

const bounceStatus = async (s: ReportScenario) =>
  (await s.fx.admin('GET', '/bounce/status')).body.mailboxes[0] as Record<string, unknown>;

describe('bounce mailbox on a real Dovecot', () => {
  it('a DSN marks its message bounced at the IDLE notification, reaches the client, suppresses the recipient, and is moved, not deleted', async () => {
    const s = await startReportScenarioWithBounce(dovecot);
    const { key } = await s.addTenant('acme', '/acme');
    const original = await sent(s, key, 'inv-1', 'ann@example.net');
    await vi.waitFor(async () => expect((await bounceStatus(s)).state).toBe('waiting'), { timeout: 10_000 });

    await dovecot.append(dsnFor(original, { recipient: 'ann@example.net' }));

    await vi.waitFor(async () => expect((await s.fx.detail('acme', 'inv-1')).message.bounce_type).toBe('hard'), {
      timeout: 10_000,
      interval: 50,
    });
    const detail = await s.fx.detail('acme', 'inv-1');
    expect(detail.message).toMatchObject({ status: 'bounced', bounce_code: '550', state: 'sent' });
    expect(detail.message.bounce_reason).toContain('User unknown');
    await s.client.waitFor('the bounce item', () => s.client.items('/acme').some((item) => item.event === 'bounced'));
    expect(s.client.items('/acme').find((item) => item.event === 'bounced')).toMatchObject({
      id: 'inv-1',
      bounce_type: 'hard',
      bounce_code: '550',
      bounce_recipient: 'ann@example.net',
    });

    const suppressions = await s.fx.admin('GET', '/suppressions?tenant_id=acme');
    expect(suppressions.body.suppressions).toMatchObject([
      { address: 'ann@example.net', source: 'bounce', expires_ts: null },
    ]);
    const refused = await s.fx.post(key, [message('inv-2', { to: 'ann@example.net' })]);
    expect(JSON.stringify(refused.body)).toContain('suppressed');

    await vi.waitFor(async () => expect(await dovecot.list('Processed')).toHaveLength(1));
    expect(await dovecot.list('INBOX')).toEqual([]);
    const metrics = (await s.fx.admin('GET', '/metrics')).text;
    expect(metrics).toContain('mailproxy_bounce_messages_total{mailbox="default",disposition="processed"} 1');
    expect(metrics).toContain('mailproxy_bounce_mailbox_connected{mailbox="default"} 1');
  });

  it('files mail it cannot tie to a message as unmatched (listed for the admin) and ordinary mail as not-bounce (flagged in place)', async () => {
    const s = await startReportScenarioWithBounce(dovecot);
    const { key } = await s.addTenant('acme', '/acme');
    const original = await sent(s, key, 'inv-1', 'ann@example.net');
    const stranger = Buffer.from(
      original
        .toString('utf8')
        .replace('X-Genro-Mail-ID: inv-1', 'X-Genro-Mail-ID: not-ours')
        .replace(/^Message-ID:.*$/m, 'Message-ID: <not-ours@example.com>'),
    );

    await dovecot.append(dsnFor(stranger, { recipient: 'ann@example.net' }));
    await dovecot.append(ordinaryMail());

    await vi.waitFor(async () => expect(await dovecot.list('Unmatched')).toHaveLength(1), {
      timeout: 10_000,
      interval: 50,
    });
    await vi.waitFor(
      async () =>
        expect((await dovecot.list('INBOX'))[0]?.flags).toEqual(
          expect.arrayContaining(['\\Seen', '$MailproxyNotBounce']),
        ),
      {
        timeout: 10_000,
        interval: 50,
      },
    );
    const unmatched = await s.fx.admin('GET', '/bounces?disposition=unmatched');
    expect(unmatched.body.bounces).toMatchObject([
      { disposition: 'unmatched', unmatched_reason: 'not_found', mail_id: 'not-ours', kind: 'bounce', filed: true },
    ]);
    expect((await s.fx.detail('acme', 'inv-1')).message.bounce_type).toBeNull();
    // A tenant key sees no unmatched bounce: it belongs to nobody.
    const asTenant = await fetch(`${s.fx.t.url}/bounces?disposition=unmatched`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(await asTenant.json()).toEqual({ bounces: [], next: null });
  });

  it('a complaint (ARF) is reported and suppresses its recipient; a delayed DSN is a soft bounce that suppresses nobody', async () => {
    const s = await startReportScenarioWithBounce(dovecot);
    const { key } = await s.addTenant('acme', '/acme');
    const first = await sent(s, key, 'news-1', 'bob@example.net');
    const second = await sent(s, key, 'news-2', 'cid@example.net');

    await dovecot.append(arfFor(first, 'bob@example.net'));
    await dovecot.append(dsnFor(second, { recipient: 'cid@example.net', action: 'delayed' }));

    await s.client.waitFor('the complaint and the soft bounce', () => {
      const events = s.client.items('/acme').map((item) => `${item.id}:${item.event}`);
      return events.includes('news-1:complained') && events.includes('news-2:bounced');
    });
    expect(s.client.items('/acme').find((item) => item.event === 'complained')).toMatchObject({
      id: 'news-1',
      complaint_type: 'abuse',
      complaint_recipient: 'bob@example.net',
    });
    expect((await s.fx.detail('acme', 'news-1')).message).toMatchObject({ complaint_type: 'abuse' });
    expect((await s.fx.detail('acme', 'news-2')).message).toMatchObject({ bounce_type: 'soft', state: 'sent' });
    const listed = (await s.fx.admin('GET', '/suppressions?tenant_id=acme')).body.suppressions as Array<{
      address: string;
      source: string;
    }>;
    expect(listed.map((entry) => [entry.address, entry.source])).toEqual([['bob@example.net', 'complaint']]);
  });

  it('after a restart nothing is processed twice (nor a second copy of a bounce) and what arrived while it was down is processed', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mailproxy-bounce-restart-'));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const s1 = await startReportScenarioWithBounce(dovecot, { dataDir });
    const { key } = await s1.addTenant('acme', '/acme');
    const one = await sent(s1, key, 'inv-1', 'ann@example.net');
    const two = await sent(s1, key, 'inv-2', 'bob@example.net');
    const firstDsn = dsnFor(one, { recipient: 'ann@example.net' });
    await dovecot.append(firstDsn);
    await vi.waitFor(async () => expect((await s1.fx.detail('acme', 'inv-1')).message.bounce_type).toBe('hard'), {
      timeout: 10_000,
      interval: 50,
    });
    await s1.fx.stop();

    // While it is down: a new bounce, and a second copy of the first one (same Message-ID).
    await dovecot.append(dsnFor(two, { recipient: 'bob@example.net' }));
    await dovecot.append(firstDsn);
    const s2 = await startReportScenarioWithBounce(dovecot, { dataDir });
    await vi.waitFor(async () => expect((await s2.fx.detail('acme', 'inv-2')).message.bounce_type).toBe('hard'), {
      timeout: 10_000,
      interval: 50,
    });

    const bouncedEvents = (await s2.fx.detail('acme', 'inv-1')).events.filter(
      (event: Record<string, unknown>) => event.event_type === 'bounced',
    );
    expect(bouncedEvents).toHaveLength(1);
    await vi.waitFor(async () => expect(await dovecot.list('Processed')).toHaveLength(3), {
      timeout: 10_000,
      interval: 50,
    });
    expect((await s2.fx.admin('GET', '/bounces')).body.bounces).toHaveLength(3);
    expect(await dovecot.list('INBOX')).toEqual([]);
  });

  it('a message recorded but not yet moved when the daemon died is moved at the next start, its effects not applied again', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mailproxy-bounce-refile-'));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    // First life, no mailbox configured: the message is sent, and its DSN's settlement is committed
    // exactly as the poller commits it, then the daemon goes away before filing (the crash window).
    const s1 = await startReportScenario(cleanups, { dataDir });
    const { key } = await s1.addTenant('acme', '/acme');
    const dsn = dsnFor(await sent(s1, key, 'inv-1', 'ann@example.net'), { recipient: 'ann@example.net' });
    const { uid } = await dovecot.append(dsn);
    const uidValidity = Number(await dovecot.uidValidity());
    const ledger = s1.fx.t.daemon.store.bounceLedger;
    ledger.resetCheckpoint('default', uidValidity, Date.now());
    const findings = {
      kind: 'bounce' as const,
      recipients: [],
      mailId: 'inv-1',
      originalMessageId: null,
      originalEnvelopeId: null,
      feedbackType: null,
      verpMessagePk: null,
    };
    const [candidate] = ledger.candidates('mail_id', 'inv-1', null);
    if (candidate === undefined) throw new Error('inv-1 not found');
    const bounce = {
      tenantId: 'acme',
      clientId: 'inv-1',
      type: 'hard' as const,
      code: '550',
      reason: 'user unknown',
      recipient: 'ann@example.net',
      at: Date.now(),
    };
    ledger.settle(
      [
        {
          item: {
            mailbox: 'default',
            uidValidity,
            uid,
            headerMessageId: null,
            from: null,
            subject: null,
            sizeBytes: dsn.length,
            findings,
          },
          plan: {
            disposition: 'processed',
            unmatchedReason: null,
            match: { candidate, by: 'mail_id' },
            bounces: [bounce],
            complaints: [],
            suppressions: [],
          },
        },
      ],
      Date.now(),
    );
    await s1.fx.stop();
    expect(await dovecot.list('INBOX')).toHaveLength(1);

    const s2 = await startReportScenarioWithBounce(dovecot, { dataDir });
    await vi.waitFor(async () => expect(await dovecot.list('Processed')).toHaveLength(1), {
      timeout: 10_000,
      interval: 50,
    });
    expect(await dovecot.list('INBOX')).toEqual([]);
    const events = (await s2.fx.detail('acme', 'inv-1')).events.filter(
      (event: Record<string, unknown>) => event.event_type === 'bounced',
    );
    expect(events).toHaveLength(1);
    expect((await s2.fx.admin('GET', '/bounces')).body.bounces).toMatchObject([
      { uid, disposition: 'processed', filed: true },
    ]);
  });

  it('with VERP, relays with a return path naming the message and ties a bounce that quotes nothing to it', async () => {
    const s = await startReportScenarioWithBounce(dovecot, {
      extra: 'verp_return_path = "bounces+{id}@bounce.example"',
    });
    const { key } = await s.addTenant('acme', '/acme');
    await sent(s, key, 'inv-1', 'ann@example.net');
    const pk = (await s.fx.detail('acme', 'inv-1')).message.pk as number;
    expect(s.sink.messages[0]?.mailFrom).toBe(`bounces+${pk}@bounce.example`);

    await dovecot.append(
      Buffer.from(
        [
          'From: MAILER-DAEMON@mx.example.net',
          `To: bounces+${pk}@bounce.example`,
          'Subject: Mail delivery failed: returning message to sender',
          'Message-ID: <verp-1@mx.example.net>',
          '',
          'This message was created automatically by mail delivery software.',
          '',
          'A message that you sent could not be delivered to one or more of its recipients:',
          '',
          '  ann@example.net',
          '    host mx.example.net [192.0.2.7]',
          '    SMTP error from remote mail server after RCPT TO:<ann@example.net>:',
          '    550 5.1.1 User unknown',
          '',
        ].join('\r\n'),
      ),
    );

    await vi.waitFor(async () => expect((await s.fx.detail('acme', 'inv-1')).message.bounce_type).toBe('hard'), {
      timeout: 10_000,
      interval: 50,
    });
    const listed = (await s.fx.admin('GET', '/bounces?tenant_id=acme')).body.bounces;
    expect(listed).toMatchObject([{ matched_by: 'verp', message_id: 'inv-1', mail_id: null }]);
  });

  it("with VERP, relays an SMTP submission with the return path and the envelope's own recipients", async () => {
    const s = await startReportScenarioWithBounce(dovecot, {
      extra: 'verp_return_path = "bounces+{id}@bounce.example"',
    });
    const { key } = await s.addTenant('acme', '/acme');
    // A recipient the headers do not name (a Bcc): only the sealed envelope knows it, opened by the relay thread.
    const session = await openSubmission(s.fx.t.daemon.smtp?.plain?.port ?? 0);
    try {
      await session.login('acme', key);
      await session.send(
        { from: 'app@acme.example', to: ['ann@example.net', 'hidden@example.org'] },
        'From: app@acme.example\r\nTo: ann@example.net\r\nSubject: smtp verp\r\n\r\nHello.\r\n',
      );
    } finally {
      session.close();
    }
    await s.fx.settle();
    const received = s.sink.messages.find((mail) => mail.raw.toString('utf8').includes('Subject: smtp verp'));
    const id = (await s.fx.admin('GET', '/messages?tenant_id=acme')).body.messages[0]?.id as string;
    const pk = (await s.fx.detail('acme', id)).message.pk as number;
    expect(received?.mailFrom).toBe(`bounces+${pk}@bounce.example`);
    expect(received?.rcptTo).toEqual(['ann@example.net', 'hidden@example.org']);
  });

  it('reconnects by itself when Dovecot is stopped and started again', async () => {
    const s = await startReportScenarioWithBounce(dovecot);
    const { key } = await s.addTenant('acme', '/acme');
    const original = await sent(s, key, 'inv-1', 'ann@example.net');
    await vi.waitFor(async () => expect((await bounceStatus(s)).state).toBe('waiting'), { timeout: 10_000 });

    await dovecot.stop();
    await vi.waitFor(async () => expect(await bounceStatus(s)).toMatchObject({ connected: false, state: 'backoff' }), {
      timeout: 10_000,
      interval: 50,
    });
    expect((await bounceStatus(s)).last_error).not.toBeNull();
    expect((await s.fx.admin('GET', '/ready')).body.details.bounce).toEqual([
      { mailbox: 'default', state: 'backoff', connected: false },
    ]);
    await dovecot.start();
    await dovecot.append(dsnFor(original, { recipient: 'ann@example.net' }));

    await vi.waitFor(async () => expect((await s.fx.detail('acme', 'inv-1')).message.bounce_type).toBe('hard'), {
      timeout: 15_000,
      interval: 50,
    });
    expect(await bounceStatus(s)).toMatchObject({ connected: true });
  });
});

async function startReportScenarioWithBounce(
  peer: DovecotPeer,
  options: { dataDir?: string; extra?: string } = {},
): Promise<ReportScenario> {
  return startReportScenario(cleanups, {
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
    extraToml: idleBounceToml(peer, options.extra),
  });
}
