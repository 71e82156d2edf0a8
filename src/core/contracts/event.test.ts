import { describe, expect, it } from 'vitest';
import type { OutboxRow } from '../events/mirror.js';
import { eventBody, eventSubject } from './event.js';

const row: OutboxRow = {
  seq: 7,
  id: '0190-ev',
  eventType: 'message.deferred',
  eventVersion: 1,
  tenantId: 'acme',
  messagePk: 42,
  messageId: 'inv-1',
  accountId: 'main',
  batchCode: null,
  attempt: 2,
  replyCode: 451,
  enhancedStatus: '4.7.1',
  text: 'try later',
  payload: '{"next_attempt_ts":1700000060}',
  occurredAt: Date.UTC(2026, 6, 14, 10, 0, 0, 250),
  correlationId: 'req-1',
};

describe('the mirrored event', () => {
  it('is published on <prefix>.events.<tenant_id>.<event_type>', () => {
    expect(eventSubject('mailproxy', row)).toBe('mailproxy.events.acme.message.deferred');
  });

  it("has the contract's fields in their order, the relay's reply codes folded into data, its text left out", () => {
    expect(eventBody(row)).toBe(
      '{"event_id":"0190-ev","event_type":"message.deferred","event_version":2,"occurred_at":"2026-07-14T10:00:00.250Z","tenant_id":"acme",' +
        '"message_id":"inv-1","message_pk":42,"account_id":"main","batch_code":null,"attempt":2,"correlation_id":"req-1",' +
        '"data":{"next_attempt_ts":1700000060,"reply_code":451,"enhanced_status":"4.7.1"}}',
    );
  });

  it('leaves out every field that names a person or quotes one (issue 45)', () => {
    const payload = JSON.stringify({
      bounce_type: 'hard',
      bounce_code: '5.1.1',
      bounce_reason: '<ann@example.net>: user unknown',
      recipient: 'ann@example.net',
      refused: [{ recipient: 'bob@example.org', code: 550 }],
      refused_recipients: [{ recipient: 'dan@example.org', replyCode: 550 }],
      address: 'carla@example.net',
      address_digest: 'a0123456789abcdef0123',
    });
    const body = eventBody({ ...row, eventType: 'message.bounced', payload, text: 'ann@example.net unknown' });
    expect(JSON.parse(body).data).toEqual({
      bounce_type: 'hard',
      bounce_code: '5.1.1',
      reply_code: 451,
      enhanced_status: '4.7.1',
    });
    expect(body).not.toMatch(/example\.(net|org)/);
  });

  it('has an empty data object for an event without payload or reply', () => {
    expect(
      JSON.parse(eventBody({ ...row, payload: null, replyCode: null, enhancedStatus: null, text: null })).data,
    ).toEqual({});
  });
});
