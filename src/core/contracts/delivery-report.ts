/**
 * The body a client application receives (ARCHITECTURE.md §4.5): `{"delivery_report":[items]}`,
 * one item per reportable event. Field names are the contract genro-mail-proxy clients implement.
 */
import type { ReportEvent, ReportableEvent } from '../report/report.js';

/**
 * One item of `delivery_report`. Field names are the contract that
 * genro-mail-proxy clients implement; `event` and `event_id` are additions
 * that let a client tell the kind at a glance and drop an item it already has
 * (after a crash a batch may be sent twice).
 */
export type ReportItem = {
  id: string;
  tenant_id: string;
  account_id: string | null;
  pk: number;
  batch_code: string | null;
  event: ReportableEvent;
  event_id: string;
  /** The fallback account whose relay sent (or tried) it, when not `account_id`'s own (failover). */
  via_account_id?: string;
} & (
  | { sent_ts: number }
  | { error_ts: number; error: string | null }
  | { deferred_ts: number; deferred_reason: string | null; next_attempt_ts: number | null }
  | {
      bounce_ts: number;
      bounce_type: string | null;
      bounce_code: string | null;
      bounce_reason: string | null;
      bounce_recipient: string | null;
    }
  | { complaint_ts: number; complaint_type: string | null; complaint_recipient: string | null }
  /** A PEC receipt (`pec_event` is its X-Ricevuta type) or `acceptance_timeout`; details as the event's data. */
  | { pec_ts: number; pec_event: string | null; pec_details: Record<string, unknown> }
  /** The relay's provider (SES, SendGrid, Mailgun, Postmark) says, by webhook, that it delivered or dropped the message. */
  | { provider_ts: number; provider: string | null; provider_recipient: string | null; provider_reason: string | null }
  /** Its personal data was erased on request (POST /commands/erase); a message that was still waiting is never sent. */
  | { erased_ts: number; was_waiting: boolean }
  /** The recipient clicked the one-click unsubscribe link it carried; they are suppressed for the tenant. */
  | { unsubscribe_ts: number; unsubscribe_recipient: string | null; unsubscribe_list: string | null }
  /** A recipient downloaded one of its offloaded attachments (`file_index` from 0); `downloads`: that file's count so far. */
  | { download_ts: number; file_index: number | null; downloads: number | null }
);

const seconds = (ms: number): number => Math.floor(ms / 1000);

const stringField = (data: Record<string, unknown> | null, key: string): string | null => {
  const value = data?.[key];
  return typeof value === 'string' ? value : null;
};

const numberField = (data: Record<string, unknown> | null, key: string): number | null => {
  const value = data?.[key];
  return typeof value === 'number' ? value : null;
};

const downloadOf = (event: ReportEvent) => ({
  download_ts: seconds(event.at),
  file_index: numberField(event.data, 'file_index'),
  downloads: numberField(event.data, 'downloads'),
});

const viaOf = (data: Record<string, unknown> | null): { via_account_id?: string } => {
  const via = stringField(data, 'via_account_id');
  return via === null ? {} : { via_account_id: via };
};

export function toReportItem(event: ReportEvent): ReportItem {
  const base = {
    id: event.messageId,
    tenant_id: event.tenantId,
    account_id: event.accountId,
    pk: event.messagePk,
    batch_code: event.batchCode,
    event: event.type,
    event_id: event.eventId,
    ...viaOf(event.data),
  };
  switch (event.type) {
    case 'sent':
      return { ...base, sent_ts: seconds(event.at) };
    // An expired message is an error to the client (its contract has no other failure); `event` tells them apart.
    case 'error':
    case 'expired':
      return { ...base, error_ts: seconds(event.at), error: event.text };
    case 'deferred': {
      const next = event.data?.next_attempt_ts;
      return {
        ...base,
        deferred_ts: seconds(event.at),
        deferred_reason: event.text,
        next_attempt_ts: typeof next === 'number' ? next : null,
      };
    }
    case 'bounced':
      return {
        ...base,
        bounce_ts: seconds(event.at),
        bounce_type: stringField(event.data, 'bounce_type'),
        bounce_code: stringField(event.data, 'bounce_code'),
        bounce_reason: stringField(event.data, 'bounce_reason') ?? event.text,
        bounce_recipient: stringField(event.data, 'recipient'),
      };
    case 'complained':
      return {
        ...base,
        complaint_ts: seconds(event.at),
        complaint_type: stringField(event.data, 'feedback_type'),
        complaint_recipient: stringField(event.data, 'recipient'),
      };
    case 'pec': {
      const { pec_event: pecEvent, ...details } = event.data ?? {};
      // The provider's certified time when the receipt gives one (as pec_rda_ts and pec_rdc_ts are), else the event's.
      const issued = details.issued_ts;
      return {
        ...base,
        pec_ts: typeof issued === 'number' ? issued : seconds(event.at),
        pec_event: typeof pecEvent === 'string' ? pecEvent : null,
        pec_details: details,
      };
    }
    case 'delivered':
    case 'dropped':
      return {
        ...base,
        provider_ts: seconds(event.at),
        provider: stringField(event.data, 'provider'),
        provider_recipient: stringField(event.data, 'recipient'),
        provider_reason: stringField(event.data, 'reason'),
      };
    case 'erased':
      return { ...base, erased_ts: seconds(event.at), was_waiting: event.data?.was_waiting === true };
    case 'unsubscribed':
      return {
        ...base,
        unsubscribe_ts: seconds(event.at),
        unsubscribe_recipient: stringField(event.data, 'recipient'),
        unsubscribe_list: stringField(event.data, 'list'),
      };
    case 'downloaded':
      return { ...base, ...downloadOf(event) };
  }
}

/** The body of a report: items in event order; an empty list is a heartbeat. */
export const reportBody = (events: readonly ReportEvent[]): string =>
  JSON.stringify({ delivery_report: events.map(toReportItem) });
