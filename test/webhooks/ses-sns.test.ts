/**
 * The SES adapter against real crypto: SNS messages signed (versions 1 and 2) with
 * a key whose self-signed certificate a local HTTPS peer serves, the way SNS
 * serves SigningCertURL. The SES events are shaped as AWS documents them.
 */
import { sign } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebhookSettings } from '../../src/core/provider/events.js';
import type { WebhookReading } from '../../src/ingress/webhooks/adapter.js';
import { createSesAdapter } from '../../src/ingress/webhooks/ses.js';
import { checkProperty } from '../helpers/property-runs.js';
import { eventsOf, problemOf } from '../helpers/webhook-readings.js';
import { stringToSign } from '../peers/sns-publisher.js';
import { selfSigned } from '../peers/self-signed.js';

const TOPIC = 'arn:aws:sns:us-east-1:123456789012:ses-events';
const SETTINGS: WebhookSettings[] = [
  { provider: 'sendgrid', publicKey: 'x' },
  { provider: 'ses', topicArns: [TOPIC] },
];
const LOCAL = /^(127\.0\.0\.1|localhost)$/;
const SENT_AT = '2026-11-20T10:00:03.000Z';
const NOW = Date.parse('2026-11-20T10:00:05.000Z');

let dir: string;
let server: Server;
let base: string;
let tlsCert: Buffer;
let signingKey: Buffer;
const fetches = new Map<string, number>();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ses-sns-'));
  const tls = await selfSigned(dir, 'tls', 'localhost');
  const signing = await selfSigned(dir, 'signing', 'sns.us-east-1.amazonaws.com');
  tlsCert = tls.cert;
  signingKey = signing.key;
  server = createServer({ key: tls.key, cert: tls.cert }, (request, response) => {
    const path = request.url ?? '';
    fetches.set(path, (fetches.get(path) ?? 0) + 1);
    if (path.startsWith('/SimpleNotificationService')) response.end(signing.cert);
    else if (path === '/huge.pem') response.end(Buffer.alloc(80 * 1024, 'A'));
    else if (path === '/stalled.pem') response.writeHead(200).write('-----BEGIN CERTIFICATE-----\n');
    else response.writeHead(404).end('no such certificate');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

const adapter = () => createSesAdapter({ certificateHost: LOCAL, ca: tlsCert });

function signed(
  fields: Record<string, string>,
  version: '1' | '2' = '1',
  certPath = '/SimpleNotificationService-abc.pem',
): Record<string, string> {
  const message = {
    Timestamp: SENT_AT,
    TopicArn: TOPIC,
    SignatureVersion: version,
    SigningCertURL: `${base}${certPath}`,
    ...fields,
  };
  const signature = sign(version === '1' ? 'sha1' : 'sha256', Buffer.from(stringToSign(message)), signingKey).toString(
    'base64',
  );
  return { ...message, Signature: signature };
}

function notification(
  sesEvent: unknown,
  id = 'a1b2c3d4-0000-4000-8000-000000000001',
  version: '1' | '2' = '1',
): Record<string, string> {
  return signed({ Type: 'Notification', MessageId: id, Message: JSON.stringify(sesEvent) }, version);
}

const request = (body: unknown) => ({
  body: Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body)),
  header: () => undefined,
});

async function receive(body: unknown, now = NOW, ses = adapter()): Promise<WebhookReading> {
  return ses.receive(request(body), SETTINGS, now);
}

