import { describe, expect, it } from 'vitest';
import type { MessageRead } from '../../core/message/message-read.js';
import type { MessageSummary } from '../../core/message/search.js';
import { detailFromWire, detailToWire, summaryFromWire, summaryToWire } from './view-wire.js';

// What a node of the previous version sends for a page's message and for one message's read.
const OLD_SUMMARY = {
  pk: 7, id: 'inv-1', tenant_id: 't1', account_id: 'a1', status: 'deferred', state: 'deferred', priority: 2, batch_code: 'b1',
  subject: 'Invoice', mail_from: 'from@example.org', rcpt_to: ['to@example.org'], attempts: 1, created_ts: 1700000000,
  next_attempt_ts: 1700000600, sent_ts: null, error_ts: null, error: null, bounce_type: null,
}; // prettier-ignore

const OLD_DETAIL = {
  message: {
    pk: 7, id: 'inv-1', tenant_id: 't1', account_id: 'a1', priority: 2, batch_code: 'b1', source: 'http', state: 'deferred',
    suspended: false, attempts: 1, mail_from: 'from@example.org', rcpt_to: ['to@example.org', 'gone@example.org'], subject: 'Invoice',
    message_id: '<m1@example.org>', size_bytes: 1234, created_ts: 1700000000, updated_ts: 1700000100, next_attempt_ts: 1700000600,
    deferred_ts: 1700000100, deferred_reason: 'greylisted', sent_ts: null, error_ts: null, error: null, last_reply_code: 451,
    last_enhanced_status: '4.7.1', refused_recipients: null, reported_ts: null, bounce_type: null, bounce_code: null, bounce_reason: null,
    bounce_ts: null, bounce_reported_ts: null, complaint_ts: null, complaint_type: null, provider_message_id: 'p-1',
    provider_state: 'delivered', provider_state_ts: 1700000200, pec_rda_ts: null, pec_rdc_ts: null, pec_error: null, pec_error_ts: null,
    status: 'deferred',
  },
  events: [
    { event_type: 'queued', ts: 1700000000, attempt: 0, reply_code: null, enhanced_status: null, text: null, data: null },
    { event_type: 'deferred', ts: 1700000100, attempt: 1, reply_code: 451, enhanced_status: '4.7.1', text: 'greylisted', data: { a: 1 } },
  ],
  why: {
    waiting: true,
    reasons: [
      { code: 'account_paused', message: 'its account "a1" is paused: 535 auth failed (saving the account resumes it)', until_ts: null },
      { code: 'retry_backoff', message: 'attempt 1 was refused for now (greylisted); next attempt at 2023-11-14T22:23:20.000Z', until_ts: 1700000600 },
      { code: 'suppressed', message: "on the tenant's suppression list since it was accepted: gone@example.org, x@example.org", until_ts: null },
      { code: 'due', message: 'due now: waiting for a free connection of account "a1" (pool of 3)', until_ts: null },
      { code: 'tenant_suspended', message: 'the whole tenant is suspended (POST /commands/activate)', until_ts: null },
    ],
    expires_ts: 1700432000,
  },
  pec_receipts: [
    { receipt_id: 'r-1', tenant_id: 't1', account_id: 'a1', message_id: 'inv-1', receipt_type: 'accettazione', recognised_by: 'daticert',
      matched_by: 'msgid', recipient: null, error: null, error_detail: null, issuer: 'Posta Certificata', identificativo: 'opec-1',
      referenced_message_id: '<m1@example.org>', header_message_id: '<r1@pec.example>', subject: 'ACCETTAZIONE: Invoice',
      issued_ts: 1700000050, received_ts: 1700000060, size_bytes: 2048, complete: true, sha256: 'ab12' },
  ],
}; // prettier-ignore

const SUMMARY: MessageSummary = {
  pk: 7, clientId: 'inv-1', tenantId: 't1', accountId: 'a1', status: 'deferred', state: 'deferred', priority: 2, batchCode: 'b1',
  subject: 'Invoice', mailFrom: 'from@example.org', rcptTo: ['to@example.org'], attempts: 1, createdAt: 1700000000_000,
  nextAttemptAt: 1700000600_000, sentAt: null, errorAt: null, error: null, bounceType: null,
}; // prettier-ignore

