/**
 * Delivery reports (ARCHITECTURE.md §4.5): which events a client application
 * is told, the item it receives for each, and what its reply means. Pure: the
 * loop (sync/), the store and the HTTP transport are adapters around this.
 */
import type { ClientAuth } from './tenant.js';

/** The events a client is told of, by timeline name (outbox type `message.<name>`). */
export const REPORTABLE_EVENTS = ['sent', 'error', 'expired', 'deferred', 'bounced', 'complained', 'pec'] as const;
export type ReportableEvent = (typeof REPORTABLE_EVENTS)[number];

/** One reportable event as the store keeps it (instants in ms). */
export interface ReportEvent {
  /** Outbox order: the report cursor is the last acknowledged `seq`. */
  seq: number;
  /** The event id (UUIDv7): the same in the report, the stream and the timeline. */
  eventId: string;
  type: ReportableEvent;
  tenantId: string;
  messagePk: number;
  /** The client's id of the message. */
  messageId: string;
  accountId: string | null;
  batchCode: string | null;
  attempt: number;
  at: number;
  text: string | null;
  data: Record<string, unknown> | null;
}

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
} & (
  | { sent_ts: number }
  | { error_ts: number; error: string | null }
  | { deferred_ts: number; deferred_reason: string | null; next_attempt_ts: number | null }
  | { bounce_ts: number; bounce_type: string | null; bounce_code: string | null; bounce_reason: string | null; bounce_recipient: string | null }
  | { complaint_ts: number; complaint_type: string | null; complaint_recipient: string | null }
  /** A PEC receipt (`pec_event` is its X-Ricevuta type) or `acceptance_timeout`; details as the event's data. */
  | { pec_ts: number; pec_event: string | null; pec_details: Record<string, unknown> }
);

const seconds = (ms: number): number => Math.floor(ms / 1000);

const stringField = (data: Record<string, unknown> | null, key: string): string | null => {
  const value = data?.[key];
  return typeof value === 'string' ? value : null;
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
      return { ...base, deferred_ts: seconds(event.at), deferred_reason: event.text, next_attempt_ts: typeof next === 'number' ? next : null };
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
      return { ...base, pec_ts: typeof issued === 'number' ? issued : seconds(event.at), pec_event: typeof pecEvent === 'string' ? pecEvent : null, pec_details: details };
    }
  }
}

/** Why a round did not end in an acknowledgement: data with a stable code. */
export type ReportFailureCode =
  /** The client answered outside 2xx (a redirect included: reports are never forwarded). */
  | 'http_status'
  /** 2xx, but not JSON, or JSON without `"ok": true`. */
  | 'not_acknowledged'
  | 'timeout'
  /** Refused, reset, DNS, TLS: the request did not get an answer. */
  | 'connection';

export interface ReportFailure {
  code: ReportFailureCode;
  message: string;
}

export type ClientReply =
  | { ok: true; queued: number; nextSyncAfter: number | null }
  | { ok: false; failure: ReportFailure };

/**
 * What the client's answer means. Only a 2xx whose JSON says `"ok": true`
 * acknowledges; `queued` and `next_sync_after` (epoch seconds) are read when
 * they are sane and ignored otherwise, so a sloppy client cannot stall us.
 */
export function interpretReply(status: number, bodyText: string): ClientReply {
  if (status < 200 || status > 299) {
    return { ok: false, failure: { code: 'http_status', message: `the client answered HTTP ${status}` } };
  }
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    return { ok: false, failure: { code: 'not_acknowledged', message: `HTTP ${status} without a JSON body` } };
  }
  if (typeof body !== 'object' || body === null || (body as { ok?: unknown }).ok !== true) {
    return { ok: false, failure: { code: 'not_acknowledged', message: `HTTP ${status} without "ok": true` } };
  }
  const { queued, next_sync_after: nextSyncAfter } = body as { queued?: unknown; next_sync_after?: unknown };
  return {
    ok: true,
    queued: typeof queued === 'number' && Number.isFinite(queued) && queued > 0 ? Math.floor(queued) : 0,
    nextSyncAfter: typeof nextSyncAfter === 'number' && Number.isFinite(nextSyncAfter) && nextSyncAfter > 0 ? Math.round(nextSyncAfter * 1000) : null,
  };
}

