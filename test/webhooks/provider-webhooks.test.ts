/**
 * Provider webhooks end to end: a daemon relays through four accounts, one per
 * provider, to a real SMTP sink that answers `250 Ok <provider id>` as a provider's relay
 * does; then each provider's real-shaped events, signed with keys made here (SES through a
 * local SNS-like HTTPS peer), are POSTed to /webhooks/{provider}/{tenant}. Each must reach
 * the message, the client's report, the JetStream mirror (events and the latest-state KV) and
 * the suppression list; a replay, a bad signature and an unknown message change nothing.
 */
import { createHmac, generateKeyPairSync, randomBytes, randomUUID, sign } from 'node:crypto';
import fc from 'fast-check';
import { connect } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { message } from '../helpers/queue-fixture.js';
import { startReportScenario, type ReportScenario } from '../helpers/report-fixture.js';
import { readStream, startNatsServer, type NatsPeer } from '../peers/nats-server.js';
import { startSnsPublisher, type SnsPublisher } from '../peers/sns-publisher.js';

const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:ses-events';
const MAILGUN_KEY = randomBytes(24).toString('hex');
const sendgrid = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const SENDGRID_KEY = sendgrid.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
const POSTMARK = {
  username: 'postmark',
  password: randomBytes(12).toString('hex'),
  token: randomBytes(12).toString('hex'),
};
const PROVIDERS = ['ses', 'sendgrid', 'mailgun', 'postmark'] as const;
type Provider = (typeof PROVIDERS)[number];
const OUTCOMES = ['delivered', 'hard', 'soft', 'complaint', 'dropped'] as const;
type Outcome = (typeof OUTCOMES)[number];

/** The id the sink's 250 names for the message with this X-Genro-Mail-ID, as SES names its own ids. */
const providerIdOf = (mailId: string): string => `0100018c${Buffer.from(mailId).toString('hex')}-000000`;
const recipientOf = (provider: Provider, outcome: Outcome): string => `${outcome}-${provider}@example.net`;
const idOf = (provider: Provider, outcome: Outcome): string => `${provider}-${outcome}`;
const seconds = (): number => Math.floor(Date.now() / 1000);

/** Each provider's event for one outcome, as its documentation shows it, tied back by what that provider echoes. */
function sesEvent(outcome: Outcome, providerId: string, recipient: string): unknown {
  const mail = {
    timestamp: new Date().toISOString(),
    messageId: providerId,
    source: 'sender@example.com',
    destination: [recipient],
  };
  switch (outcome) {
    case 'delivered':
      return {
        notificationType: 'Delivery',
        mail,
        delivery: { timestamp: new Date().toISOString(), recipients: [recipient], smtpResponse: '250 2.0.0 OK' },
      };
    case 'hard':
    case 'soft':
      return {
        notificationType: 'Bounce',
        mail,
        bounce: {
          bounceType: outcome === 'hard' ? 'Permanent' : 'Transient',
          bounceSubType: outcome === 'hard' ? 'General' : 'MailboxFull',
          timestamp: new Date().toISOString(),
          feedbackId: randomUUID(),
          bouncedRecipients: [
            {
              emailAddress: recipient,
              action: 'failed',
              status: outcome === 'hard' ? '5.1.1' : '4.2.2',
              diagnosticCode: outcome === 'hard' ? 'smtp; 550 5.1.1 user unknown' : 'smtp; 452 4.2.2 mailbox full',
            },
          ],
        },
      };
    case 'complaint':
      return {
        notificationType: 'Complaint',
        mail,
        complaint: {
          timestamp: new Date().toISOString(),
          complaintFeedbackType: 'abuse',
          complainedRecipients: [{ emailAddress: recipient }],
          feedbackId: randomUUID(),
        },
      };
    case 'dropped':
      return { eventType: 'Reject', mail, reject: { reason: 'Bad content' } };
  }
}

