/**
 * PEC end to end: a real Dovecot holds the PEC account's mailbox, the daemon
 * relays to a real SMTP sink and reports to a real client endpoint. Receipts
 * of every type (the project's fixtures, test/pec/receipt-fixtures.ts) are
 * appended over IMAP about the messages the sink received, and what follows is
 * observed from outside: each message's PEC fields and receipts, the report
 * items, the receipts' bytes through the API, the flags in the mailbox, and
 * the watchers following the accounts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { message } from '../helpers/queue-fixture.js';
import { startReportScenario, type ReportScenario } from '../helpers/report-fixture.js';
import { startDovecot, type DovecotPeer } from '../peers/dovecot.js';
import { readStream, startNatsServer } from '../peers/nats-server.js';
import { PEC_USER, pecAccountFields, relayedMessageId } from './pec-peers.js';
import { buildReceipt, type ReceiptOptions } from './receipt-fixtures.js';

const cleanups: Array<() => Promise<void>> = [];
let dovecot: DovecotPeer;

beforeEach(async () => {
  dovecot = await startDovecot({ users: [PEC_USER] });
  cleanups.push(() => dovecot.destroy());
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const WAIT = { timeout: 15_000, interval: 50 };
const ANN = 'ann@pec.dest.example';
const BOB = 'bob@pec.dest.example';

/** IDLE brings each receipt (the poll interval is far beyond any wait); the timeout sweep runs every second. */
const PEC_TOML = `[bounce]\nreconnect_initial_seconds = 0.1\nreconnect_max_seconds = 0.5\n[pec]\npoll_interval_seconds = 3600\nsweep_interval_seconds = 1\n`;

async function startPec(
  options: { dataDir?: string; again?: boolean; natsUrl?: string; pecToml?: string } = {},
): Promise<{ s: ReportScenario; key: string }> {
  const s = await startReportScenario(cleanups, {
    extraToml: PEC_TOML + (options.pecToml ?? ''),
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
    ...(options.natsUrl === undefined ? {} : { env: { MAILPROXY_NATS_URL: options.natsUrl } }),
  });
  let key = '';
  if (options.again === true) {
    // A second life on the same data: the tenant and its PEC account are there; its reports go to this life's client.
    const moved = await s.fx.admin('PUT', '/tenant/acme', { client_base_url: `${s.client.base}/acme` });
    expect(moved.status).toBe(200);
  } else {
    key = (await s.addTenant('acme', '/acme')).key;
    // The PEC account relays to the sink and reads its receipts from Dovecot with the relay's own credentials.
    await s.fx.createAccount('acme', 'pec', s.sink, pecAccountFields(dovecot));
  }
  await vi.waitFor(async () => expect(await pecMailbox(s)).toMatchObject({ state: 'waiting', connected: true }), WAIT);
  return { s, key };
}

const pecMailbox = async (s: ReportScenario) =>
  ((await s.fx.admin('GET', '/bounce/status')).body.mailboxes as Array<Record<string, unknown>>).find(
    (mailbox) => mailbox.mailbox === 'pec:acme/pec',
  );

/** Sends `id` through the PEC account and answers the Message-ID the sink received it with. */
async function sendPec(s: ReportScenario, key: string, id: string, to: string[]): Promise<string> {
  const response = await s.fx.post(key, [message(id, { to, account_id: 'pec', from: 'fatture@pec.acme.example' })]);
  expect(response.status).toBe(200);
  await s.fx.settle();
  return relayedMessageId(s.sink, id);
}

/** Appends a receipt to the PEC mailbox; answers its bytes. */
async function receive(options: ReceiptOptions): Promise<Buffer> {
  const raw = buildReceipt(options);
  await dovecot.append(raw);
  return raw;
}

const pecItems = (s: ReportScenario, id?: string) =>
  s.client.items('/acme').filter((item) => item.event === 'pec' && (id === undefined || item.id === id));

const receiptsOf = async (s: ReportScenario, id: string) =>
  (await s.fx.detail('acme', id)).pec_receipts as Array<Record<string, unknown>>;

