/**
 * The Mailgun adapter against real crypto: signing keys made here, each request
 * signed as Mailgun documents it (hex HMAC-SHA256 of timestamp + token). The
 * bodies are shaped as Mailgun's webhook and Events API references show them:
 * `{"signature": {...}, "event-data": {...}}`, one event per request.
 */
import { createHmac, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { WebhookSettings } from '../../src/core/provider/events.js';
import type { WebhookReading } from '../../src/ingress/webhooks/adapter.js';
import { createMailgunAdapter } from '../../src/ingress/webhooks/mailgun.js';
import { checkProperty } from '../helpers/property-runs.js';
import { eventsOf, problemOf } from '../helpers/webhook-readings.js';

const KEY = randomBytes(32).toString('hex');
const OTHER_KEY = randomBytes(32).toString('hex');
const SETTINGS: WebhookSettings[] = [
  { provider: 'postmark', username: 'u', password: 'p', token: null },
  { provider: 'mailgun', signingKey: OTHER_KEY },
  { provider: 'mailgun', signingKey: KEY },
];
const NOW = 1_795_000_000_000;
const TIMESTAMP = String(NOW / 1000 - 20);

type Signature = { timestamp: string; token: string; signature: string };

function signature(options: { key?: string; timestamp?: string; token?: string } = {}): Signature {
  const timestamp = options.timestamp ?? TIMESTAMP;
  const token = options.token ?? randomBytes(25).toString('hex');
  const hex = createHmac('sha256', options.key ?? KEY)
    .update(timestamp + token)
    .digest('hex');
  return { timestamp, token, signature: hex };
}

async function receive(body: unknown, settings = SETTINGS, now = NOW): Promise<WebhookReading> {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  return createMailgunAdapter().receive({ body: bytes, header: () => undefined }, settings, now);
}

const signed = (eventData: unknown, options: Parameters<typeof signature>[0] = {}) => ({
  signature: signature(options),
  'event-data': eventData,
});

const message = {
  headers: {
    to: 'Alice <alice@example.com>',
    'message-id': '20261120192659.13651.20287@mailproxy.example.org',
    from: 'Bob <bob@mailproxy.example.org>',
    subject: 'Invoice 42',
  },
  attachments: [],
  size: 4242,
};
const common = {
  timestamp: 1_794_999_970.329574,
  'log-level': 'info',
  recipient: 'alice@example.com',
  'recipient-domain': 'example.com',
  envelope: { sender: 'bob@mailproxy.example.org', transport: 'smtp', targets: 'alice@example.com' },
  flags: { 'is-routed': false, 'is-authenticated': true, 'is-system-test': false, 'is-test-mode': false },
  message,
  tags: ['invoices'],
  campaigns: [],
  'user-variables': { genro_mail_id: 'm-0001', other: 'x' },
};
const delivered = {
  ...common,
  event: 'delivered',
  id: 'W3X4JOhFT-OZidZGKKr9iA',
  'delivery-status': {
    tls: true,
    'mx-host': 'smtp-in.example.com',
    code: 250,
    description: '',
    'session-seconds': 0.433,
    utf8: true,
    'attempt-no': 1,
    message: 'OK',
    'certificate-verified': true,
  },
};
const hardBounce = {
  ...common,
  event: 'failed',
  id: 'G9Bn5sl1TC6nu79C8C0bwg',
  'log-level': 'error',
  severity: 'permanent',
  reason: 'bounce',
  'delivery-status': {
    'attempt-no': 1,
    message:
      "5.1.1 The email account that you tried to reach does not exist. Please try double-checking the recipient's email address.",
    code: 550,
    'enhanced-code': '5.1.1',
    description: '',
    'session-seconds': 0.2,
  },
};
const softBounce = {
  ...common,
  event: 'failed',
  id: 'Fs7-5t81S2ql1ODIKkTsyA',
  'log-level': 'warn',
  severity: 'temporary',
  reason: 'generic',
  'delivery-status': {
    'attempt-no': 1,
    message: '4.2.2 The email account that you tried to reach is over quota.',
    code: 452,
    description: '',
    'retry-seconds': 600,
  },
};
const suppressed = {
  ...common,
  event: 'failed',
  id: 'CPgfbmQMTCKtHW6uIWtuVe',
  'log-level': 'error',
  severity: 'permanent',
  reason: 'suppress-bounce',
  'delivery-status': {
    'attempt-no': 1,
    message: '',
    code: 605,
    description: 'Not delivering to previously bounced address',
    'session-seconds': 0,
  },
};
const rejected = {
  ...common,
  event: 'rejected',
  id: 'rjt-0001',
  'log-level': 'warn',
  reject: { reason: 'Sandbox subdomains are for test purposes only.', description: '' },
};
const complained = { ...common, event: 'complained', id: '-Agny091SquKnsrW2NEKUA', 'log-level': 'warn' };
const accepted = { ...common, event: 'accepted', id: 'ncV2XwymRUKbPek_MIM-Gw', method: 'smtp' };
const unsubscribed = { ...common, event: 'unsubscribed', id: 'Unsb2zsRYeDXztHGENqRAx' };
const opened = {
  ...common,
  event: 'opened',
  id: 'Ase7i2zsRYeDXztHGENqRA',
  ip: '192.0.2.1',
  'client-info': { 'client-type': 'browser' },
};

describe('Mailgun webhooks', () => {
  it('reads each documented event of a signed request', async () => {
    const rows = [];
    for (const data of [delivered, hardBounce, softBounce, suppressed, rejected, complained, accepted, unsubscribed]) {
      const [event, ...rest] = eventsOf(await receive(signed(data)));
      expect(rest).toEqual([]);
      rows.push([event?.eventId, event?.kind, event?.bounceType, event?.status, event?.reason, event?.feedbackType]);
    }
    expect(rows).toEqual([
      ['W3X4JOhFT-OZidZGKKr9iA', 'delivered', null, '250', 'OK', null],
      // The reply code and the enhanced status both: the plan reads each.
      ['G9Bn5sl1TC6nu79C8C0bwg', 'bounced', 'hard', '550 5.1.1', hardBounce['delivery-status'].message, null],
      [
        'Fs7-5t81S2ql1ODIKkTsyA',
        'bounced',
        'soft',
        '452',
        '4.2.2 The email account that you tried to reach is over quota.',
        null,
      ],
      ['CPgfbmQMTCKtHW6uIWtuVe', 'dropped', null, '605', 'Not delivering to previously bounced address', null],
      // A rejection's reason is in its `reject` object.
      ['rjt-0001', 'dropped', null, null, 'Sandbox subdomains are for test purposes only.', null],
      ['-Agny091SquKnsrW2NEKUA', 'complaint', null, null, null, 'abuse'],
      ['ncV2XwymRUKbPek_MIM-Gw', 'accepted', null, null, null, null],
      // Mailgun's own unsubscribe link.
      ['Unsb2zsRYeDXztHGENqRAx', 'unsubscribed', null, null, null, null],
    ]);
  });

  it('reads the references and the time of an event', async () => {
    const [event] = eventsOf(await receive(signed(hardBounce)));
    expect(event).toEqual({
      provider: 'mailgun',
      eventId: 'G9Bn5sl1TC6nu79C8C0bwg',
      kind: 'bounced',
      bounceType: 'hard',
      recipient: 'alice@example.com',
      providerMessageId: null,
      mailId: 'm-0001',
      messageIdHeader: '20261120192659.13651.20287@mailproxy.example.org',
      at: 1_794_999_970_330,
      status: '550 5.1.1',
      reason: hardBounce['delivery-status'].message,
      feedbackType: null,
    });
  });

  it('falls back to the token for the event id and to now for the time', async () => {
    const data = { event: 'delivered', recipient: 'joe@example.net' };
    const request = signed(data, { token: 'tok-123' });
    const [event] = eventsOf(await receive(request));
    expect(event).toMatchObject({
      eventId: 'token:tok-123',
      at: NOW,
      mailId: null,
      messageIdHeader: null,
      status: null,
      reason: null,
    });
  });

  it('takes now for a signed timestamp that is no sane time', async () => {
    for (const timestamp of [1e306, -5, NOW / 1000 + 3 * 86_400]) {
      const [event] = eventsOf(await receive(signed({ event: 'delivered', recipient: 'joe@example.net', timestamp })));
      expect(event?.at).toBe(NOW);
    }
  });

  it('refuses a signed token that comes again with another body, and takes it again with the same body', async () => {
    const adapter = createMailgunAdapter();
    const sig = signature({ token: 'tok-replayed' });
    const body = (eventData: unknown) => ({
      body: Buffer.from(JSON.stringify({ signature: sig, 'event-data': eventData })),
      header: () => undefined,
    });
    const first = { event: 'delivered', id: 'ev-1', recipient: 'joe@example.net' };
    expect((await adapter.receive(body(first), SETTINGS, NOW)).ok).toBe(true);
    expect((await adapter.receive(body(first), SETTINGS, NOW)).ok).toBe(true);
    const other = await adapter.receive(body({ ...first, event: 'failed', severity: 'permanent' }), SETTINGS, NOW);
    expect(problemOf(other)).toMatchObject({ status: 401, code: 'webhook_replayed' });
  });

  it('ignores engagement events', async () => {
    expect(eventsOf(await receive(signed(opened)))).toEqual([]);
    expect(eventsOf(await receive(signed({ ...opened, event: 'clicked' })))).toEqual([]);
  });

  it('verifies with either configured key, and answers 401 for anything else', async () => {
    expect(eventsOf(await receive(signed(delivered, { key: OTHER_KEY })))).toHaveLength(1);
    expect(eventsOf(await receive(signed(delivered, { key: KEY })))).toHaveLength(1);
    const stranger = randomBytes(32).toString('hex');
    expect(problemOf(await receive(signed(delivered, { key: stranger })))).toMatchObject({
      status: 401,
      code: 'webhook_signature_invalid',
    });
    expect(problemOf(await receive(signed(delivered), [{ provider: 'sendgrid', publicKey: KEY }]))).toMatchObject({
      code: 'webhook_signature_invalid',
    });
  });

  it('refuses a token or timestamp changed after signing', async () => {
    const request = signed(delivered, { token: 'a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de0' });
    const token = {
      ...request,
      signature: { ...request.signature, token: 'a8ce0edb2dd8301dee6c2405235584e45aa91d1e9f979f3de1' },
    };
    expect(eventsOf(await receive(request))).toHaveLength(1);
    expect(problemOf(await receive(token))).toMatchObject({ status: 401, code: 'webhook_signature_invalid' });
    const stamp = { ...request, signature: { ...request.signature, timestamp: String(Number(TIMESTAMP) + 1) } };
    expect(problemOf(await receive(stamp))).toMatchObject({ status: 401, code: 'webhook_signature_invalid' });
  });

  it('refuses a request whose signature is missing or incomplete', async () => {
    expect(problemOf(await receive({ 'event-data': delivered }))).toMatchObject({
      status: 401,
      code: 'webhook_signature_missing',
    });
    for (const field of ['timestamp', 'token', 'signature'] as const) {
      const request = signed(delivered);
      const partial: Partial<Signature> = { ...request.signature };
      delete partial[field];
      expect(problemOf(await receive({ ...request, signature: partial }))).toMatchObject({
        status: 401,
        code: 'webhook_signature_missing',
      });
    }
  });

  it('refuses a signed timestamp outside the replay window', async () => {
    const stale = signed(delivered, { timestamp: String(NOW / 1000 - 601) });
    expect(problemOf(await receive(stale))).toMatchObject({ status: 401, code: 'webhook_replayed' });
    const future = signed(delivered, { timestamp: String(NOW / 1000 + 601) });
    expect(problemOf(await receive(future))).toMatchObject({ code: 'webhook_replayed' });
    expect(eventsOf(await receive(signed(delivered, { timestamp: String(NOW / 1000 - 599) })))).toHaveLength(1);
    const narrow = createMailgunAdapter({ replayWindowMs: 5_000 });
    const reading = await narrow.receive(
      { body: Buffer.from(JSON.stringify(signed(delivered))), header: () => undefined },
      SETTINGS,
      NOW,
    );
    expect(problemOf(reading)).toMatchObject({ code: 'webhook_replayed' });
  });

  it('answers 400 for a body that is not JSON, or signed without event-data', async () => {
    for (const body of ['not json', '[1,2]', 'null', '"text"']) {
      expect(problemOf(await receive(body))).toMatchObject({ status: 400, code: 'webhook_body_malformed' });
    }
    expect(problemOf(await receive({ signature: signature() }))).toMatchObject({
      status: 400,
      code: 'webhook_body_malformed',
    });
    expect(problemOf(await receive(signed([delivered])))).toMatchObject({
      status: 400,
      code: 'webhook_body_malformed',
    });
    expect(problemOf(await receive(signed({ ...delivered, event: '' })))).toMatchObject({
      status: 400,
      code: 'webhook_body_malformed',
    });
  });

  it('never throws on hostile bodies, and never answers ok to unsigned ones', async () => {
    const adapter = createMailgunAdapter();
    const unsigned = fc.oneof(
      fc.jsonValue().map((value) => Buffer.from(JSON.stringify(value) ?? 'null')),
      fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
      fc
        .record({ signature: fc.anything(), 'event-data': fc.anything() }, { requiredKeys: [] })
        .map((body) => Buffer.from(JSON.stringify(body) ?? 'null')),
    );
    await checkProperty('unsigned Mailgun bodies', 300, unsigned, async (bytes) => {
      const reading = await adapter.receive({ body: bytes, header: () => undefined }, SETTINGS, NOW);
      expect(reading.ok).toBe(false);
    });
    const eventData = fc.record(
      {
        event: fc.oneof(
          fc.constantFrom('accepted', 'delivered', 'failed', 'rejected', 'complained', 'opened'),
          fc.anything(),
        ),
        id: fc.anything(),
        timestamp: fc.oneof(fc.double(), fc.anything()),
        severity: fc.oneof(fc.constantFrom('permanent', 'temporary'), fc.anything()),
        reason: fc.oneof(fc.constantFrom('suppress-bounce', 'bounce', 'generic'), fc.anything()),
        recipient: fc.anything(),
        'delivery-status': fc.anything(),
        message: fc.anything(),
        'user-variables': fc.anything(),
      },
      { requiredKeys: [] },
    );
    await checkProperty('signed Mailgun event-data', 300, eventData, async (data) => {
      const reading = await adapter.receive(
        { body: Buffer.from(JSON.stringify(signed(data))), header: () => undefined },
        SETTINGS,
        NOW,
      );
      if (!reading.ok) expect(reading.problem).toMatchObject({ status: 400, code: 'webhook_body_malformed' });
      else for (const event of reading.events) expect(event.provider).toBe('mailgun');
    });
  });
});
