import { describe, expect, it } from 'vitest';
import type { BouncePolicy } from '../bounce/plan.js';
import type { MessageCandidate } from '../bounce/bounce.js';
import type { ProviderEvent } from './events.js';
import { correlateProviderEvent, planProviderEvent, type ProviderMatchedBy } from './plan.js';

const NOW = 1_800_000_000_000;
const AT = 1_799_999_990_000;
const policy: BouncePolicy = { suppressHardBounces: true, suppressComplaints: true, suppressionTtlMs: null };
const off: BouncePolicy = { suppressHardBounces: false, suppressComplaints: false, suppressionTtlMs: null };

const event = (extra: Partial<ProviderEvent> = {}): ProviderEvent => ({
  provider: 'mailgun',
  eventId: 'ev-1',
  kind: 'bounced',
  bounceType: 'hard',
  recipient: 'Ann@Example.NET',
  providerMessageId: 'pm-1',
  mailId: 'inv-1',
  messageIdHeader: '<inv-1@acme.example>',
  at: AT,
  status: '5.1.1',
  reason: '550 5.1.1 The email account that you tried to reach does not exist.',
  feedbackType: null,
  ...extra,
});
const candidate = (rcptTo: string[], tenantId = 'acme', pk = 1): MessageCandidate => ({
  tenantId,
  pk,
  id: 'inv-1',
  rcptTo,
});
const source = { source: 'webhook', provider: 'mailgun', provider_event_id: 'ev-1', matched_by: 'mail_id' };

describe('correlateProviderEvent', () => {
  const table = (entries: Record<string, MessageCandidate[]>) => {
    const calls: string[] = [];
    const lookup = (by: ProviderMatchedBy, value: string) => {
      calls.push(`${by}=${value}`);
      return entries[`${by}=${value}`] ?? [];
    };
    return { calls, lookup };
  };

  it('looks up mail_id, then provider_message_id, then message_id', () => {
    const { calls, lookup } = table({});
    expect(correlateProviderEvent(event(), lookup)).toEqual({ matched: false, reason: 'not_found' });
    expect(calls).toEqual(['mail_id=inv-1', 'provider_message_id=pm-1', 'message_id=<inv-1@acme.example>']);
  });

  it('stops at the strongest reference that matches', () => {
    const byMailId = candidate(['ann@example.net'], 'acme', 1);
    const byProviderId = candidate(['ann@example.net'], 'acme', 2);
    const { calls, lookup } = table({ 'mail_id=inv-1': [byMailId], 'provider_message_id=pm-1': [byProviderId] });
    expect(correlateProviderEvent(event(), lookup)).toEqual({ matched: true, candidate: byMailId, by: 'mail_id' });
    expect(calls).toEqual(['mail_id=inv-1']);
  });

  it('falls through to the provider id, then to the Message-ID', () => {
    const found = candidate(['ann@example.net'], 'acme', 2);
    const byProvider = table({ 'provider_message_id=pm-1': [found] });
    expect(correlateProviderEvent(event(), byProvider.lookup)).toEqual({
      matched: true,
      candidate: found,
      by: 'provider_message_id',
    });
    const byHeader = table({ 'message_id=<m@x>': [found] });
    const onlyHeader = event({ mailId: null, providerMessageId: null, messageIdHeader: '<m@x>' });
    expect(correlateProviderEvent(onlyHeader, byHeader.lookup)).toEqual({
      matched: true,
      candidate: found,
      by: 'message_id',
    });
    expect(byHeader.calls).toEqual(['message_id=<m@x>']);
  });

  it('resolves an ambiguous lookup by the recipient, else stays ambiguous', () => {
    const ours = candidate(['ann@example.net', 'bob@example.net'], 'acme', 1);
    const theirs = candidate(['carl@example.net'], 'other', 2);
    const { lookup } = table({ 'mail_id=inv-1': [theirs, ours] });
    expect(correlateProviderEvent(event(), lookup)).toEqual({ matched: true, candidate: ours, by: 'mail_id' });
    const stranger = event({ recipient: 'dora@example.net', providerMessageId: null, messageIdHeader: null });
    expect(correlateProviderEvent(stranger, lookup)).toEqual({ matched: false, reason: 'ambiguous' });
  });

  it('answers no_reference without any lookup when the event names nothing', () => {
    const { calls, lookup } = table({});
    expect(
      correlateProviderEvent(event({ mailId: null, providerMessageId: null, messageIdHeader: null }), lookup),
    ).toEqual({
      matched: false,
      reason: 'no_reference',
    });
    expect(calls).toEqual([]);
  });
});

