/**
 * Delivery reports (ARCHITECTURE.md §4.5): which events a client application
 * is told, the item it receives for each, and what its reply means. Pure: the
 * loop (sync/), the store and the HTTP transport are adapters around this.
 */
import type { ClientAuth } from '../tenant/tenant.js';

/** The events a client is told of, by timeline name (outbox type `message.<name>`). */
export const REPORTABLE_EVENTS = [
  'sent',
  'error',
  'expired',
  'deferred',
  'bounced',
  'complained',
  'pec',
  'delivered',
  'dropped',
  'erased',
  'unsubscribed',
  'downloaded',
] as const;
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

/** `httpStatus`: the client's status when it answered (the transport adds it; the report log shows it). */
export type ClientReply = (
  { ok: true; queued: number; nextSyncAfter: number | null } | { ok: false; failure: ReportFailure }
) & { httpStatus?: number };

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
    nextSyncAfter:
      typeof nextSyncAfter === 'number' && Number.isFinite(nextSyncAfter) && nextSyncAfter > 0
        ? Math.round(nextSyncAfter * 1000)
        : null,
  };
}

/**
 * The delivery-report log: each attempt of posting a report (or a heartbeat) to a tenant's
 * client, as operators read it when a client says it heard nothing. Bounded per tenant.
 */
/** How many attempts are kept per tenant, newest first. */
export const REPORT_LOG_SIZE = 200;

export interface ReportAttempt {
  /** The `x-mailproxy-report-id` header the post carried. */
  reportId: string;
  at: number;
  /** The client acknowledged (2xx with `"ok": true`). */
  ok: boolean;
  /** The client's HTTP status; null when no answer came (refused, timeout). */
  httpStatus: number | null;
  errorCode: ReportFailureCode | null;
  error: string | null;
  latencyMs: number;
  /** Items in the report; 0 for a heartbeat. */
  items: number;
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
  acknowledge(
    tenantId: string,
    events: readonly ReportEvent[],
    record: LaneRecord,
    report: { at: number; reportId: string | null; attempt?: ReportAttempt },
  ): void;
  /** The lane record, and the attempt that changed it (the report log) in the same transaction. */
  saveLane(tenantId: string, record: LaneRecord, attempt?: ReportAttempt): void;
  /** The tenant's last report attempts, newest first (at most REPORT_LOG_SIZE). */
  attempts(tenantId: string, limit: number): ReportAttempt[];
}

/** How one tenant's reporting is doing. Instants are epoch ms (`…At`); null: it has not happened. */
export interface SyncStatus {
  tenantId: string;
  /** Where reports go; null when the tenant has no endpoint (outcomes are then marked reported as they happen). */
  clientSyncUrl: string | null;
  inFlight: boolean;
  lastAttemptAt: number | null;
  lastSuccessAt: number | null;
  lastError: string | null;
  lastErrorAt: number | null;
  consecutiveFailures: number;
  /** When the next round is due (a retry, a held report or a heartbeat); null when none is planned. */
  nextDueAt: number | null;
  /** While the client's do-not-disturb holds; null once it has passed. */
  doNotDisturbUntilAt: number | null;
  backlog: number;
  oldestUnreportedAt: number | null;
  oldestUnreportedAgeSeconds: number | null;
}

/** What operators and tenants see of reporting, and the one thing they may ask of it. */
export interface ReportSync {
  list(): SyncStatus[];
  get(tenantId: string): SyncStatus | null;
  /** A round for the tenant now, past its backoff (not past the client's do-not-disturb); false when no such tenant. */
  syncNow(tenantId: string): boolean;
  /** The tenant's last report attempts, newest first; null when no such tenant. */
  log(tenantId: string, limit: number): ReportAttempt[] | null;
}
