/**
 * Claims: due messages of an account leased in priority order, each with its `sending` event,
 * counted against the relay account's windows (and its destinations', per-destination limits)
 * in the same transaction, so that a crash cannot hand out budget twice.
 */
import { WINDOW_KINDS, windowStart, type Usage } from '../core/account/index.js';
import type { DestinationBudget } from '../core/delivery/index.js';
import type { BodySeal, ClaimedMessage, ClaimRequest, PersonalFields } from '../core/message/index.js';
import type { SqliteDatabase } from './database.js';
import { createDestinationClaims, type DestinationClaims } from './destination-claims.js';
import type { MessageEventWriter } from './message-event-writer.js';
import { personalColumns, personalOpener, sealedFieldsOf, type PersonalRow } from './personal-fields.js';
import { BODY_COLUMNS } from './stored-body.js';

interface ClaimRow extends PersonalRow {
  pk: number;
  tenant_id: string;
  id: string;
  account_id: string;
  priority: 0 | 1 | 2 | 3;
  batch_code: string | null;
  attempts: number;
  created_at: number;
  next_attempt_at: number;
  source: 'http' | 'smtp';
  body: Buffer | null;
  key: Buffer | null;
  message_id_header: string | null;
  spool_id: number | null;
  body_object: string | null;
}

const toClaimed = (row: ClaimRow, open: (row: PersonalRow) => PersonalFields): ClaimedMessage => {
  // Only the personal columns are kept for later: not the row, whose body goes once sent.
  const sealed: PersonalRow = {
    tenant_id: row.tenant_id,
    personal: row.personal,
    personal_key: row.personal_key,
    mail_from: row.mail_from,
    rcpt_to: row.rcpt_to,
    subject: row.subject,
  };
  let opened: PersonalFields | undefined;
  return {
    pk: row.pk,
    tenantId: row.tenant_id,
    id: row.id,
    accountId: row.account_id,
    priority: row.priority,
    batchCode: row.batch_code,
    attempts: row.attempts,
    createdAt: row.created_at,
    dueAt: row.next_attempt_at,
    source: row.source,
    body: row.body,
    key: row.key,
    messageIdHeader: row.message_id_header,
    spoolId: row.spool_id,
    ...(row.body_object === null ? {} : { object: row.body_object }),
    envelope: () => {
      opened ??= open(sealed);
      return { mailFrom: opened.mailFrom, rcptTo: opened.rcptTo };
    },
    sealedEnvelope: sealedFieldsOf(row),
  };
};

/**
 * Leases one due message to a claim's owner; its `sending` event names the fallback relay, if any.
 * The row is read, then updated without RETURNING: SQLite's RETURNING with this many columns (the
 * body's subquery among them) cost a third more per message than the read and the update.
 */
function createLeaser(db: SqliteDatabase, writeEvent: MessageEventWriter, seal: BodySeal) {
  const open = personalOpener(seal);
  const read = db.prepare<[number], ClaimRow>(`SELECT pk, tenant_id, id, account_id, priority, batch_code, attempts,
    created_at, next_attempt_at, source, ${BODY_COLUMNS}, message_id_header, spool_id, body_object, ${personalColumns()}
    FROM messages WHERE pk = ?`);
  const lease = db.prepare<[string, number, number, number]>(`UPDATE messages
    SET state = 'sending', attempts = attempts + 1, lease_owner = ?, lease_expires_at = ?, updated_at = ?, held_for = NULL
    WHERE pk = ?`);
  return (request: ClaimRequest, pk: number, held: string[] | undefined): ClaimedMessage | null => {
    const row = read.get(pk);
    if (row === undefined) return null;
    // In the claim's transaction: what the update sets is what the row now holds.
    lease.run(request.leaseOwner, request.leaseUntil, request.now, pk);
    row.attempts += 1;
    const via = request.via;
    const message: ClaimedMessage = toClaimed(row, open);
    if (via !== undefined) message.viaAccountId = via;
    if (held !== undefined && held.length > 0) message.destinations = held;
    writeEvent({
      ...message,
      type: 'sending',
      at: request.now,
      attempt: message.attempts,
      ...(via === undefined ? {} : { data: { via_account_id: via } }),
    });
    return message;
  };
}

type LeaseOne = ReturnType<typeof createLeaser>;