function sendgridEvent(outcome: Outcome, mailId: string, recipient: string): Record<string, unknown> {
  const base = {
    email: recipient,
    timestamp: seconds(),
    sg_event_id: randomUUID(),
    sg_message_id: `x${randomUUID()}.filter0001`,
    genro_mail_id: mailId,
  };
  switch (outcome) {
    case 'delivered':
      return { ...base, event: 'delivered', response: '250 OK' };
    case 'hard':
      return {
        ...base,
        event: 'bounce',
        type: 'bounce',
        status: '5.1.1',
        reason: '550 5.1.1 The email account does not exist',
      };
    case 'soft':
      return { ...base, event: 'deferred', response: '452 4.2.2 mailbox full', attempt: '1' };
    case 'complaint':
      return { ...base, event: 'spamreport' };
    case 'dropped':
      return { ...base, event: 'dropped', reason: 'Bounced Address' };
  }
}

function mailgunEvent(outcome: Outcome, mailId: string, recipient: string): Record<string, unknown> {
  const base = {
    id: randomUUID(),
    timestamp: Date.now() / 1000,
    recipient,
    'user-variables': { genro_mail_id: mailId },
    message: { headers: { 'message-id': `${mailId}@example.com` } },
  };
  switch (outcome) {
    case 'delivered':
      return { ...base, event: 'delivered', 'delivery-status': { code: 250, message: 'OK' } };
    case 'hard':
      return {
        ...base,
        event: 'failed',
        severity: 'permanent',
        reason: 'bounce',
        'delivery-status': { code: 550, 'enhanced-code': '5.1.1', message: 'No such user' },
      };
    case 'soft':
      return {
        ...base,
        event: 'failed',
        severity: 'temporary',
        reason: 'generic',
        'delivery-status': { code: 452, 'enhanced-code': '4.2.2', message: 'Mailbox full' },
      };
    case 'complaint':
      return { ...base, event: 'complained' };
    case 'dropped':
      return {
        ...base,
        event: 'failed',
        severity: 'permanent',
        reason: 'suppress-bounce',
        'delivery-status': { message: 'Not delivering to previously bounced address' },
      };
  }
}

function postmarkRecord(outcome: Outcome, mailId: string, recipient: string): Record<string, unknown> {
  const base = { MessageID: randomUUID(), MessageStream: 'outbound', Metadata: { genro_mail_id: mailId } };
  const bounce = (type: string, typeCode: number, details: string) => ({
    ...base,
    RecordType: 'Bounce',
    ID: Math.floor(Math.random() * 1e9),
    Type: type,
    TypeCode: typeCode,
    Email: recipient,
    BouncedAt: new Date().toISOString(),
    Details: details,
  });
  switch (outcome) {
    case 'delivered':
      return {
        ...base,
        RecordType: 'Delivery',
        Recipient: recipient,
        DeliveredAt: new Date().toISOString(),
        Details: 'smtp;250 2.0.0 OK',
      };
    case 'hard':
      return bounce('HardBounce', 1, 'smtp;550 5.1.1 The email account that you tried to reach does not exist');
    case 'soft':
      return bounce('SoftBounce', 4096, 'smtp;452 4.2.2 mailbox full');
    case 'complaint':
      return { ...bounce('SpamComplaint', 100001, ''), RecordType: 'SpamComplaint' };
    case 'dropped':
      // Postmark has no drop event: its record of a suppressed recipient is a SubscriptionChange, which changes nothing here.
      return {
        ...base,
        RecordType: 'SubscriptionChange',
        Recipient: recipient,
        SuppressSending: true,
        SuppressionReason: 'HardBounce',
        ChangedAt: new Date().toISOString(),
      };
  }
}