const mail = (extra: Record<string, unknown> = {}) => ({
  timestamp: '2026-11-20T09:59:58.000Z',
  source: 'Sender <sender@example.org>',
  sourceArn: 'arn:aws:ses:us-east-1:123456789012:identity/example.org',
  sendingAccountId: '123456789012',
  messageId: '0100018c1e6a0f2b-8d7c4e55-0000-0000-0000-000000000000-000000',
  destination: ['jane@example.com', 'joe@example.net'],
  headersTruncated: false,
  headers: [
    { name: 'From', value: 'Sender <sender@example.org>' },
    { name: 'To', value: 'jane@example.com, joe@example.net' },
    { name: 'Message-ID', value: '<20261120.1@mailproxy.example.org>' },
    { name: 'x-genro-mail-id', value: ' m-0001 ' },
    { name: 'Subject', value: 'Invoice' },
  ],
  commonHeaders: {
    from: ['Sender <sender@example.org>'],
    to: ['jane@example.com', 'joe@example.net'],
    messageId: '<20261120.1@mailproxy.example.org>',
    subject: 'Invoice',
  },
  ...extra,
});

const permanentBounce = {
  notificationType: 'Bounce',
  bounce: {
    bounceType: 'Permanent',
    bounceSubType: 'General',
    bouncedRecipients: [
      {
        emailAddress: 'jane@example.com',
        action: 'failed',
        status: '5.1.1',
        diagnosticCode: 'smtp; 550 5.1.1 <jane@example.com>: user unknown',
      },
    ],
    timestamp: '2026-11-20T10:00:01.250Z',
    feedbackId: '0100018c1e6a1111-aaaa-bbbb-cccc-dddddddddddd-000000',
    remoteMtaIp: '192.0.2.25',
    reportingMTA: 'dsn; a8-30.smtp-out.amazonses.com',
  },
  mail: mail(),
};

