import { describe, expect, it } from 'vitest';
import type { BounceFindings, MessageCandidate, RecipientFinding } from './bounce.js';
import { correlate, planBounce, type BouncePolicy } from './plan.js';

const NOW = 1_800_000_000_000;
const policy: BouncePolicy = { suppressHardBounces: true, suppressComplaints: true, suppressionTtlMs: null };

const finding = (recipient: string | null, extra: Partial<RecipientFinding> = {}): RecipientFinding => ({
  recipient,
  action: 'failed',
  bounceType: 'hard',
  enhancedStatus: '5.1.1',
  replyCode: '550',
  reason: 'user_unknown',
  diagnostic: '550 5.1.1 user unknown',
  ...extra,
});
const findings = (extra: Partial<BounceFindings> = {}): BounceFindings => ({
  kind: 'bounce',
  recipients: [finding('ann@example.net')],
  mailId: 'inv-1',
  originalMessageId: '<inv-1@acme.example>',
  originalEnvelopeId: null,
  feedbackType: null,
  verpMessagePk: null,
  ...extra,
});
const candidate = (tenantId: string, rcptTo: string[], pk = 1): MessageCandidate => ({
  tenantId,
  pk,
  id: 'inv-1',
  rcptTo,
});

describe('correlate', () => {
  it('matches by X-Genro-Mail-ID first, then by Message-ID', () => {
    const acme = candidate('acme', ['ann@example.net']);
    expect(correlate(findings(), (by) => (by === 'mail_id' ? [acme] : []))).toEqual({
      matched: true,
      candidate: acme,
      by: 'mail_id',
    });
    expect(correlate(findings(), (by) => (by === 'message_id' ? [acme] : []))).toEqual({
      matched: true,
      candidate: acme,
      by: 'message_id',
    });
  });

  it('tells tenants sharing a client id apart by the bounced recipient, or calls it ambiguous', () => {
    const acme = candidate('acme', ['ann@example.net'], 1);
    const beta = candidate('beta', ['bob@example.net'], 2);
    expect(correlate(findings(), () => [acme, beta])).toMatchObject({ matched: true, candidate: { tenantId: 'acme' } });
    expect(correlate(findings({ recipients: [finding('ANN@Example.NET')] }), () => [beta, acme])).toMatchObject({
      matched: true,
      candidate: { tenantId: 'acme' },
    });
    expect(correlate(findings({ recipients: [finding('carl@example.net')] }), () => [acme, beta])).toEqual({
      matched: false,
      reason: 'ambiguous',
    });
  });

  it('falls back to the VERP address when the bounce quotes nothing of the original', () => {
    const acme = candidate('acme', ['ann@example.net'], 4711);
    const bare = findings({ mailId: null, originalMessageId: null, verpMessagePk: 4711 });
    expect(correlate(bare, (by, value) => (by === 'verp' && value === '4711' ? [acme] : []))).toEqual({
      matched: true,
      candidate: acme,
      by: 'verp',
    });
  });

  it('says why nothing matched', () => {
    expect(correlate(findings({ mailId: null, originalMessageId: null }), () => [])).toEqual({
      matched: false,
      reason: 'no_reference',
    });
    expect(correlate(findings(), () => [])).toEqual({ matched: false, reason: 'not_found' });
  });
});