const READ: MessageRead = {
  message: {
    pk: 7, clientId: 'inv-1', tenantId: 't1', accountId: 'a1', priority: 2, batchCode: 'b1', source: 'http', state: 'deferred',
    suspended: false, attempts: 1, mailFrom: 'from@example.org', rcptTo: ['to@example.org', 'gone@example.org'], subject: 'Invoice',
    messageId: '<m1@example.org>', sizeBytes: 1234, createdAt: 1700000000_000, updatedAt: 1700000100_000, nextAttemptAt: 1700000600_000,
    deferredAt: 1700000100_000, deferredReason: 'greylisted', heldFor: null, sentAt: null, errorAt: null, error: null, lastReplyCode: 451,
    lastEnhancedStatus: '4.7.1', refusedRecipients: null, reportedAt: null, bounceType: null, bounceCode: null, bounceReason: null,
    bounceAt: null, bounceReportedAt: null, complaintAt: null, complaintType: null, providerMessageId: 'p-1',
    providerState: 'delivered', providerStateAt: 1700000200_000, pecRdaAt: null, pecRdcAt: null, pecError: null, pecErrorAt: null,
    bodyShreddedAt: null, erasedAt: null,
  },
  events: [
    { type: 'queued', at: 1700000000_000, attempt: 0, replyCode: null, enhancedStatus: null, text: null, data: null },
    { type: 'deferred', at: 1700000100_000, attempt: 1, replyCode: 451, enhancedStatus: '4.7.1', text: 'greylisted', data: { a: 1 } },
  ],
  why: {
    waiting: true,
    reasons: [
      { code: 'account_paused', untilAt: null, pausedReason: '535 auth failed' },
      { code: 'retry_backoff', untilAt: 1700000600_000 },
      { code: 'suppressed', untilAt: null, recipients: ['gone@example.org', 'x@example.org'] },
      { code: 'due', untilAt: null, poolSize: 3 },
      { code: 'tenant_suspended', untilAt: null },
    ],
    expiresAt: 1700432000_000,
  },
  pecReceipts: [
    { receiptId: 'r-1', tenantId: 't1', accountId: 'a1', clientId: 'inv-1', receiptType: 'accettazione', recognisedBy: 'daticert',
      matchedBy: 'msgid', recipient: null, error: null, errorDetail: null, issuer: 'Posta Certificata', identificativo: 'opec-1',
      referencedMessageId: '<m1@example.org>', headerMessageId: '<r1@pec.example>', subject: 'ACCETTAZIONE: Invoice',
      issuedAt: 1700000050_000, receivedAt: 1700000060_000, sizeBytes: 2048, complete: true, sha256: 'ab12' },
  ],
}; // prettier-ignore

describe('the fleet view wire: the previous version shape', () => {
  it('decodes a page message and a message read sent in the old shape into the core models', () => {
    expect(summaryFromWire(OLD_SUMMARY)).toEqual(SUMMARY);
    expect(detailFromWire(OLD_DETAIL)).toEqual(READ);
  });

  it('sends exactly the old shape, field order included', () => {
    expect(JSON.stringify(summaryToWire(SUMMARY))).toBe(JSON.stringify(OLD_SUMMARY));
    expect(JSON.stringify(detailToWire(READ))).toBe(JSON.stringify(OLD_DETAIL));
  });

  it('words a reason decoded from the wire as the sending node did', () => {
    const paused = {
      ...OLD_DETAIL,
      why: {
        ...OLD_DETAIL.why,
        reasons: [
          {
            code: 'account_paused',
            message: 'its account "a1" is paused: no reason given (saving the account resumes it)',
            until_ts: null,
          },
        ],
      },
    };
    const due = {
      ...OLD_DETAIL,
      why: {
        ...OLD_DETAIL.why,
        reasons: [{ code: 'due', message: 'due now: waiting for a free connection of account "a1"', until_ts: null }],
      },
    };
    for (const old of [paused, due])
      expect(JSON.stringify(detailToWire(detailFromWire(old)))).toBe(JSON.stringify(old));
    expect(detailFromWire(paused).why.reasons[0]).toEqual({
      code: 'account_paused',
      untilAt: null,
      pausedReason: null,
    });
  });

  it('carries a message held for a destination, and its reason, both ways', () => {
    const held: MessageRead = {
      ...READ,
      message: { ...READ.message, state: 'queued', attempts: 0, heldFor: 'gmail.com' },
      why: {
        ...READ.why,
        reasons: [{ code: 'destination_limited', untilAt: 1700000600_000, destination: 'gmail.com' }],
      },
    };
    const wire = detailToWire(held);
    expect((wire.message as Record<string, unknown>).held_for).toBe('gmail.com');
    expect(JSON.stringify(wire)).toContain('held for its recipients\' destination \\"gmail.com\\"');
    expect(detailFromWire(JSON.parse(JSON.stringify(wire)) as Record<string, unknown>)).toEqual(held);
  });
});