describe('PEC receipts from a real Dovecot', () => {
  it('each receipt type updates the right message and recipient, reaches the client and the stream, and downloads byte for byte', async () => {
    const nats = await startNatsServer();
    cleanups.push(() => nats.destroy());
    const { s, key } = await startPec({ natsUrl: nats.url });
    const atto = await sendPec(s, key, 'atto-1', [ANN, BOB]);
    const refused = await sendPec(s, key, 'atto-2', [ANN]);
    const infected = await sendPec(s, key, 'atto-3', [BOB]);

    const appended = new Map<string, Buffer>();
    const at = { day: '15/01/2024', zone: '+0100' };
    appended.set(
      'accettazione',
      await receive({
        type: 'accettazione',
        referencedMessageId: atto,
        addressees: [
          { address: ANN, certified: true },
          { address: BOB, certified: true },
        ],
        issuedAt: { ...at, time: '10:30:00' },
        identificativo: 'opec-1.atto-1@pec.gestore.example',
      }),
    );
    appended.set(
      'presa-in-carico',
      await receive({
        type: 'presa-in-carico',
        referencedMessageId: atto,
        recipient: ANN,
        issuedAt: { ...at, time: '10:30:05' },
      }),
    );
    // The delivery receipt names the gestore's identificativo only, and carries the original with our X-Genro-Mail-ID.
    appended.set(
      'avvenuta-consegna',
      await receive({
        type: 'avvenuta-consegna',
        omitReference: true,
        mailId: 'atto-1',
        recipient: ANN,
        issuedAt: { ...at, time: '10:31:00' },
        identificativo: 'opec-1.atto-1@pec.gestore.example',
      }),
    );
    appended.set(
      'preavviso-errore-consegna',
      await receive({
        type: 'preavviso-errore-consegna',
        referencedMessageId: atto,
        recipient: BOB,
        issuedAt: { ...at, time: '22:30:00' },
      }),
    );
    appended.set(
      'errore-consegna',
      await receive({
        type: 'errore-consegna',
        referencedMessageId: atto,
        recipient: BOB,
        error: 'no-dest',
        issuedAt: { day: '16/01/2024', time: '10:30:00', zone: '+0100' },
      }),
    );
    appended.set(
      'non-accettazione',
      await receive({ type: 'non-accettazione', referencedMessageId: refused, error: 'altro' }),
    );
    appended.set(
      'rilevazione-virus',
      await receive({ type: 'rilevazione-virus', referencedMessageId: infected, recipient: BOB, error: 'virus' }),
    );

    await s.client.waitFor('an item per receipt', () => pecItems(s).length >= 7, 15_000);
    expect(
      pecItems(s)
        .map((item) => `${item.id} ${item.pec_event}`)
        .sort(),
    ).toEqual([
      'atto-1 accettazione',
      'atto-1 avvenuta-consegna',
      'atto-1 errore-consegna',
      'atto-1 preavviso-errore-consegna',
      'atto-1 presa-in-carico',
      'atto-2 non-accettazione',
      'atto-3 rilevazione-virus',
    ]);
    const delivered = pecItems(s, 'atto-1').find((item) => item.pec_event === 'avvenuta-consegna');
    expect(delivered).toMatchObject({
      account_id: 'pec',
      pec_ts: Date.UTC(2024, 0, 15, 9, 31) / 1000,
      pec_details: { recipient: ANN, matched_by: 'mail_id' },
    });

    const detail = await s.fx.detail('acme', 'atto-1');
    expect(detail.message).toMatchObject({
      state: 'sent',
      pec_rda_ts: Date.UTC(2024, 0, 15, 9, 30) / 1000,
      pec_rdc_ts: Date.UTC(2024, 0, 15, 9, 31) / 1000,
      pec_error_ts: Date.UTC(2024, 0, 16, 9, 30) / 1000,
    });
    // The gestore's words, with the recipient redacted like every diagnostic (the receipt below names it).
    expect(detail.message.pec_error).toContain(`errore-consegna: …@${BOB.split('@')[1]}`);
    expect(detail.message.pec_error).not.toContain(BOB);
    expect(
      (detail.pec_receipts as Array<Record<string, unknown>>).map((receipt) => [
        receipt.receipt_type,
        receipt.recipient,
      ]),
    ).toEqual([
      ['accettazione', null],
      ['presa-in-carico', null],
      ['avvenuta-consegna', ANN],
      ['preavviso-errore-consegna', BOB],
      ['errore-consegna', BOB],
    ]);
    expect((await s.fx.detail('acme', 'atto-2')).message).toMatchObject({
      pec_rda_ts: null,
      pec_error: expect.stringContaining('non-accettazione'),
    });
    expect((await s.fx.detail('acme', 'atto-3')).message.pec_error).toContain(
      `rilevazione-virus: …@${BOB.split('@')[1]}`,
    );

    // The evidence: every receipt's bytes, exactly as the mailbox held them.
    const listed = (await s.fx.admin('GET', '/pec-receipts?tenant_id=acme')).body.receipts as Array<{
      receipt_id: string;
      receipt_type: string;
      sha256: string;
      complete: boolean;
    }>;
    expect(listed).toHaveLength(7);
    for (const receipt of listed) {
      const response = await fetch(`${s.fx.t.url}/pec-receipts/${receipt.receipt_id}/raw`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('message/rfc822');
      expect(
        Buffer.from(await response.arrayBuffer()).equals(appended.get(receipt.receipt_type) as Buffer),
        receipt.receipt_type,
      ).toBe(true);
      expect(response.headers.get('x-receipt-sha256')).toBe(receipt.sha256);
      expect(receipt.complete).toBe(true);
    }

    // Mirrored like every event: on the tenant's subject, with the receipt's details.
    await vi.waitFor(async () => expect((await s.fx.admin('GET', '/mirror/status')).body.mirror.backlog).toBe(0), WAIT);
    const onStream = (await readStream(nats.url, 'MAILPROXY')).filter(
      (event) => event.body.event_type === 'message.pec',
    );
    expect(onStream.map((event) => `${event.body.message_id} ${event.body.data.pec_event}`).sort()).toEqual(
      pecItems(s)
        .map((item) => `${item.id} ${item.pec_event}`)
        .sort(),
    );
    expect(onStream.every((event) => event.subject === 'mailproxy.events.acme.message.pec')).toBe(true);
    const onStreamDelivered = onStream.find((event) => event.body.data.pec_event === 'avvenuta-consegna')?.body.data;
    expect(onStreamDelivered).toMatchObject({
      receipt_id: (delivered?.pec_details as Record<string, unknown>).receipt_id,
    });
    // The recipient is the client's to know (its report has it), not the stream's (issue 45).
    expect(onStreamDelivered).not.toHaveProperty('recipient');

    const metrics = (await s.fx.admin('GET', '/metrics')).text;
    expect(metrics).toContain(
      'mailproxy_pec_events_total{tenant_id="acme",account_id="pec",pec_event="errore-consegna"} 1',
    );
    expect(metrics).toContain(
      'mailproxy_pec_events_total{tenant_id="acme",account_id="pec",pec_event="rilevazione-virus"} 1',
    );
    expect(metrics).toContain('mailproxy_bounce_mailbox_connected{mailbox="pec:acme/pec"} 1');

    // Flagged as ours, never marked read: people read this mailbox too.
    await vi.waitFor(
      async () =>
        expect((await dovecot.list()).every((stored) => stored.flags.includes('$MailproxyProcessed'))).toBe(true),
      WAIT,
    );
    expect((await dovecot.list()).filter((stored) => stored.flags.includes('\\Seen'))).toEqual([]);
  });

  it("keeps a receipt nobody's message fits, leaves ordinary mail unread, and shows another tenant nothing", async () => {
    const { s, key } = await startPec();
    await sendPec(s, key, 'atto-1', [ANN]);
    const stranger = await receive({ type: 'accettazione', referencedMessageId: '<not-ours@elsewhere.example>' });
    await dovecot.append(
      Buffer.from(
        'From: Someone <someone@pec.other.example>\r\nTo: fatture@pec.acme.example\r\nSubject: CONSEGNA: merce\r\nMessage-ID: <plain-1@other.example>\r\n\r\nLa merce arriva domani.\r\n',
      ),
    );

    await vi.waitFor(
      async () =>
        expect(
          (await dovecot.list()).map((stored) => stored.flags.find((flag) => flag.startsWith('$Mailproxy'))),
        ).toEqual(['$MailproxyUnmatched', '$MailproxyNotBounce']),
      WAIT,
    );
    expect((await dovecot.list()).filter((stored) => stored.flags.includes('\\Seen'))).toEqual([]);
    const listed = (await s.fx.admin('GET', '/pec-receipts?tenant_id=acme')).body.receipts as Array<
      Record<string, unknown>
    >;
    expect(listed).toMatchObject([
      {
        receipt_type: 'accettazione',
        message_id: null,
        matched_by: null,
        referenced_message_id: '<not-ours@elsewhere.example>',
      },
    ]);
    const raw = await fetch(`${s.fx.t.url}/pec-receipts/${String(listed[0]?.receipt_id)}/raw`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(Buffer.from(await raw.arrayBuffer()).equals(stranger)).toBe(true);
    expect((await s.fx.detail('acme', 'atto-1')).message.pec_rda_ts).toBeNull();

    const other = await s.addTenant('other', '/other');
    const asOther = await fetch(`${s.fx.t.url}/pec-receipts/${String(listed[0]?.receipt_id)}/raw`, {
      headers: { authorization: `Bearer ${other.key}` },
    });
    expect(asOther.status).toBe(404);
    const otherList = await fetch(`${s.fx.t.url}/pec-receipts`, { headers: { authorization: `Bearer ${other.key}` } });
    expect(await otherList.json()).toEqual({ receipts: [], next: null });
  });

  it('keeps the first max_receipt_bytes of a larger receipt, marked incomplete, and still applies it', async () => {
    const { s, key } = await startPec({ pecToml: 'max_receipt_bytes = 65536\n' });
    const atto = await sendPec(s, key, 'atto-1', [ANN]);
    const original = Buffer.from(
      `Message-ID: ${atto}\r\nX-Genro-Mail-ID: atto-1\r\nSubject: Allegato\r\n\r\n${'Riga di un allegato molto lungo.\r\n'.repeat(4000)}`,
    );
    const big = await receive({ type: 'avvenuta-consegna', referencedMessageId: atto, recipient: ANN, original });
    expect(big.length).toBeGreaterThan(100_000);

    await vi.waitFor(async () => expect((await s.fx.detail('acme', 'atto-1')).message.pec_rdc_ts).not.toBeNull(), WAIT);
    const [listed] = (await s.fx.admin('GET', '/pec-receipts?tenant_id=acme')).body.receipts as Array<{
      receipt_id: string;
      size_bytes: number;
      complete: boolean;
    }>;
    expect(listed).toMatchObject({ size_bytes: big.length, complete: false });
    const response = await fetch(`${s.fx.t.url}/pec-receipts/${String(listed?.receipt_id)}/raw`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(response.headers.get('x-receipt-complete')).toBe('false');
    expect(Buffer.from(await response.arrayBuffer()).equals(big.subarray(0, 65536))).toBe(true);
  });

  it('survives a restart without processing anything twice, and reads what arrived while it was down', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'mailproxy-pec-restart-'));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const first = await startPec({ dataDir });
    const atto = await sendPec(first.s, first.key, 'atto-1', [ANN, BOB]);
    const acceptance = await receive({
      type: 'accettazione',
      referencedMessageId: atto,
      messageId: '<ricevuta-1@pec.gestore.example>',
    });
    await receive({
      type: 'avvenuta-consegna',
      referencedMessageId: atto,
      recipient: ANN,
      messageId: '<ricevuta-2@pec.gestore.example>',
    });
    await first.s.client.waitFor('both items', () => pecItems(first.s).length === 2, 15_000);
    await first.s.fx.stop();

    // While it is down: the delivery for Bob, and a second copy of the acceptance (the same Message-ID).
    await receive({
      type: 'avvenuta-consegna',
      referencedMessageId: atto,
      recipient: BOB,
      messageId: '<ricevuta-3@pec.gestore.example>',
    });
    await dovecot.append(acceptance);

    const second = await startPec({ dataDir, again: true });
    await vi.waitFor(async () => expect(await receiptsOf(second.s, 'atto-1')).toHaveLength(3), WAIT);
    await vi.waitFor(
      async () =>
        expect(
          (await dovecot.list()).every((stored) => stored.flags.some((flag) => flag.startsWith('$Mailproxy'))),
        ).toBe(true),
      WAIT,
    );
    expect(
      (await receiptsOf(second.s, 'atto-1')).map((receipt) => `${receipt.receipt_type} ${receipt.recipient}`),
    ).toEqual(['accettazione null', `avvenuta-consegna ${ANN}`, `avvenuta-consegna ${BOB}`]);
    const timeline = ((await second.s.fx.detail('acme', 'atto-1')).events as Array<{ event_type: string }>).filter(
      (event) => event.event_type === 'pec',
    );
    expect(timeline).toHaveLength(3);
    await second.s.client.waitFor('the new item', () => pecItems(second.s).length >= 1, 15_000);
    expect(pecItems(second.s).map((item) => (item.pec_details as Record<string, unknown>).recipient)).toEqual([BOB]);
  });

  it('a missing acceptance after the timeout is a pec_error the client is told of; a late acceptance clears it', async () => {
    const { s, key } = await startPec();
    const late = await sendPec(s, key, 'atto-1', [ANN]);
    await sendPec(s, key, 'atto-2', [ANN]);
    await s.fx.post(key, [message('plain-1', { to: ANN })]);
    await s.fx.settle();
    expect((await s.fx.admin('GET', '/metrics')).text).toContain('mailproxy_pec_awaiting_acceptance 2');
    s.fx.clock.advance(31 * 60_000);
    const advanced = Math.floor(s.fx.clock.now() / 1000);
    await s.client.waitFor('the timeouts', () => pecItems(s).length === 2, 15_000);
    expect(pecItems(s).map((item) => [item.id, item.pec_event])).toEqual([
      ['atto-1', 'acceptance_timeout'],
      ['atto-2', 'acceptance_timeout'],
    ]);
    const timedOut = (await s.fx.detail('acme', 'atto-1')).message;
    expect(timedOut.pec_error).toContain('acceptance_timeout');
    expect(timedOut.pec_error_ts).toBeGreaterThanOrEqual(advanced);
    expect(timedOut.pec_error_ts).toBeLessThanOrEqual(Math.floor(s.fx.clock.now() / 1000));
    const metrics = (await s.fx.admin('GET', '/metrics')).text;
    expect(metrics).toContain('mailproxy_pec_awaiting_acceptance 0');
    expect(metrics).toContain(
      'mailproxy_pec_events_total{tenant_id="acme",account_id="pec",pec_event="acceptance_timeout"} 2',
    );
    // Mail of an ordinary account waits for no receipt.
    expect((await s.fx.detail('acme', 'plain-1')).message.pec_error).toBeNull();

    await receive({ type: 'accettazione', referencedMessageId: late });
    await vi.waitFor(
      async () =>
        expect((await s.fx.detail('acme', 'atto-1')).message).toMatchObject({
          pec_error: null,
          pec_error_ts: null,
          pec_rda_ts: expect.any(Number),
        }),
      WAIT,
    );
    expect((await s.fx.detail('acme', 'atto-2')).message.pec_error).toContain('acceptance_timeout');
  });

  it('watchers start when a PEC account is saved, move with its mailbox settings, and stop when it is no longer PEC or is deleted', async () => {
    const s = await startReportScenario(cleanups, { extraToml: '[pec]\npoll_interval_seconds = 3600\n' });
    const { key } = await s.addTenant('acme', '/acme');
    const mailboxes = async () =>
      ((await s.fx.admin('GET', '/bounce/status')).body.mailboxes as Array<{ mailbox: string; state: string }>).map(
        (m) => `${m.mailbox} ${m.state}`,
      );
    expect(await mailboxes()).toEqual([]);

    const pecAccount = pecAccountFields(dovecot);
    await s.fx.createAccount('acme', 'pec', s.sink, pecAccount);
    await vi.waitFor(async () => expect(await mailboxes()).toEqual(['pec:acme/pec waiting']), WAIT);

    // The receipts now arrive in another folder: the account says so, and the watcher follows.
    await dovecot.createFolder('Ricevute');
    await s.fx.createAccount('acme', 'pec', s.sink, { ...pecAccount, imap_folder: 'Ricevute' });
    await s.fx.post(key, [message('atto-1', { to: 'ann@pec.dest.example', account_id: 'pec' })]);
    await s.fx.settle();
    const messageId = relayedMessageId(s.sink, 'atto-1');
    await dovecot.append(buildReceipt({ type: 'accettazione', referencedMessageId: messageId }), 'Ricevute');
    await vi.waitFor(async () => expect((await s.fx.detail('acme', 'atto-1')).message.pec_rda_ts).not.toBeNull(), WAIT);
    // The receipt is recorded before the watcher has moved it and gone back to waiting.
    await vi.waitFor(async () => expect(await mailboxes()).toEqual(['pec:acme/pec waiting']), WAIT);

    await s.fx.createAccount('acme', 'pec', s.sink, { ...pecAccount, imap_folder: 'Ricevute', is_pec: false });
    await vi.waitFor(async () => expect(await mailboxes()).toEqual([]), WAIT);
    await s.fx.createAccount('acme', 'pec', s.sink, { ...pecAccount, imap_folder: 'Ricevute' });
    await vi.waitFor(async () => expect(await mailboxes()).toEqual(['pec:acme/pec waiting']), WAIT);
    expect((await s.fx.admin('DELETE', '/account/pec?tenant_id=acme')).status).toBe(200);
    await vi.waitFor(async () => expect(await mailboxes()).toEqual([]), WAIT);
  });
});