/** Where and how one tenant's reports are posted. */
export interface ReportTarget {
  tenantId: string;
  /** `client_base_url` + `client_sync_path`. */
  url: string;
  auth: ClientAuth | null;
  /** HMAC key of the signature header; null sends no signature. */
  signingSecret: string | null;
}

/** Posts one report body; never throws: a failure is a ClientReply too. */
export interface ReportTransport {
  post(target: ReportTarget, body: string, headers: Record<string, string>, signal: AbortSignal): Promise<ClientReply>;
}

/** The body of a report: items in event order; an empty list is a heartbeat. */
export const reportBody = (events: readonly ReportEvent[]): string => JSON.stringify({ delivery_report: events.map(toReportItem) });

/** The URL reports go to, or null when the tenant has no endpoint. */
export function syncUrl(baseUrl: string | null, syncPath: string): string | null {
  if (baseUrl === null || baseUrl === '') return null;
  return baseUrl.replace(/\/+$/, '') + (syncPath.startsWith('/') ? syncPath : `/${syncPath}`);
}

/** What survives a restart of one tenant's reporting (instants in ms). */
export interface LaneRecord {
  failures: number;
  retryAt: number | null;
  dndUntil: number | null;
  lastSuccessAt: number | null;
  lastAttemptAt: number | null;
  lastError: string | null;
  lastErrorAt: number | null;
}

export interface ReportLane {
  tenantId: string;
  /** Where its reports go (no secret needed to know it); null without a `client_base_url`: nobody to tell. */
  syncUrl: string | null;
  record: LaneRecord;
}

/** The store side of reporting. */
export interface ReportStore {
  /** Every tenant's lane. */
  lanes(): ReportLane[];
  lane(tenantId: string): ReportLane | null;
  /** The oldest `limit` unreported events of the tenant, in order. */
  pending(tenantId: string, limit: number): ReportEvent[];
  /** How far behind the tenant's client is. */
  backlog(tenantId: string): { count: number; oldestAt: number | null };
  /**
   * In one transaction: the cursor moves past `events`, their messages are
   * marked reported (`reported_at` for an outcome, `bounce_reported_at` for a
   * bounce) and, when `reportId` names a delivered report, each message gets a
   * `reported` event; the lane record is saved.
   */
  acknowledge(tenantId: string, events: readonly ReportEvent[], record: LaneRecord, report: { at: number; reportId: string | null }): void;
  saveLane(tenantId: string, record: LaneRecord): void;
}

/** `GET /tenant/{id}/sync-status`: how one tenant's reporting is doing (epoch seconds). */
export interface SyncStatus {
  tenant_id: string;
  /** Where reports go; null when the tenant has no endpoint (outcomes are then marked reported as they happen). */
  client_sync_url: string | null;
  in_flight: boolean;
  last_attempt_ts: number | null;
  last_success_ts: number | null;
  last_error: string | null;
  last_error_ts: number | null;
  consecutive_failures: number;
  /** When the next round is due (a retry, a held report or a heartbeat); null when none is planned. */
  next_due_ts: number | null;
  do_not_disturb_until_ts: number | null;
  backlog: number;
  oldest_unreported_ts: number | null;
  oldest_unreported_age_seconds: number | null;
}

/** What operators and tenants see of reporting, and the one thing they may ask of it. */
export interface ReportSync {
  list(): SyncStatus[];
  get(tenantId: string): SyncStatus | null;
  /** A round for the tenant now, past its backoff (not past the client's do-not-disturb); false when no such tenant. */
  syncNow(tenantId: string): boolean;
}