describe('planProviderEvent', () => {
  it("records a recipient's one-click unsubscribe on the message, leaving its provider state and suppression alone", () => {
    const plan = planProviderEvent(
      event({
        provider: 'one_click',
        eventId: 'unsubscribe:inv-1',
        kind: 'unsubscribed',
        bounceType: null,
        list: 'weekly',
      }),
      candidate(['ann@example.net']),
      'mail_id',
      policy,
      NOW,
    );
    expect(plan.state).toBeNull();
    expect(plan.suppression).toBeNull();
    expect(plan.bounce).toBeNull();
    expect(plan.event).toEqual({
      type: 'unsubscribed',
      text: 'the recipient unsubscribed by its one-click link',
      data: { recipient: 'ann@example.net', list: 'weekly', source: 'one_click' },
    });
  });

  it("suppresses the recipient who used a provider's own unsubscribe link, for good", () => {
    const withTtl: BouncePolicy = { ...policy, suppressionTtlMs: 86_400_000 };
    const plan = planProviderEvent(
      event({ kind: 'unsubscribed', bounceType: null }),
      candidate(['ann@example.net']),
      'mail_id',
      withTtl,
      NOW,
    );
    expect(plan.state).toBeNull();
    expect(plan.event?.text).toBe("the recipient unsubscribed by mailgun's link");
    expect(plan.suppression).toEqual({
      tenantId: 'acme',
      address: 'ann@example.net',
      reason: 'unsubscribed via mailgun',
      source: 'unsubscribe',
      createdAt: NOW,
      expiresAt: null,
    });
  });

  it('records a hard bounce and suppresses our recipient, normalized', () => {
    const plan = planProviderEvent(event(), candidate(['ann@example.net', 'bob@example.net']), 'mail_id', policy, NOW);
    expect(plan.state).toEqual({ state: 'bounced', rank: 100, at: AT });
    expect(plan.bounce).toEqual({
      tenantId: 'acme',
      clientId: 'inv-1',
      type: 'hard',
      code: '550',
      reason: '550 5.1.1 The email account that you tried to reach does not exist.',
      recipient: 'ann@example.net',
      at: AT,
      details: { enhanced_status: '5.1.1', reply_code: '550', category: 'user_unknown', ...source },
    });
    expect(plan.suppression).toEqual({
      tenantId: 'acme',
      address: 'ann@example.net',
      reason: '5.1.1 user_unknown',
      source: 'bounce',
      createdAt: NOW,
      expiresAt: null,
    });
    expect(plan.complaint).toBeNull();
    expect(plan.event).toBeNull();
  });

  it('takes the code from the enhanced status when no reply code is given, and the message’s only recipient', () => {
    const bounce = event({
      recipient: 'alias@elsewhere.example',
      status: '5.1.1',
      reason: 'The email account does not exist.',
    });
    const ttl = { ...policy, suppressionTtlMs: 86_400_000 };
    const plan = planProviderEvent(bounce, candidate(['Ann@Example.net']), 'provider_message_id', ttl, NOW);
    expect(plan.bounce).toMatchObject({
      code: '5.1.1',
      recipient: 'ann@example.net',
      details: { reply_code: null, matched_by: 'provider_message_id' },
    });
    expect(plan.suppression).toMatchObject({ address: 'ann@example.net', expiresAt: NOW + 86_400_000 });
  });

  it('finds the status inside the reason when the provider gives none apart', () => {
    const plan = planProviderEvent(
      event({ status: null, reason: 'smtp;552 5.2.2 mailbox full' }),
      candidate(['ann@example.net']),
      'mail_id',
      policy,
      NOW,
    );
    expect(plan.bounce).toMatchObject({
      code: '552',
      details: { enhanced_status: '5.2.2', reply_code: '552', category: 'mailbox_full' },
    });
    expect(plan.suppression?.reason).toBe('5.2.2 mailbox_full');
  });

  it('suppresses nothing for a hard bounce when the policy is off', () => {
    const plan = planProviderEvent(event(), candidate(['ann@example.net']), 'mail_id', off, NOW);
    expect(plan.bounce?.type).toBe('hard');
    expect(plan.suppression).toBeNull();
  });

  it('records a soft bounce without suppression, ranked below a delivery', () => {
    const soft = event({
      bounceType: 'soft',
      status: '452',
      reason: '4.2.2 The email account that you tried to reach is over quota.',
    });
    const plan = planProviderEvent(soft, candidate(['ann@example.net']), 'mail_id', policy, NOW);
    expect(plan.bounce).toMatchObject({
      type: 'soft',
      code: '452',
      recipient: 'ann@example.net',
      details: { enhanced_status: '4.2.2', category: 'mailbox_full' },
    });
    expect(plan.suppression).toBeNull();
    expect(plan.state).toEqual({ state: 'soft_bounced', rank: 50, at: AT });
    const delivered = planProviderEvent(
      event({ kind: 'delivered', bounceType: null }),
      candidate(['ann@example.net']),
      'mail_id',
      policy,
      NOW,
    );
    expect(plan.state?.rank).toBeLessThan(delivered.state?.rank ?? 0);
  });

  it('records a complaint and suppresses its recipient when the policy says so', () => {
    const complaint = event({ kind: 'complaint', bounceType: null, status: null, reason: null, feedbackType: 'abuse' });
    const plan = planProviderEvent(complaint, candidate(['ann@example.net']), 'mail_id', policy, NOW);
    expect(plan.complaint).toEqual({
      tenantId: 'acme',
      clientId: 'inv-1',
      feedbackType: 'abuse',
      recipient: 'ann@example.net',
      at: AT,
      details: source,
    });
    expect(plan.suppression).toEqual({
      tenantId: 'acme',
      address: 'ann@example.net',
      reason: 'complaint: abuse',
      source: 'complaint',
      createdAt: NOW,
      expiresAt: null,
    });
    expect(plan.state).toEqual({ state: 'complaint', rank: 100, at: AT });
    expect(plan.bounce).toBeNull();
    expect(planProviderEvent(complaint, candidate(['ann@example.net']), 'mail_id', off, NOW).suppression).toBeNull();
  });

  it('gives delivered, dropped and accepted a timeline event naming the provider', () => {
    const cases = [
      ['delivered', 'delivered', 100],
      ['dropped', 'dropped', 100],
      ['accepted', 'provider_accepted', 10],
    ] as const;
    for (const [kind, type, rank] of cases) {
      const plan = planProviderEvent(
        event({ kind, bounceType: null, status: '250', reason: null, provider: 'postmark' }),
        candidate(['ann@example.net']),
        'message_id',
        policy,
        NOW,
      );
      expect(plan.event).toEqual({
        type,
        text: `postmark: ${kind}`,
        data: {
          recipient: 'ann@example.net',
          enhanced_status: null,
          reply_code: '250',
          reason: null,
          source: 'webhook',
          provider: 'postmark',
          provider_event_id: 'ev-1',
          matched_by: 'message_id',
        },
      });
      expect(plan.state).toEqual({ state: kind, rank, at: AT });
      expect([plan.bounce, plan.complaint, plan.suppression]).toEqual([null, null, null]);
    }
    const dropped = planProviderEvent(
      event({ kind: 'dropped', bounceType: null, reason: 'Bounced Address' }),
      candidate(['x@y.example']),
      'mail_id',
      policy,
      NOW,
    );
    expect(dropped.event?.text).toBe('Bounced Address');
  });

  it('suppresses no one when the event names no recipient and the message has several', () => {
    const plan = planProviderEvent(
      event({ recipient: null }),
      candidate(['ann@example.net', 'bob@example.net']),
      'mail_id',
      policy,
      NOW,
    );
    expect(plan.bounce?.recipient).toBeNull();
    expect(plan.suppression).toBeNull();
  });

  it('suppresses no one when the named recipient is none of the message’s several (a forwarded address)', () => {
    const plan = planProviderEvent(
      event({ recipient: 'Elsewhere@Example.org' }),
      candidate(['ann@example.net', 'bob@example.net']),
      'mail_id',
      policy,
      NOW,
    );
    expect(plan.bounce?.recipient).toBe('elsewhere@example.org');
    expect(plan.suppression).toBeNull();
  });

  it('bounds the reason to 500 characters', () => {
    const long = `550 5.1.1 ${'x'.repeat(1000)}`;
    const plan = planProviderEvent(event({ reason: long }), candidate(['ann@example.net']), 'mail_id', policy, NOW);
    expect(plan.bounce?.reason).toHaveLength(500);
    expect(plan.bounce?.reason).toBe(`${long.slice(0, 499)}…`);
    const exact = 'y'.repeat(500);
    const delivered = planProviderEvent(
      event({ kind: 'delivered', bounceType: null, reason: exact }),
      candidate(['ann@example.net']),
      'mail_id',
      policy,
      NOW,
    );
    expect(delivered.event?.text).toBe(exact);
    expect(delivered.event?.data.reason).toBe(exact);
  });
});
