/**
 * The SendGrid adapter against real crypto: a P-256 key made here, its public key
 * given as SendGrid shows it (base64 DER SPKI), batches signed over timestamp +
 * body. The events are shaped as SendGrid's Event Webhook reference documents them.
 */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { WebhookSettings } from '../../src/core/provider/events.js';
import type { WebhookReading } from '../../src/ingress/webhooks/adapter.js';
import { createSendgridAdapter } from '../../src/ingress/webhooks/sendgrid.js';
import { checkProperty } from '../helpers/property-runs.js';
import { eventsOf, problemOf } from '../helpers/webhook-readings.js';

const pair = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const keys = pair();
const other = pair();
const spki = (key: KeyObject) => key.export({ type: 'spki', format: 'der' }).toString('base64');
const SETTINGS: WebhookSettings[] = [
  { provider: 'ses', topicArns: ['arn:x'] },
  { provider: 'sendgrid', publicKey: spki(other.publicKey) },
  { provider: 'sendgrid', publicKey: spki(keys.publicKey) },
];
const NOW = 1_795_000_000_000;
const TIMESTAMP = String(NOW / 1000 - 30);

type Headers = Record<string, string>;

function signedRequest(
  body: string | Buffer,
  options: { key?: KeyObject; timestamp?: string } = {},
): { body: Buffer; headers: Headers } {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
  const timestamp = options.timestamp ?? TIMESTAMP;
  const signature = sign('sha256', Buffer.concat([Buffer.from(timestamp), bytes]), {
    key: options.key ?? keys.privateKey,
    dsaEncoding: 'der',
  });
  return {
    body: bytes,
    headers: {
      'x-twilio-email-event-webhook-signature': signature.toString('base64'),
      'x-twilio-email-event-webhook-timestamp': timestamp,
    },
  };
}

async function receive(
  request: { body: Buffer; headers: Headers },
  settings = SETTINGS,
  now = NOW,
): Promise<WebhookReading> {
  const header = (name: string) => request.headers[name.toLowerCase()];
  return createSendgridAdapter().receive({ body: request.body, header }, settings, now);
}

const common = {
  email: 'jane@example.com',
  timestamp: 1_794_999_950,
  'smtp-id': '<20261120.1@mailproxy.example.org>',
  sg_message_id: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0',
  category: ['invoices'],
  genro_mail_id: 'm-0001',
};
const batch = [
  { ...common, event: 'processed', sg_event_id: 'ev-processed' },
  { ...common, event: 'delivered', sg_event_id: 'ev-delivered', response: '250 2.0.0 OK 1794999950 q1si' },
  { ...common, event: 'deferred', sg_event_id: 'ev-deferred', response: '421 4.7.0 try again later', attempt: '3' },
  {
    ...common,
    event: 'bounce',
    sg_event_id: 'ev-bounce',
    type: 'bounce',
    status: '5.1.1',
    reason: '550 5.1.1 user unknown',
    bounce_classification: 'Invalid Address',
  },
  {
    ...common,
    event: 'bounce',
    sg_event_id: 'ev-blocked',
    type: 'blocked',
    status: '5.7.1',
    reason: '554 5.7.1 blocked by policy',
    bounce_classification: 'Content',
  },
  {
    ...common,
    event: 'bounce',
    sg_event_id: 'ev-reputation',
    type: 'bounce',
    status: '5.7.1',
    reason: '550 5.7.1 poor reputation',
    bounce_classification: 'Reputation',
  },
  { ...common, event: 'dropped', sg_event_id: 'ev-dropped', reason: 'Bounced Address', status: '5.0.0' },
  { ...common, event: 'spamreport', sg_event_id: 'ev-spam' },
  { ...common, event: 'open', sg_event_id: 'ev-open', useragent: 'Mozilla/5.0', ip: '192.0.2.1' },
  { ...common, event: 'click', sg_event_id: 'ev-click', url: 'https://example.org' },
  { ...common, event: 'unsubscribe', sg_event_id: 'ev-unsub' },
  { ...common, event: 'group_unsubscribe', sg_event_id: 'ev-group', asm_group_id: 10 },
];

