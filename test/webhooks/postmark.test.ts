/**
 * The Postmark adapter: records shaped as Postmark's webhook reference shows
 * them (Delivery, Bounce, SpamComplaint, Open, SubscriptionChange), sent with
 * the credentials the webhook was configured with: basic auth in its URL, a
 * custom `X-Webhook-Token` header, or both (then both are required).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { WebhookSettings } from '../../src/core/provider/events.js';
import type { WebhookReading } from '../../src/ingress/webhooks/adapter.js';
import { createPostmarkAdapter } from '../../src/ingress/webhooks/postmark.js';
import { checkProperty } from '../helpers/property-runs.js';
import { eventsOf, problemOf } from '../helpers/webhook-readings.js';

const NOW = 1_795_000_000_000;
const BASIC: WebhookSettings = { provider: 'postmark', username: 'hook', password: 's3cret:with-colon', token: null };
const TOKEN: WebhookSettings = { provider: 'postmark', username: null, password: null, token: 'tok-7f3a9c' };
const BOTH: WebhookSettings = { provider: 'postmark', username: 'both', password: 'pw-both', token: 'tok-both' };

type Headers = Record<string, string>;
const basic = (user: string, password: string): Headers => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
});
const token = (value: string): Headers => ({ 'x-webhook-token': value });

async function receive(
  body: unknown,
  headers: Headers,
  settings: WebhookSettings[] = [BASIC],
  now = NOW,
): Promise<WebhookReading> {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  return createPostmarkAdapter().receive({ body: bytes, header: (name) => headers[name.toLowerCase()] }, settings, now);
}
const authorized = (body: unknown) => receive(body, basic('hook', 's3cret:with-colon'));

const metadata = { genro_mail_id: 'm-0001', customer: 'acme' };
const delivery = {
  RecordType: 'Delivery',
  ServerID: 23,
  MessageStream: 'outbound',
  MessageID: '883953f4-6105-42a2-a16a-77a8eac79483',
  Recipient: 'john@example.com',
  Tag: 'welcome-email',
  DeliveredAt: '2026-11-20T16:33:54.9070259Z',
  Details: 'Test delivery webhook details',
  Metadata: metadata,
};
const bounce = (id: number, type: string, typeCode: number, description: string) => ({
  RecordType: 'Bounce',
  MessageStream: 'outbound',
  ID: id,
  Type: type,
  TypeCode: typeCode,
  Name: type,
  Tag: 'Invitation',
  MessageID: '883953f4-6105-42a2-a16a-77a8eac79483',
  Metadata: metadata,
  ServerID: 23,
  Description: description,
  Details: 'smtp;550 5.1.1 The email account that you tried to reach does not exist.',
  Email: 'john@example.com',
  From: 'sender@example.com',
  BouncedAt: '2026-11-20T16:34:10.123Z',
  DumpAvailable: true,
  Inactive: true,
  CanActivate: true,
  Subject: 'Test subject',
});
const hard = bounce(
  692560173,
  'HardBounce',
  1,
  'The server was unable to deliver your message (ex: unknown user, mailbox not found).',
);
const soft = {
  ...bounce(692560174, 'SoftBounce', 4096, 'Unable to temporarily deliver this message.'),
  Details: 'mailbox full',
  Inactive: false,
};
const transient = {
  ...bounce(692560175, 'Transient', 2, 'The server could not temporarily deliver your message.'),
  Details: '',
};
const dnsError = { ...bounce(692560176, 'DnsError', 16384, 'A temporary DNS error.'), Details: '' };
const autoResponder = bounce(
  692560177,
  'AutoResponder',
  32,
  'Automatic email responder (ex: "Out of Office" or "On Vacation").',
);
const complaint = {
  ...bounce(42, 'SpamComplaint', 512, ''),
  RecordType: 'SpamComplaint',
  Name: 'Spam complaint',
  Details: 'Test spam complaint details',
  CanActivate: false,
};
const open = {
  RecordType: 'Open',
  MessageStream: 'outbound',
  FirstOpen: true,
  Client: { Name: 'Chrome 35.0.1916.153', Company: 'Google', Family: 'Chrome' },
  OS: { Name: 'OS X 10.7 Lion', Company: 'Apple Computer, Inc.', Family: 'OS X 10' },
  Platform: 'WebMail',
  UserAgent: 'Mozilla/5.0',
  ReadSeconds: 5,
  MessageID: '883953f4-6105-42a2-a16a-77a8eac79483',
  Metadata: metadata,
  ReceivedAt: '2026-11-20T16:40:00Z',
  Recipient: 'john@example.com',
};
const subscriptionChange = {
  RecordType: 'SubscriptionChange',
  MessageID: '883953f4-6105-42a2-a16a-77a8eac79483',
  ServerID: 23,
  MessageStream: 'outbound',
  ChangedAt: '2026-11-20T16:41:00Z',
  Recipient: 'john@example.com',
  Origin: 'Recipient',
  SuppressSending: true,
  SuppressionReason: 'HardBounce',
  Metadata: metadata,
};

describe('Postmark webhooks', () => {
  it('reads a delivery with its references and time', async () => {
    const [event, ...rest] = eventsOf(await authorized(delivery));
    expect(rest).toEqual([]);
    expect(event).toEqual({
      provider: 'postmark',
      eventId: expect.stringMatching(/^delivery:[0-9a-f]{32}$/),
      kind: 'delivered',
      bounceType: null,
      recipient: 'john@example.com',
      providerMessageId: '883953f4-6105-42a2-a16a-77a8eac79483',
      mailId: 'm-0001',
      messageIdHeader: null,
      at: Date.UTC(2026, 10, 20, 16, 33, 54, 907),
      status: null,
      reason: 'Test delivery webhook details',
      feedbackType: null,
    });
  });

  it('gives a delivery delivered twice the same id, and another recipient or message another', async () => {
    const [first] = eventsOf(await authorized(delivery));
    const [again] = eventsOf(
      await authorized({ ...delivery, Details: 'redelivered', DeliveredAt: '2026-11-20T16:35:00Z' }),
    );
    const [other] = eventsOf(await authorized({ ...delivery, Recipient: 'jane@example.com' }));
    const [otherMessage] = eventsOf(
      await authorized({ ...delivery, MessageID: '00000000-0000-0000-0000-000000000001' }),
    );
    expect(again?.eventId).toBe(first?.eventId);
    expect(other?.eventId).not.toBe(first?.eventId);
    expect(otherMessage?.eventId).not.toBe(first?.eventId);
  });

  it('reads bounces as hard or soft, with the bounce ID as event id', async () => {
    const rows = [];
    for (const record of [hard, soft, transient, dnsError]) {
      const [event] = eventsOf(await authorized(record));
      rows.push([event?.eventId, event?.kind, event?.bounceType, event?.recipient, event?.reason, event?.at]);
    }
    const at = Date.UTC(2026, 10, 20, 16, 34, 10, 123);
    expect(rows).toEqual([
      ['bounce:692560173', 'bounced', 'hard', 'john@example.com', hard.Details, at],
      ['bounce:692560174', 'bounced', 'soft', 'john@example.com', 'mailbox full', at],
      [
        'bounce:692560175',
        'bounced',
        'soft',
        'john@example.com',
        'The server could not temporarily deliver your message.',
        at,
      ],
      ['bounce:692560176', 'bounced', 'soft', 'john@example.com', 'A temporary DNS error.', at],
    ]);
    const [event] = eventsOf(await authorized(hard));
    expect(event).toMatchObject({
      providerMessageId: '883953f4-6105-42a2-a16a-77a8eac79483',
      mailId: 'm-0001',
      status: null,
      feedbackType: null,
    });
  });

  it('keeps 64-bit bounce IDs apart (as text: past 2^53 a JSON number cannot tell them apart)', async () => {
    const body = (id: string) => Buffer.from(JSON.stringify(hard).replace('"ID":692560173', `"ID":${id}`));
    const ids = [];
    for (const id of ['4323372036854775807', '4323372036854775806']) {
      const reading = await createPostmarkAdapter().receive(
        { body: body(id), header: (name) => basic('hook', 's3cret:with-colon')[name.toLowerCase()] },
        [BASIC],
        NOW,
      );
      ids.push(eventsOf(reading)[0]?.eventId);
    }
    expect(ids).toEqual(['bounce:4323372036854775807', 'bounce:4323372036854775806']);
  });

  it('reads a spam complaint, and ignores auto-replies, opens and subscription changes', async () => {
    const [event, ...rest] = eventsOf(await authorized(complaint));
    expect(rest).toEqual([]);
    expect(event).toMatchObject({
      eventId: 'bounce:42',
      kind: 'complaint',
      bounceType: null,
      recipient: 'john@example.com',
      mailId: 'm-0001',
      feedbackType: 'abuse',
      at: Date.UTC(2026, 10, 20, 16, 34, 10, 123),
    });
    for (const record of [autoResponder, open, subscriptionChange])
      expect(eventsOf(await authorized(record))).toEqual([]);
  });

  it('takes the receipt time when the record gives none', async () => {
    const [event] = eventsOf(await authorized({ ...hard, BouncedAt: 'not a date' }));
    expect(event?.at).toBe(NOW);
  });

  it('verifies basic auth only, a token only, and both together', async () => {
    expect(eventsOf(await receive(delivery, basic('hook', 's3cret:with-colon'), [BASIC]))).toHaveLength(1);
    expect(eventsOf(await receive(delivery, token('tok-7f3a9c'), [TOKEN]))).toHaveLength(1);
    expect(
      eventsOf(await receive(delivery, { ...basic('both', 'pw-both'), ...token('tok-both') }, [BOTH])),
    ).toHaveLength(1);
    expect(eventsOf(await receive(delivery, token('tok-7f3a9c'), [BASIC, TOKEN]))).toHaveLength(1);
  });

  it('refuses wrong or incomplete credentials', async () => {
    const invalid = { status: 401, code: 'webhook_signature_invalid' };
    expect(problemOf(await receive(delivery, basic('hook', 'wrong'), [BASIC]))).toMatchObject(invalid);
    expect(problemOf(await receive(delivery, basic('other', 's3cret:with-colon'), [BASIC]))).toMatchObject(invalid);
    expect(problemOf(await receive(delivery, { authorization: 'Bearer abc' }, [BASIC]))).toMatchObject(invalid);
    expect(problemOf(await receive(delivery, token('tok-7f3a9'), [TOKEN]))).toMatchObject(invalid);
    expect(problemOf(await receive(delivery, basic('hook', 's3cret:with-colon'), [TOKEN]))).toMatchObject(invalid);
    expect(problemOf(await receive(delivery, basic('both', 'pw-both'), [BOTH]))).toMatchObject(invalid);
    expect(problemOf(await receive(delivery, token('tok-both'), [BOTH]))).toMatchObject(invalid);
    expect(
      problemOf(await receive(delivery, { ...basic('both', 'pw-both'), ...token('tok-wrong') }, [BOTH])),
    ).toMatchObject(invalid);
  });

  it('refuses a request with no credentials at all', async () => {
    expect(problemOf(await receive(delivery, {}, [BASIC, TOKEN]))).toMatchObject({
      status: 401,
      code: 'webhook_signature_missing',
    });
  });

  it('never verifies against settings that configure nothing, or no Postmark settings', async () => {
    const nothing: WebhookSettings = { provider: 'postmark', username: null, password: null, token: null };
    for (const headers of [basic('', ''), token(''), { authorization: 'Basic Og==' }]) {
      expect(problemOf(await receive(delivery, headers, [nothing]))).toMatchObject({
        status: 401,
        code: 'webhook_signature_invalid',
      });
    }
    expect(
      problemOf(await receive(delivery, token('tok-7f3a9c'), [{ provider: 'mailgun', signingKey: 'tok-7f3a9c' }])),
    ).toMatchObject({
      code: 'webhook_signature_invalid',
    });
  });

  it('answers 400 for a body that is not a record, or a bounce without an ID', async () => {
    const malformed = { status: 400, code: 'webhook_body_malformed' };
    for (const body of ['{"RecordType":', 'not json', '[]', '{}', '{"RecordType":7}']) {
      expect(problemOf(await authorized(body))).toMatchObject(malformed);
    }
    const { ID: _id, ...withoutId } = hard;
    expect(problemOf(await authorized(withoutId))).toMatchObject(malformed);
    expect(problemOf(await authorized({ ...complaint, ID: 'forty-two' }))).toMatchObject(malformed);
  });

  it('checks credentials before reading the body', async () => {
    expect(problemOf(await receive('not json', basic('hook', 'wrong')))).toMatchObject({
      status: 401,
      code: 'webhook_signature_invalid',
    });
  });

  it('never throws on hostile bodies sent with the right credentials', async () => {
    const adapter = createPostmarkAdapter();
    const record = fc.record(
      {
        RecordType: fc.oneof(
          fc.constantFrom('Delivery', 'Bounce', 'SpamComplaint', 'Open', 'SubscriptionChange'),
          fc.anything(),
        ),
        ID: fc.oneof(fc.integer(), fc.double(), fc.anything()),
        Type: fc.oneof(
          fc.constantFrom('HardBounce', 'SoftBounce', 'Transient', 'DnsError', 'AutoResponder', 'SpamComplaint'),
          fc.anything(),
        ),
        MessageID: fc.anything(),
        Recipient: fc.anything(),
        Email: fc.anything(),
        Metadata: fc.anything(),
        DeliveredAt: fc.oneof(
          fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
          fc.anything(),
        ),
        BouncedAt: fc.anything(),
        Details: fc.anything(),
        Description: fc.anything(),
      },
      { requiredKeys: [] },
    );
    const body = fc.oneof(
      record.map((value) => Buffer.from(JSON.stringify(value))),
      fc.jsonValue().map((value) => Buffer.from(JSON.stringify(value) ?? 'null')),
      fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
    );
    const headers = { ...basic('both', 'pw-both'), ...token('tok-both') };
    await checkProperty('Postmark bodies with credentials', 300, body, async (bytes) => {
      const reading = await adapter.receive(
        { body: bytes, header: (name) => headers[name.toLowerCase()] },
        [BOTH],
        NOW,
      );
      if (!reading.ok) expect(reading.problem).toMatchObject({ status: 400, code: 'webhook_body_malformed' });
      else for (const event of reading.events) expect(event.provider).toBe('postmark');
    });
  });
});