/** The account windows' counts: read by the claim plan, added to by each claim. */
function createAccountUsage(db: SqliteDatabase) {
  const usageRows = db.prepare<[string, string], { window_kind: string; window_start: number; used: number }>(
    `SELECT window_kind, window_start, used FROM account_usage WHERE tenant_id = ? AND account_id = ?`,
  );
  const addUsage =
    db.prepare(`INSERT INTO account_usage (tenant_id, account_id, window_kind, window_start, used) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (tenant_id, account_id, window_kind) DO UPDATE SET
      used = CASE WHEN window_start = excluded.window_start THEN used + excluded.used ELSE excluded.used END,
      window_start = excluded.window_start`);
  return {
    usage(tenantId: string, accountId: string, now: number): Usage {
      const counted: Usage = { minute: 0, hour: 0, day: 0 };
      for (const row of usageRows.all(tenantId, accountId)) {
        const kind = row.window_kind as keyof Usage;
        if (row.window_start === windowStart(kind, now)) counted[kind] = row.used;
      }
      return counted;
    },
    add(tenantId: string, accountId: string, count: number, now: number): void {
      for (const kind of WINDOW_KINDS) addUsage.run(tenantId, accountId, kind, windowStart(kind, now), count);
    },
  };
}

/**
 * One priority's due messages through the relay's destination budget: each is claimed or held
 * for its destination, page after page (a held one leaves the due set), until the claim has
 * its limit, nothing of this priority is due, or the budget has held all one claim may.
 */
function claimThrough(
  destinations: DestinationClaims,
  leaseOne: LeaseOne,
  request: ClaimRequest,
  budget: DestinationBudget,
  priority: number,
  claimed: ClaimedMessage[],
): void {
  while (claimed.length < request.limit && !budget.full()) {
    const wanted = request.limit - claimed.length;
    const page = destinations.due(request.tenantId, request.accountId, priority, request.now, wanted);
    for (const candidate of page) {
      if (budget.full()) return;
      const admission = budget.admit({ ...candidate, priority });
      if (admission.kind === 'hold') destinations.hold(candidate.pk, admission.destination, admission.until);
      else {
        const message = leaseOne(request, candidate.pk, admission.destinations);
        if (message !== null) claimed.push(message);
      }
    }
    if (page.length < wanted) return;
  }
}

/** Claims due messages in priority order under a lease, counting them against the relay account's windows. */
export function createClaims(db: SqliteDatabase, writeEvent: MessageEventWriter, seal: BodySeal, waiting: string) {
  const due = db.prepare<[string, string, number, number, number], { pk: number }>(`SELECT pk FROM messages
    WHERE tenant_id = ? AND account_id = ? AND ${waiting} AND priority = ? AND next_attempt_at <= ?
    ORDER BY next_attempt_at, pk LIMIT ?`);
  const nextDue = db.prepare<[string, string, number], { at: number | null }>(`SELECT min(next_attempt_at) AS at
    FROM messages WHERE tenant_id = ? AND account_id = ? AND ${waiting} AND priority = ?`);
  const leaseOne = createLeaser(db, writeEvent, seal);
  const accounts = createAccountUsage(db);
  const destinations = createDestinationClaims(db, waiting);

  const claim = db.transaction((request: ClaimRequest): ClaimedMessage[] => {
    const claimed: ClaimedMessage[] = [];
    const budget = request.destinations;
    const { tenantId, accountId, now } = request;
    for (let priority = 0; priority <= (request.maxPriority ?? 3) && claimed.length < request.limit; priority += 1) {
      if (budget !== undefined) {
        claimThrough(destinations, leaseOne, request, budget, priority, claimed);
        continue;
      }
      for (const { pk } of due.all(tenantId, accountId, priority, now, request.limit - claimed.length)) {
        const message = leaseOne(request, pk, undefined);
        if (message !== null) claimed.push(message);
      }
    }
    // A claim through a fallback (failover) counts against the fallback's windows.
    const relay = request.via ?? accountId;
    if (budget !== undefined) destinations.count(tenantId, relay, budget, now);
    if (claimed.length > 0) accounts.add(tenantId, relay, claimed.length, now);
    return claimed;
  });

  const nextDueAt = (tenantId: string, accountId: string): number | null => {
    let earliest: number | null = null;
    for (let priority = 0; priority <= 3; priority += 1) {
      const at = nextDue.get(tenantId, accountId, priority)?.at ?? null;
      if (at !== null && (earliest === null || at < earliest)) earliest = at;
    }
    return earliest;
  };

  return { claim, usage: accounts.usage, nextDueAt, destinationUsage: destinations.usage };
}