describe('SendGrid Event Webhook', () => {
  it('reads each delivery event and unsubscribe of a signed batch, and ignores engagement events', async () => {
    const events = eventsOf(await receive(signedRequest(JSON.stringify(batch))));
    expect(events.map((e) => [e.eventId, e.kind, e.bounceType, e.status, e.reason, e.feedbackType])).toEqual([
      ['ev-processed', 'accepted', null, null, null, null],
      ['ev-delivered', 'delivered', null, null, '250 2.0.0 OK 1794999950 q1si', null],
      ['ev-deferred', 'bounced', 'soft', null, '421 4.7.0 try again later', null],
      ['ev-bounce', 'bounced', 'hard', '5.1.1', '550 5.1.1 user unknown', null],
      ['ev-blocked', 'bounced', 'soft', '5.7.1', '554 5.7.1 blocked by policy', null],
      ['ev-reputation', 'bounced', 'soft', '5.7.1', '550 5.7.1 poor reputation', null],
      ['ev-dropped', 'dropped', null, '5.0.0', 'Bounced Address', null],
      ['ev-spam', 'complaint', null, null, null, 'abuse'],
      ['ev-unsub', 'unsubscribed', null, null, null, null],
      ['ev-group', 'unsubscribed', null, null, null, null],
    ]);
    expect(events[0]).toEqual({
      provider: 'sendgrid',
      eventId: 'ev-processed',
      kind: 'accepted',
      bounceType: null,
      recipient: 'jane@example.com',
      providerMessageId: '14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0',
      mailId: 'm-0001',
      messageIdHeader: '<20261120.1@mailproxy.example.org>',
      at: 1_794_999_950_000,
      status: null,
      reason: null,
      feedbackType: null,
    });
  });

  it('digests an event without sg_event_id the same whatever its key order', async () => {
    const event = {
      email: 'joe@example.net',
      timestamp: 1_794_999_960,
      event: 'delivered',
      response: '250 OK',
      genro_mail_id: 'm-2',
    };
    const reordered = {
      genro_mail_id: 'm-2',
      response: '250 OK',
      event: 'delivered',
      timestamp: 1_794_999_960,
      email: 'joe@example.net',
    };
    const [first] = eventsOf(await receive(signedRequest(JSON.stringify([event]))));
    const [second] = eventsOf(await receive(signedRequest(JSON.stringify([reordered]))));
    expect(first?.eventId).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(second?.eventId).toBe(first?.eventId);
  });

  it('accepts the key as a PEM too', async () => {
    const pem = keys.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const reading = await receive(signedRequest(JSON.stringify(batch.slice(0, 1))), [
      { provider: 'sendgrid', publicKey: pem },
    ]);
    expect(eventsOf(reading)).toHaveLength(1);
  });

  it('refuses a batch signed with another key, or with no SendGrid key configured', async () => {
    const stranger = pair();
    expect(problemOf(await receive(signedRequest('[]', { key: stranger.privateKey })))).toEqual(
      expect.objectContaining({ status: 401, code: 'webhook_signature_invalid' }),
    );
    expect(
      problemOf(await receive(signedRequest('[]'), [{ provider: 'sendgrid', publicKey: 'not a key' }])),
    ).toMatchObject({
      code: 'webhook_signature_invalid',
    });
    expect(problemOf(await receive(signedRequest('[]'), [{ provider: 'ses', topicArns: [] }]))).toMatchObject({
      code: 'webhook_signature_invalid',
    });
  });

  it('refuses a body changed after signing, or a timestamp swapped for another', async () => {
    const request = signedRequest(JSON.stringify(batch));
    const tampered = Buffer.from(
      request.body.toString().replace('"bounce","sg_event_id":"ev-bounce"', '"delivered","sg_event_id":"ev-bounce"'),
    );
    expect(tampered.equals(request.body)).toBe(false);
    expect(problemOf(await receive({ ...request, body: tampered }))).toMatchObject({
      status: 401,
      code: 'webhook_signature_invalid',
    });
    const swapped = { ...request.headers, 'x-twilio-email-event-webhook-timestamp': String(Number(TIMESTAMP) + 1) };
    expect(problemOf(await receive({ ...request, headers: swapped }))).toMatchObject({
      code: 'webhook_signature_invalid',
    });
  });

  it('refuses a request without the signature headers', async () => {
    const request = signedRequest('[]');
    for (const name of Object.keys(request.headers)) {
      const headers = { ...request.headers };
      delete headers[name];
      expect(problemOf(await receive({ ...request, headers }))).toMatchObject({
        status: 401,
        code: 'webhook_signature_missing',
      });
    }
  });

  it('refuses a stale or future timestamp, even when signed', async () => {
    const stale = signedRequest('[]', { timestamp: String(NOW / 1000 - 601) });
    expect(problemOf(await receive(stale))).toMatchObject({ status: 401, code: 'webhook_replayed' });
    const future = signedRequest('[]', { timestamp: String(NOW / 1000 + 601) });
    expect(problemOf(await receive(future))).toMatchObject({ code: 'webhook_replayed' });
    const notNumber = signedRequest('[]', { timestamp: 'yesterday' });
    expect(problemOf(await receive(notNumber))).toMatchObject({ code: 'webhook_replayed' });
  });

  it('answers 400 for a signed body that is not an array of events', async () => {
    for (const body of ['{"event":"delivered"}', 'not json', '[1]', '[{"email":"x@example.com"}]']) {
      expect(problemOf(await receive(signedRequest(body)))).toMatchObject({
        status: 400,
        code: 'webhook_body_malformed',
      });
    }
  });

  it('never throws on hostile bodies, signed or not, and reads no events from unsigned ones', async () => {
    const adapter = createSendgridAdapter();
    const event = fc.record(
      {
        event: fc.oneof(
          fc.constantFrom('processed', 'delivered', 'deferred', 'bounce', 'dropped', 'spamreport', 'open'),
          fc.anything(),
        ),
        email: fc.anything(),
        timestamp: fc.oneof(fc.double(), fc.anything()),
        sg_event_id: fc.anything(),
        type: fc.anything(),
        bounce_classification: fc.anything(),
        reason: fc.anything(),
        status: fc.anything(),
        genro_mail_id: fc.anything(),
      },
      { requiredKeys: [] },
    );
    const body = fc.oneof(
      fc.array(event).map((events) => Buffer.from(JSON.stringify(events))),
      fc.jsonValue().map((value) => Buffer.from(JSON.stringify(value) ?? 'null')),
      fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
      fc
        .nat({ max: 5000 })
        .map((depth) => Buffer.from(`[{"event":"delivered","x":${'['.repeat(depth)}${']'.repeat(depth)}}]`)),
    );
    const headers = fc.record(
      { signature: fc.oneof(fc.base64String(), fc.string()), timestamp: fc.oneof(fc.constant(TIMESTAMP), fc.string()) },
      { requiredKeys: [] },
    );
    await checkProperty('unsigned SendGrid bodies', 300, fc.tuple(body, headers), async ([bytes, given]) => {
      const header = (name: string) => (name.endsWith('Signature') ? given.signature : given.timestamp);
      const reading = await adapter.receive({ body: bytes, header }, SETTINGS, NOW);
      expect(reading.ok).toBe(false);
    });
    await checkProperty('signed SendGrid bodies', 300, body, async (bytes) => {
      const request = signedRequest(bytes);
      const reading = await adapter.receive(
        { body: bytes, header: (name) => request.headers[name.toLowerCase()] },
        SETTINGS,
        NOW,
      );
      if (!reading.ok) expect(reading.problem).toMatchObject({ status: 400, code: 'webhook_body_malformed' });
    });
  });
});