describe('planBounce', () => {
  const acme = candidate('acme', ['ann@example.net', 'bob@example.net']);
  const matched = { matched: true as const, candidate: acme, by: 'mail_id' as const };

  it('records one bounce per recipient and suppresses the hard ones only', () => {
    const plan = planBounce(
      findings({
        recipients: [
          finding('ann@example.net'),
          finding('bob@example.net', {
            action: 'delayed',
            bounceType: 'soft',
            enhancedStatus: '4.2.2',
            replyCode: '452',
          }),
        ],
      }),
      matched,
      policy,
      NOW,
    );
    expect(plan.disposition).toBe('processed');
    expect(plan.bounces.map((bounce) => [bounce.recipient, bounce.type, bounce.code])).toEqual([
      ['ann@example.net', 'hard', '550'],
      ['bob@example.net', 'soft', '452'],
    ]);
    expect(plan.suppressions).toEqual([
      {
        tenantId: 'acme',
        address: 'ann@example.net',
        reason: '5.1.1 user_unknown',
        source: 'bounce',
        createdAt: NOW,
        expiresAt: null,
      },
    ]);
  });

  it('a delayed notice is soft whatever its status says, and suppresses nobody', () => {
    const plan = planBounce(
      findings({
        kind: 'delayed',
        recipients: [finding('ann@example.net', { action: 'delayed', bounceType: 'hard' })],
      }),
      matched,
      policy,
      NOW,
    );
    expect(plan.bounces.map((bounce) => bounce.type)).toEqual(['soft']);
    expect(plan.suppressions).toEqual([]);
  });

  it('maps a forwarded final recipient to the one address we sent to', () => {
    const single = { ...matched, candidate: candidate('acme', ['Ann@Example.net']) };
    const plan = planBounce(findings({ recipients: [finding('ann.smith@mail.example.org')] }), single, policy, NOW);
    expect(plan.bounces[0]?.recipient).toBe('ann@example.net');
    expect(plan.suppressions.map((suppression) => suppression.address)).toEqual(['ann@example.net']);
  });

  it("of a message with several recipients, takes the one of ours among the bounce's other addresses, never a forwarding target", () => {
    const forwarded = finding('ann.lee@forward.example.org', { alternates: ['ann@example.net'] });
    const plan = planBounce(findings({ recipients: [forwarded] }), matched, policy, NOW);
    expect(plan.bounces.map((bounce) => bounce.recipient)).toEqual(['ann@example.net']);
    expect(plan.suppressions.map((suppression) => suppression.address)).toEqual(['ann@example.net']);
    // Named the other way round (Original-Recipient ours, the final mailbox as the alternate): the same.
    const ours = finding('bob@example.net', { alternates: ['bob@forward.example.org'] });
    expect(
      planBounce(findings({ recipients: [ours] }), matched, policy, NOW).suppressions.map((entry) => entry.address),
    ).toEqual(['bob@example.net']);
  });

  it('of a message with several recipients, reads a host-qualified mailbox as ours and suppresses nobody for a mailbox we did not send to', () => {
    const qualified = planBounce(findings({ recipients: [finding('bob@store3.example.net')] }), matched, policy, NOW);
    expect(qualified.suppressions.map((suppression) => suppression.address)).toEqual(['bob@example.net']);
    const stranger = planBounce(
      findings({ recipients: [finding('ann.lee@forward.example.org')] }),
      matched,
      policy,
      NOW,
    );
    expect(stranger.bounces.map((bounce) => [bounce.recipient, bounce.type])).toEqual([[null, 'hard']]);
    expect(stranger.suppressions).toEqual([]);
  });

  it('tells tenants sharing a client id apart by an alternate address too', () => {
    const beta = candidate('beta', ['carl@example.net'], 2);
    const forwarded = findings({
      recipients: [finding('carl@forward.example.org', { alternates: ['carl@example.net'] })],
    });
    expect(correlate(forwarded, () => [acme, beta])).toMatchObject({ matched: true, candidate: { tenantId: 'beta' } });
  });

  it('a complaint suppresses its recipient and records no bounce; the TTL sets the expiry', () => {
    const single = { ...matched, candidate: candidate('acme', ['ann@example.net']) };
    const plan = planBounce(
      findings({ kind: 'complaint', recipients: [], feedbackType: 'abuse' }),
      single,
      { ...policy, suppressionTtlMs: 1000 },
      NOW,
    );
    expect(plan.bounces).toEqual([]);
    expect(plan.complaints).toMatchObject([
      { tenantId: 'acme', clientId: 'inv-1', feedbackType: 'abuse', recipient: 'ann@example.net' },
    ]);
    expect(plan.suppressions).toMatchObject([
      { address: 'ann@example.net', source: 'complaint', expiresAt: NOW + 1000 },
    ]);
  });

  it('honours a policy that suppresses nothing', () => {
    const plan = planBounce(
      findings(),
      matched,
      { suppressHardBounces: false, suppressComplaints: false, suppressionTtlMs: null },
      NOW,
    );
    expect(plan.bounces).toHaveLength(1);
    expect(plan.suppressions).toEqual([]);
  });

  it('files what is not about a message as not_bounce, unreadable and uncorrelated mail as unmatched', () => {
    for (const kind of ['auto_reply', 'delivered', 'not_bounce'] as const)
      expect(planBounce(findings({ kind }), matched, policy, NOW)).toMatchObject({
        disposition: 'not_bounce',
        bounces: [],
      });
    expect(planBounce(findings({ kind: 'unreadable' }), matched, policy, NOW)).toMatchObject({
      disposition: 'unmatched',
      bounces: [],
    });
    expect(planBounce(findings(), { matched: false, reason: 'not_found' }, policy, NOW)).toMatchObject({
      disposition: 'unmatched',
      unmatchedReason: 'not_found',
      bounces: [],
      suppressions: [],
    });
  });

  it('keeps a long diagnostic bounded and a recipient-less DSN still counts once', () => {
    const plan = planBounce(
      findings({ recipients: [finding(null, { diagnostic: 'x'.repeat(5000) })] }),
      matched,
      policy,
      NOW,
    );
    expect(plan.bounces[0]?.reason?.length).toBe(500);
    expect(planBounce(findings({ recipients: [] }), matched, policy, NOW).bounces).toHaveLength(1);
  });
});
