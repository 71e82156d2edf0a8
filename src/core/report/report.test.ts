import { describe, expect, it } from 'vitest';
import { reportBody, toReportItem } from '../contracts/delivery-report.js';
import { interpretReply, syncUrl, type ReportEvent } from './report.js';

const event = (type: ReportEvent['type'], extra: Partial<ReportEvent> = {}): ReportEvent => ({
  seq: 7,
  eventId: 'e-7',
  type,
  tenantId: 'acme',
  messagePk: 42,
  messageId: 'm-1',
  accountId: 'main',
  batchCode: null,
  attempt: 1,
  at: 1_700_000_000_999,
  text: null,
  data: null,
  ...extra,
});

describe('interpretReply', () => {
  it('acknowledges only a 2xx whose JSON says "ok": true', () => {
    expect(interpretReply(200, '{"ok":true}')).toEqual({ ok: true, queued: 0, nextSyncAfter: null });
    expect(interpretReply(204, '')).toMatchObject({ ok: false, failure: { code: 'not_acknowledged' } });
    expect(interpretReply(200, '{"ok":"true"}')).toMatchObject({ ok: false, failure: { code: 'not_acknowledged' } });
    expect(interpretReply(200, 'ok')).toMatchObject({ ok: false, failure: { code: 'not_acknowledged' } });
    expect(interpretReply(200, 'null')).toMatchObject({ ok: false, failure: { code: 'not_acknowledged' } });
    expect(interpretReply(500, '{"ok":true}')).toMatchObject({
      ok: false,
      failure: { code: 'http_status', message: 'the client answered HTTP 500' },
    });
    expect(interpretReply(302, '{"ok":true}')).toMatchObject({ ok: false, failure: { code: 'http_status' } });
  });

  it('reads queued and next_sync_after (epoch seconds) when sane, and ignores them otherwise', () => {
    expect(interpretReply(200, '{"ok":true,"queued":3.7,"next_sync_after":1700000000.5}')).toEqual({
      ok: true,
      queued: 3,
      nextSyncAfter: 1_700_000_000_500,
    });
    expect(interpretReply(200, '{"ok":true,"queued":-1,"next_sync_after":"soon"}')).toEqual({
      ok: true,
      queued: 0,
      nextSyncAfter: null,
    });
    expect(interpretReply(200, '{"ok":true,"queued":"5","next_sync_after":-3}')).toEqual({
      ok: true,
      queued: 0,
      nextSyncAfter: null,
    });
  });
});

describe('toReportItem', () => {
  const base = { id: 'm-1', tenant_id: 'acme', account_id: 'main', pk: 42, batch_code: null, event_id: 'e-7' };

  it('names the fallback account whose relay sent it, only when failover did (via_account_id)', () => {
    expect(toReportItem(event('sent', { data: { via_account_id: 'backup' } }))).toEqual({
      ...base,
      event: 'sent',
      via_account_id: 'backup',
      sent_ts: 1_700_000_000,
    });
    expect(toReportItem(event('sent', { data: {} }))).not.toHaveProperty('via_account_id');
  });

  it('maps each event kind to its contract fields, in epoch seconds', () => {
    expect(toReportItem(event('sent'))).toEqual({ ...base, event: 'sent', sent_ts: 1_700_000_000 });
    expect(toReportItem(event('error', { text: '550 5.1.1 unknown' }))).toEqual({
      ...base,
      event: 'error',
      error_ts: 1_700_000_000,
      error: '550 5.1.1 unknown',
    });
    expect(toReportItem(event('expired', { text: 'expired: not delivered' }))).toEqual({
      ...base,
      event: 'expired',
      error_ts: 1_700_000_000,
      error: 'expired: not delivered',
    });
    expect(toReportItem(event('deferred', { text: '451 later', data: { next_attempt_ts: 1_700_000_060 } }))).toEqual({
      ...base,
      event: 'deferred',
      deferred_ts: 1_700_000_000,
      deferred_reason: '451 later',
      next_attempt_ts: 1_700_000_060,
    });
    expect(
      toReportItem(
        event('bounced', {
          text: 'fallback',
          data: {
            bounce_type: 'soft',
            bounce_code: '4.2.2',
            bounce_reason: 'mailbox full',
            recipient: 'ann@example.net',
          },
        }),
      ),
    ).toEqual({
      ...base,
      event: 'bounced',
      bounce_ts: 1_700_000_000,
      bounce_type: 'soft',
      bounce_code: '4.2.2',
      bounce_reason: 'mailbox full',
      bounce_recipient: 'ann@example.net',
    });
    expect(
      toReportItem(event('complained', { data: { feedback_type: 'abuse', recipient: 'bob@example.net' } })),
    ).toEqual({
      ...base,
      event: 'complained',
      complaint_ts: 1_700_000_000,
      complaint_type: 'abuse',
      complaint_recipient: 'bob@example.net',
    });
    expect(
      toReportItem(
        event('pec', {
          data: {
            pec_event: 'avvenuta-consegna',
            recipient: 'ann@pec.example',
            issued_ts: 1_699_999_990,
            receipt_id: 'r-1',
          },
        }),
      ),
    ).toEqual({
      ...base,
      event: 'pec',
      pec_ts: 1_699_999_990,
      pec_event: 'avvenuta-consegna',
      pec_details: { recipient: 'ann@pec.example', issued_ts: 1_699_999_990, receipt_id: 'r-1' },
    });
    // Ours (no provider's time): the event's.
    expect(
      toReportItem(event('pec', { data: { pec_event: 'acceptance_timeout', error: 'acceptance_timeout: none' } })),
    ).toEqual({
      ...base,
      event: 'pec',
      pec_ts: 1_700_000_000,
      pec_event: 'acceptance_timeout',
      pec_details: { error: 'acceptance_timeout: none' },
    });
    expect(toReportItem(event('downloaded', { data: { file_index: 2, downloads: 3 } }))).toEqual({
      ...base,
      event: 'downloaded',
      download_ts: 1_700_000_000,
      file_index: 2,
      downloads: 3,
    });
  });

  it('fills a missing field with null rather than leaving the key out', () => {
    expect(toReportItem(event('deferred'))).toMatchObject({ deferred_reason: null, next_attempt_ts: null });
    expect(toReportItem(event('bounced', { text: 'the text' }))).toMatchObject({
      bounce_type: null,
      bounce_code: null,
      bounce_reason: 'the text',
      bounce_recipient: null,
    });
  });

  it('a report body lists items in the order given; an empty one is a heartbeat', () => {
    expect(
      JSON.parse(
        reportBody([event('deferred', { seq: 1, eventId: 'a' }), event('sent', { seq: 2, eventId: 'b' })]),
      ).delivery_report.map((item: { event_id: string }) => item.event_id),
    ).toEqual(['a', 'b']);
    expect(reportBody([])).toBe('{"delivery_report":[]}');
  });
});

describe('syncUrl', () => {
  it('joins base URL and path with exactly one slash, and is null without a base URL', () => {
    expect(syncUrl('https://app.example/', '/mail-proxy/sync')).toBe('https://app.example/mail-proxy/sync');
    expect(syncUrl('https://app.example/base', 'sync')).toBe('https://app.example/base/sync');
    expect(syncUrl(null, '/mail-proxy/sync')).toBeNull();
    expect(syncUrl('', '/mail-proxy/sync')).toBeNull();
  });
});