describe('SES events through SNS', () => {
  it('reads a permanent bounce signed with SignatureVersion 1, echoing X-Genro-Mail-ID from the headers', async () => {
    const events = eventsOf(await receive(notification(permanentBounce)));
    expect(events).toEqual([
      {
        provider: 'ses',
        eventId: 'a1b2c3d4-0000-4000-8000-000000000001',
        kind: 'bounced',
        bounceType: 'hard',
        recipient: 'jane@example.com',
        providerMessageId: '0100018c1e6a0f2b-8d7c4e55-0000-0000-0000-000000000000-000000',
        mailId: 'm-0001',
        messageIdHeader: '<20261120.1@mailproxy.example.org>',
        at: Date.parse('2026-11-20T10:00:01.250Z'),
        status: '5.1.1',
        reason: 'smtp; 550 5.1.1 <jane@example.com>: user unknown',
        feedbackType: null,
      },
    ]);
  });

  it('reads a transient bounce in the event-publishing format, signed with version 2, taking the mail id from the tags', async () => {
    const event = {
      eventType: 'Bounce',
      bounce: {
        bounceType: 'Transient',
        bounceSubType: 'MailboxFull',
        bouncedRecipients: [
          { emailAddress: 'jane@example.com', status: '4.2.2', diagnosticCode: 'smtp; 452 4.2.2 mailbox full' },
          { emailAddress: 'joe@example.net' },
        ],
        timestamp: '2026-11-20T10:00:02.000Z',
      },
      mail: mail({
        headers: [],
        commonHeaders: {},
        tags: { 'ses:configuration-set': ['default'], genro_mail_id: ['m-0002'] },
      }),
    };
    const events = eventsOf(await receive(notification(event, 'msg-2', '2')));
    expect(
      events.map((e) => [e.eventId, e.bounceType, e.recipient, e.status, e.reason, e.mailId, e.messageIdHeader]),
    ).toEqual([
      ['msg-2:0', 'soft', 'jane@example.com', '4.2.2', 'smtp; 452 4.2.2 mailbox full', 'm-0002', null],
      ['msg-2:1', 'soft', 'joe@example.net', null, 'MailboxFull', 'm-0002', null],
    ]);
  });

  it('treats an Undetermined bounce as soft', async () => {
    const event = {
      ...permanentBounce,
      bounce: { ...permanentBounce.bounce, bounceType: 'Undetermined', bounceSubType: 'Undetermined' },
    };
    expect(eventsOf(await receive(notification(event)))[0]?.bounceType).toBe('soft');
  });

  it('reads a complaint with its feedback type', async () => {
    const event = {
      notificationType: 'Complaint',
      complaint: {
        complainedRecipients: [{ emailAddress: 'jane@example.com' }],
        timestamp: '2026-11-20T10:00:02.000Z',
        feedbackId: '0100018c-complaint',
        userAgent: 'ExampleCorp Feedback Loop (V0.01)',
        complaintFeedbackType: 'abuse',
        arrivalDate: '2026-11-20T10:00:01.000Z',
      },
      mail: mail(),
    };
    const [event0] = eventsOf(await receive(notification(event)));
    expect(event0).toMatchObject({
      kind: 'complaint',
      bounceType: null,
      recipient: 'jane@example.com',
      feedbackType: 'abuse',
      at: Date.parse('2026-11-20T10:00:02.000Z'),
    });
  });

  it('reads one delivery event per recipient, with distinct ids that a replay maps to the same ids', async () => {
    const event = {
      notificationType: 'Delivery',
      delivery: {
        timestamp: '2026-11-20T10:00:01.500Z',
        processingTimeMillis: 1500,
        recipients: ['jane@example.com', 'joe@example.net'],
        smtpResponse: '250 2.6.0 Message received',
        remoteMtaIp: '192.0.2.30',
        reportingMTA: 'a8-30.smtp-out.amazonses.com',
      },
      mail: mail(),
    };
    const body = notification(event, 'msg-3');
    const first = eventsOf(await receive(body));
    expect(first.map((e) => [e.eventId, e.kind, e.recipient, e.status, e.reason])).toEqual([
      ['msg-3:0', 'delivered', 'jane@example.com', '2.6.0', '250 2.6.0 Message received'],
      ['msg-3:1', 'delivered', 'joe@example.net', '2.6.0', '250 2.6.0 Message received'],
    ]);
    expect(eventsOf(await receive(body)).map((e) => e.eventId)).toEqual(['msg-3:0', 'msg-3:1']);
  });

  it('reads Send as accepted and Reject as dropped with its reason, both about the whole message', async () => {
    const send = eventsOf(await receive(notification({ eventType: 'Send', send: {}, mail: mail() })));
    expect(send).toMatchObject([{ kind: 'accepted', recipient: null, at: Date.parse('2026-11-20T09:59:58.000Z') }]);
    const reject = eventsOf(
      await receive(notification({ eventType: 'Reject', reject: { reason: 'Bad content' }, mail: mail() })),
    );
    expect(reject).toMatchObject([{ kind: 'dropped', recipient: null, reason: 'Bad content', mailId: 'm-0001' }]);
  });

  it('reads a delivery delay as a soft bounce per delayed recipient', async () => {
    const event = {
      eventType: 'DeliveryDelay',
      deliveryDelay: {
        timestamp: '2026-11-20T10:00:02.000Z',
        delayType: 'TransientCommunicationFailure',
        expirationTime: '2026-11-21T10:00:00.000Z',
        delayedRecipients: [
          { emailAddress: 'joe@example.net', status: '4.4.1', diagnosticCode: 'smtp; 421 4.4.1 connection timed out' },
        ],
      },
      mail: mail(),
    };
    expect(eventsOf(await receive(notification(event)))).toMatchObject([
      { kind: 'bounced', bounceType: 'soft', recipient: 'joe@example.net', status: '4.4.1' },
    ]);
  });

  it('answers no events for engagement events and for SES’s subscription notice', async () => {
    const open = {
      eventType: 'Open',
      open: { ipAddress: '192.0.2.1', timestamp: SENT_AT, userAgent: 'x' },
      mail: mail(),
    };
    expect(await receive(notification(open))).toEqual({ ok: true, events: [] });
    const notice = {
      notificationType: 'AmazonSnsSubscriptionSucceeded',
      message: 'You have successfully subscribed your Amazon SNS topic.',
    };
    expect(await receive(notification(notice))).toEqual({ ok: true, events: [] });
  });

  it('refuses a message whose signed content was changed after signing', async () => {
    const body = notification(permanentBounce);
    const tampered = { ...body, Message: body.Message!.replace('jane@example.com', 'mallory@example.com') };
    expect(problemOf(await receive(tampered))).toMatchObject({ status: 401, code: 'webhook_signature_invalid' });
    expect(problemOf(await receive({ ...body, SignatureVersion: '2' }))).toMatchObject({
      status: 401,
      code: 'webhook_signature_invalid',
    });
  });

  it('refuses a certificate URL that is not https on an allowed host, without fetching it', async () => {
    const before = [...fetches.values()].reduce((a, b) => a + b, 0);
    const body = notification(permanentBounce);
    for (const url of [
      'https://evil.example/SimpleNotificationService-abc.pem',
      `${base.replace('https:', 'http:')}/SimpleNotificationService-abc.pem`,
      'not a url',
    ]) {
      expect(problemOf(await receive({ ...body, SigningCertURL: url }))).toMatchObject({
        status: 401,
        code: 'webhook_certificate_refused',
      });
    }
    expect([...fetches.values()].reduce((a, b) => a + b, 0)).toBe(before);
  });

  it('refuses a topic the settings do not name', async () => {
    const body = signed({
      Type: 'Notification',
      MessageId: 'm',
      Message: JSON.stringify(permanentBounce),
      TopicArn: 'arn:aws:sns:us-east-1:999999999999:other',
    });
    expect(problemOf(await receive(body))).toMatchObject({ status: 401, code: 'webhook_topic_refused' });
  });

  it('refuses a stale or far-future timestamp', async () => {
    const body = notification(permanentBounce);
    expect(problemOf(await receive(body, Date.parse(SENT_AT) + 60 * 60_000 + 1))).toMatchObject({
      status: 401,
      code: 'webhook_replayed',
    });
    expect(problemOf(await receive(body, Date.parse(SENT_AT) - 5 * 60_000 - 1))).toMatchObject({
      status: 401,
      code: 'webhook_replayed',
    });
    const ses = createSesAdapter({ certificateHost: LOCAL, ca: tlsCert, replayWindowMs: 1000 });
    expect(problemOf(await receive(body, NOW, ses))).toMatchObject({ code: 'webhook_replayed' });
  });

  it('answers a subscription confirmation with its SubscribeURL, only when that names an allowed host', async () => {
    const confirmation = (subscribeUrl: string) =>
      signed(
        {
          Type: 'SubscriptionConfirmation',
          MessageId: 'c-1',
          Token: 'tok',
          Message: 'You have chosen to subscribe.',
          SubscribeURL: subscribeUrl,
        },
        '2',
      );
    const url = `${base}/?Action=ConfirmSubscription&TopicArn=${TOPIC}&Token=tok`;
    expect(await receive(confirmation(url))).toEqual({ ok: true, events: [], confirm: url });
    expect(problemOf(await receive(confirmation('https://evil.example/?Action=ConfirmSubscription')))).toMatchObject({
      code: 'webhook_certificate_refused',
    });
    const unsubscribe = signed({
      Type: 'UnsubscribeConfirmation',
      MessageId: 'u-1',
      Token: 'tok',
      Message: 'unsubscribed',
      SubscribeURL: url,
    });
    expect(await receive(unsubscribe)).toEqual({ ok: true, events: [] });
  });

  it('fetches a certificate once for two requests, and fetches again after a failed fetch', async () => {
    const ses = adapter();
    const path = '/SimpleNotificationService-cache.pem';
    const body = (id: string) =>
      signed({ Type: 'Notification', MessageId: id, Message: JSON.stringify(permanentBounce) }, '1', path);
    eventsOf(await receive(body('one'), NOW, ses));
    eventsOf(await receive(body('two'), NOW, ses));
    expect(fetches.get(path)).toBe(1);
    const missing = signed({ Type: 'Notification', MessageId: 'x', Message: '{}' }, '1', '/missing.pem');
    expect(problemOf(await receive(missing, NOW, ses))).toMatchObject({
      status: 503,
      code: 'webhook_certificate_unavailable',
    });
    await receive(missing, NOW, ses);
    expect(fetches.get('/missing.pem')).toBe(2);
  });

  it('gives up on a certificate that is too large or too slow to arrive', async () => {
    const ses = createSesAdapter({ certificateHost: LOCAL, ca: tlsCert, fetchTimeoutMs: 300 });
    for (const path of ['/huge.pem', '/stalled.pem']) {
      const body = signed({ Type: 'Notification', MessageId: 'x', Message: '{}' }, '1', path);
      expect(problemOf(await receive(body, NOW, ses))).toMatchObject({
        status: 503,
        code: 'webhook_certificate_unavailable',
      });
    }
  });

  it('answers 401 for missing signed fields and 400 for a body that is not JSON', async () => {
    const { Signature: _dropped, ...unsigned } = notification(permanentBounce);
    expect(problemOf(await receive(unsigned))).toMatchObject({ status: 401, code: 'webhook_signature_missing' });
    expect(problemOf(await receive({ ...notification(permanentBounce), MessageId: 42 }))).toMatchObject({
      code: 'webhook_signature_missing',
    });
    expect(problemOf(await receive(Buffer.from('Type=Notification&Message=x')))).toMatchObject({
      status: 400,
      code: 'webhook_body_malformed',
    });
    const notSes = notification({
      eventType: 'Bounce',
      bounce: { bounceType: 'Permanent', bouncedRecipients: 'jane' },
      mail: mail(),
    });
    expect(problemOf(await receive(notSes))).toMatchObject({ status: 400, code: 'webhook_body_malformed' });
  });

  it('never throws on hostile bodies, and never reads events from an unsigned one', async () => {
    const ses = adapter();
    const genuine = notification(permanentBounce);
    const envelope = fc.record(
      {
        Type: fc.constantFrom('Notification', 'SubscriptionConfirmation', 'UnsubscribeConfirmation', 'Other'),
        MessageId: fc.string(),
        TopicArn: fc.constantFrom(TOPIC, 'arn:x'),
        Message: fc.oneof(fc.string(), fc.json(), fc.constant(genuine.Message)),
        Timestamp: fc.constantFrom(SENT_AT, 'yesterday'),
        SignatureVersion: fc.constantFrom('1', '2', '3'),
        Signature: fc.oneof(fc.base64String(), fc.constant(genuine.Signature), fc.string()),
        SigningCertURL: fc.constantFrom(genuine.SigningCertURL, 'https://evil.example/x.pem', ''),
        Subject: fc.anything(),
      },
      { requiredKeys: [] },
    );
    const body = fc.oneof(
      envelope.map((value) => Buffer.from(JSON.stringify(value))),
      fc.jsonValue().map((value) => Buffer.from(JSON.stringify(value) ?? 'null')),
      fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
    );
    await checkProperty('unsigned SNS bodies', 300, body, async (bytes) => {
      const reading = await ses.receive(request(bytes), SETTINGS, NOW);
      expect(reading.ok && reading.events.length > 0).toBe(false);
    });
    // Signed by SNS but holding anything: read or refused as malformed, never a throw.
    const message = fc.oneof(
      fc.jsonValue(),
      fc.record({
        notificationType: fc.constantFrom('Bounce', 'Complaint', 'Delivery'),
        bounce: fc.anything(),
        complaint: fc.anything(),
        delivery: fc.anything(),
        mail: fc.anything(),
      }),
    );
    await checkProperty('signed SES messages of any shape', 150, message, async (value) => {
      const reading = await ses.receive(request(notification(value)), SETTINGS, NOW);
      if (!reading.ok) expect(reading.problem).toMatchObject({ status: 400, code: 'webhook_body_malformed' });
    });
  });
});