describe('provider webhooks, end to end', () => {
  const cleanups: Array<() => Promise<void>> = [];
  let nats: NatsPeer;
  let sns: SnsPublisher;
  let s: ReportScenario;

  const post = async (provider: string, body: Buffer, headers: Record<string, string> = {}) => {
    const response = await fetch(`${s.fx.t.url}/webhooks/${provider}/acme`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', ...headers },
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  /** What a provider event changes on a message (its report's acknowledgement moves on its own). */
  const effectsOn = async (id: string) => {
    const { message: detail, events } = await s.fx.detail('acme', id);
    const { provider_state, provider_state_ts, bounce_type, bounce_code, bounce_ts, complaint_ts } = detail;
    const changes = events.map((event: any) => event.event_type).filter((type: string) => type !== 'reported');
    return { provider_state, provider_state_ts, bounce_type, bounce_code, bounce_ts, complaint_ts, events: changes };
  };

  /** A signed request as each provider sends it: kept, so that it can be sent again (a provider's redelivery). */
  type SignedRequest = { provider: Provider; body: Buffer; headers: Record<string, string> };
  const send = (request: SignedRequest) => post(request.provider, request.body, request.headers);
  /** `target`: the message it is about, by its outcome in this test (default the event's own). */
  const signedRequest: Record<Provider, (outcome: Outcome, target?: Outcome) => SignedRequest> = {
    ses: (outcome, target = outcome) => {
      const body = sns.notification(
        TOPIC,
        sesEvent(outcome, providerIdOf(idOf('ses', target)), recipientOf('ses', target)),
      );
      return {
        provider: 'ses',
        body: Buffer.from(JSON.stringify(body)),
        headers: { 'content-type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': 'Notification' },
      };
    },
    sendgrid: (outcome, target = outcome) => {
      const body = Buffer.from(
        JSON.stringify([sendgridEvent(outcome, idOf('sendgrid', target), recipientOf('sendgrid', target))]),
      );
      const timestamp = String(seconds());
      const signature = sign('sha256', Buffer.concat([Buffer.from(timestamp), body]), sendgrid.privateKey).toString(
        'base64',
      );
      return {
        provider: 'sendgrid',
        body,
        headers: {
          'X-Twilio-Email-Event-Webhook-Signature': signature,
          'X-Twilio-Email-Event-Webhook-Timestamp': timestamp,
        },
      };
    },
    mailgun: (outcome, target = outcome) =>
      mailgunRequest(mailgunEvent(outcome, idOf('mailgun', target), recipientOf('mailgun', target))),
    postmark: (outcome, target = outcome) => {
      const body = Buffer.from(
        JSON.stringify(postmarkRecord(outcome, idOf('postmark', target), recipientOf('postmark', target))),
      );
      const basic = Buffer.from(`${POSTMARK.username}:${POSTMARK.password}`).toString('base64');
      return {
        provider: 'postmark',
        body,
        headers: { authorization: `Basic ${basic}`, 'X-Webhook-Token': POSTMARK.token },
      };
    },
  };
  const deliver = (provider: Provider, outcome: Outcome) => send(signedRequest[provider](outcome));
  const mailgunRequest = (eventData: Record<string, unknown>, key = MAILGUN_KEY): SignedRequest => {
    const timestamp = String(seconds());
    const token = randomBytes(25).toString('hex');
    const signature = createHmac('sha256', key)
      .update(timestamp + token)
      .digest('hex');
    return {
      provider: 'mailgun',
      body: Buffer.from(JSON.stringify({ signature: { timestamp, token, signature }, 'event-data': eventData })),
      headers: {},
    };
  };
  const mailgunPost = (eventData: Record<string, unknown>, key = MAILGUN_KEY) => send(mailgunRequest(eventData, key));

  beforeAll(async () => {
    nats = await startNatsServer();
    sns = await startSnsPublisher();
    cleanups.push(
      () => nats.destroy(),
      () => sns.stop(),
    );
    s = await startReportScenario(cleanups, {
      env: {
        MAILPROXY_NATS_URL: nats.url,
        MAILPROXY_WEBHOOKS_SNS_CERTIFICATE_HOST: sns.hostPattern,
        MAILPROXY_WEBHOOKS_SNS_CA_FILE: sns.caFile,
      },
      sink: {
        acceptText: (raw) =>
          `Ok ${providerIdOf(/^X-Genro-Mail-ID: (\S+)/im.exec(raw.toString('latin1'))?.[1] ?? 'none')}`,
      },
    });
    const { key } = await s.addTenant('acme', '/acme');
    const settings: Record<Provider, Record<string, unknown>> = {
      ses: { name: 'ses', topic_arns: [TOPIC] },
      sendgrid: { name: 'sendgrid', public_key: SENDGRID_KEY },
      mailgun: { name: 'mailgun', signing_key: MAILGUN_KEY },
      postmark: { name: 'postmark', ...POSTMARK },
    };
    for (const provider of PROVIDERS)
      await s.fx.createAccount('acme', provider, s.sink, { provider: settings[provider] });
    await s.fx.post(
      key,
      PROVIDERS.flatMap((provider) =>
        OUTCOMES.map((outcome) =>
          message(idOf(provider, outcome), { account_id: provider, to: recipientOf(provider, outcome) }),
        ),
      ),
    );
    // Reported as sent: committed, with the provider id its 250 named.
    await s.client.waitFor(
      'every message sent',
      (client) =>
        client.items('/acme').filter((item) => item.event === 'sent').length >= PROVIDERS.length * OUTCOMES.length,
    );
  }, 60_000);
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('relays with each provider the header that has it echo our X-Genro-Mail-ID, and keeps the id its 250 named', async () => {
    const raw = (id: string) =>
      s.sink.messages
        .find((sent) => sent.raw.toString('latin1').includes(`X-Genro-Mail-ID: ${id}`))
        ?.raw.toString('latin1') ?? '';
    expect(raw('ses-hard')).toMatch(/^X-SES-MESSAGE-TAGS: genro_mail_id=ses-hard\r\n/);
    expect(raw('sendgrid-hard')).toMatch(/^X-SMTPAPI: \{"unique_args":\{"genro_mail_id":"sendgrid-hard"\}\}\r\n/);
    expect(raw('mailgun-hard')).toMatch(/^X-Mailgun-Variables: \{"genro_mail_id":"mailgun-hard"\}\r\n/);
    expect(raw('postmark-hard')).toMatch(/^X-PM-Metadata-genro_mail_id: postmark-hard\r\n/);
    expect((await s.fx.detail('acme', 'ses-hard')).message.provider_message_id).toBe(providerIdOf('ses-hard'));
  });

  it('applies every provider outcome once: on the message, in the report, on the stream and in suppressions', async () => {
    const expected: Record<Outcome, string | null> = {
      delivered: 'delivered',
      hard: 'bounced',
      soft: 'soft_bounced',
      complaint: 'complaint',
      dropped: 'dropped',
    };
    for (const provider of PROVIDERS) {
      for (const outcome of OUTCOMES) {
        const answer = await deliver(provider, outcome);
        expect(answer, `${provider} ${outcome}`).toMatchObject({ status: 200, body: { ok: true } });
        const applies = !(provider === 'postmark' && outcome === 'dropped');
        expect(answer.body.applied, `${provider} ${outcome}`).toBe(applies ? 1 : 0);
        const { message: detail } = await s.fx.detail('acme', idOf(provider, outcome));
        expect(detail.provider_state, `${provider} ${outcome}`).toBe(applies ? expected[outcome] : null);
        if (outcome === 'hard' || outcome === 'soft') expect(detail.bounce_type).toBe(outcome);
        if (outcome === 'complaint') expect(detail.complaint_ts).not.toBeNull();
      }
    }
    // The client hears of each: bounces and complaints as the bounce mailbox's, deliveries and drops as provider items.
    await s.client.waitFor(
      'every provider outcome reported',
      (client) => client.items('/acme').filter((item) => item.event !== 'sent').length >= 19,
    );
    const items = s.client.items('/acme');
    const item = (id: string, event: string) =>
      items.find((candidate) => candidate.id === id && candidate.event === event);
    for (const provider of PROVIDERS) {
      expect(item(idOf(provider, 'hard'), 'bounced')).toMatchObject({
        bounce_type: 'hard',
        bounce_recipient: recipientOf(provider, 'hard'),
      });
      expect(item(idOf(provider, 'soft'), 'bounced')).toMatchObject({ bounce_type: 'soft' });
      expect(item(idOf(provider, 'complaint'), 'complained')).toMatchObject({
        complaint_recipient: recipientOf(provider, 'complaint'),
      });
      expect(item(idOf(provider, 'delivered'), 'delivered')).toMatchObject({
        provider,
        provider_recipient: recipientOf(provider, 'delivered'),
      });
    }
    for (const provider of ['ses', 'sendgrid', 'mailgun'] as const)
      expect(item(idOf(provider, 'dropped'), 'dropped')).toMatchObject({ provider });
    // Hard bounces and complaints are suppressed, soft bounces are not.
    const suppressed = (await s.fx.admin('GET', '/suppressions?tenant_id=acme&limit=100')).body.suppressions.map(
      (entry: any) => entry.address,
    );
    for (const provider of PROVIDERS) {
      expect(suppressed).toContain(recipientOf(provider, 'hard'));
      expect(suppressed).toContain(recipientOf(provider, 'complaint'));
      expect(suppressed).not.toContain(recipientOf(provider, 'soft'));
    }
    // The mirror: each event once on its subject, and the provider's latest state in the KV.
    await expect.poll(async () => (await s.fx.admin('GET', '/mirror/status')).body.mirror.backlog).toBe(0);
    const stream = await readStream(nats.url, 'MAILPROXY');
    const typesOf = (id: string) =>
      stream.filter((event) => event.body.message_id === id).map((event) => event.body.event_type);
    expect(typesOf('mailgun-delivered')).toContain('message.delivered');
    expect(typesOf('ses-dropped')).toContain('message.dropped');
    expect(
      stream.find((event) => event.body.message_id === 'sendgrid-hard' && event.body.event_type === 'message.bounced')
        ?.body.data,
    ).toMatchObject({
      source: 'webhook',
      provider: 'sendgrid',
      bounce_type: 'hard',
    });
    const nc = await connect({ servers: nats.url });
    try {
      const kv = await new Kvm(nc).create('mailproxy_latest');
      const { message: delivered } = await s.fx.detail('acme', 'postmark-delivered');
      expect((await kv.get(`acme.${delivered.pk}`))?.json()).toMatchObject({
        provider_state: 'delivered',
        provider_rank: 100,
      });
    } finally {
      await nc.close();
    }
  }, 60_000);

  it('applies a replayed event once, and a badly signed or unknown one not at all', async () => {
    const event = mailgunEvent('hard', 'mailgun-delivered', recipientOf('mailgun', 'delivered'));
    expect((await mailgunPost(event)).body).toMatchObject({ applied: 1, duplicates: 0 });
    expect((await mailgunPost(event)).body).toMatchObject({ applied: 0, duplicates: 1 });
    const bounced = (await s.fx.detail('acme', 'mailgun-delivered')).events.filter(
      (entry: any) => entry.event_type === 'bounced',
    );
    expect(bounced).toHaveLength(1);

    const before = await effectsOn('mailgun-soft');
    const forged = await mailgunPost(
      mailgunEvent('hard', 'mailgun-soft', recipientOf('mailgun', 'soft')),
      'not-the-key',
    );
    expect(forged).toMatchObject({
      status: 401,
      body: { error: { code: 'WEBHOOK_UNVERIFIED', details: { reason: 'webhook_signature_invalid' } } },
    });
    expect(await effectsOn('mailgun-soft')).toEqual(before);

    expect((await mailgunPost(mailgunEvent('hard', 'no-such-message', 'x@example.net'))).body).toMatchObject({
      applied: 0,
      unmatched: 1,
    });
    const stranger = await post('mailgun', Buffer.from('{}'));
    expect(stranger.status).toBe(401);
    const otherTenant = await fetch(`${s.fx.t.url}/webhooks/mailgun/nobody`, { method: 'POST', body: '{}' });
    expect(otherTenant.status).toBe(401);
    const unknownProvider = (await (
      await fetch(`${s.fx.t.url}/webhooks/other/acme`, { method: 'POST', body: '{}' })
    ).json()) as { error: { code: string } };
    expect(unknownProvider.error.code).toBe('NOT_FOUND');
    const metrics = (await s.fx.admin('GET', '/metrics')).text;
    expect(metrics).toMatch(
      /mailproxy_webhook_requests_total\{provider="mailgun",result="webhook_signature_invalid"\} [1-9]/,
    );
    expect(metrics).toMatch(/mailproxy_webhook_events_total\{provider="mailgun",outcome="duplicates"\} [1-9]/);
  });

  it("applies each provider's redelivered request once, and refuses its body changed after signing", async () => {
    for (const provider of PROVIDERS) {
      // A new hard bounce of the dropped message: news the first time, a duplicate when delivered again.
      const target = idOf(provider, 'dropped');
      const aimed = signedRequest[provider]('hard', 'dropped');
      expect((await send(aimed)).body, `${provider} first delivery`).toMatchObject({ applied: 1 });
      const before = await effectsOn(target);
      expect((await send(aimed)).body, `${provider} redelivered`).toMatchObject({ applied: 0, duplicates: 1 });
      // The same signature over another body: SNS and SendGrid sign the body; Mailgun signs a token, which may not come again
      // with another body. Postmark signs nothing: its credentials are all there is (README).
      if (provider !== 'postmark') {
        const soft = idOf(provider, 'soft');
        const text = aimed.body.toString('utf8');
        const tampered = {
          ...aimed,
          body: Buffer.from(text.replaceAll(target, soft).replaceAll(providerIdOf(target), providerIdOf(soft))),
        };
        expect(tampered.body.toString('utf8')).not.toBe(text);
        expect((await send(tampered)).status, `${provider} tampered`).toBe(401);
      }
      expect(await effectsOn(target), provider).toEqual(before);
      expect((await s.fx.detail('acme', idOf(provider, 'soft'))).message.bounce_type, provider).toBe('soft');
    }
  });

  it('answers hostile bodies with 400 or 401, whatever the provider, and changes nothing (fast-check)', async () => {
    const snapshot = async () => Promise.all(PROVIDERS.map((provider) => effectsOn(idOf(provider, 'soft'))));
    const before = await snapshot();
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...PROVIDERS),
        fc.oneof(
          fc.uint8Array({ maxLength: 2048 }).map((bytes) => Buffer.from(bytes)),
          fc.jsonValue().map((value) => Buffer.from(JSON.stringify(value) ?? 'null')),
        ),
        fc.boolean(),
        async (provider, body, withCredentials) => {
          // With the provider's credential headers where it has fixed ones (Postmark's): the body alone must not get through.
          const headers = withCredentials ? signedRequest.postmark('soft').headers : {};
          const answer = await send({ provider, body, headers });
          statuses.add(answer.status);
          expect([400, 401]).toContain(answer.status);
        },
      ),
      { numRuns: 150 },
    );
    expect(await snapshot()).toEqual(before);
    expect((await fetch(`${s.fx.t.url}/health`)).status).toBe(200);
    expect([...statuses].sort()).toEqual(expect.arrayContaining([401]));
  });

  it('confirms an SES subscription through SNS, and only a verified one', async () => {
    const confirmation = sns.confirmation(TOPIC);
    const answer = await post('ses', Buffer.from(JSON.stringify(confirmation)));
    expect(answer).toMatchObject({ status: 200, body: { confirmed: true } });
    expect(sns.confirmations.get(confirmation.Token ?? '')).toBe(1);
    const other = sns.confirmation('arn:aws:sns:eu-west-1:123456789012:someone-else');
    expect((await post('ses', Buffer.from(JSON.stringify(other)))).body.error.details.reason).toBe(
      'webhook_topic_refused',
    );
    expect(sns.confirmations.get(other.Token ?? '')).toBeUndefined();
    // SNS's side failing: 503, so that SNS sends the confirmation again.
    const failing = await post('ses', Buffer.from(JSON.stringify(sns.confirmation(TOPIC, true))));
    expect(failing).toMatchObject({
      status: 503,
      body: { error: { details: { reason: 'webhook_confirmation_failed' } } },
    });
  });

  it("shows the provider's side in the console: the account's provider, the message's provider state and id", async () => {
    const url = s.fx.t.url;
    const login = await fetch(`${url}/ui/sign-in`, {
      method: 'POST',
      body: new URLSearchParams({ token: s.fx.t.adminToken }),
      redirect: 'manual',
    });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const page = async (path: string) => (await fetch(`${url}${path}`, { headers: { cookie } })).text();
    const message = await page('/ui/messages/acme/ses-delivered');
    expect(message).toContain('Provider says');
    expect(message).toMatch(/delivered at \d{4}-\d\d-\d\d/);
    expect(message).toContain(providerIdOf('ses-delivered'));
    expect(await page('/ui/overview')).toMatch(
      /<span class="badge" title="its provider reports [^"]*\/webhooks\/postmark\/acme">postmark<\/span>/,
    );
  });

  it('matches a message by the provider id alone, the id its relay named in the 250 reply', async () => {
    const { message: detail } = await s.fx.detail('acme', 'ses-delivered');
    // The SES events above named nothing but mail.messageId: the id the sink's `250 Ok <id>` gave.
    expect(detail).toMatchObject({ provider_message_id: providerIdOf('ses-delivered'), provider_state: 'delivered' });
  });
});
