/**
 * The SQLite queue: enqueue, claim with a lease, record outcomes, reclaim
 * expired leases, account usage. The current time is always a bound parameter.
 */
import type { BodySeal, HandoffState, ClaimedMessage, MessageQueue, PersonalFields } from '../core/message/index.js';
import { WINDOW_KINDS, windowStart, type Usage } from '../core/account/index.js';
import type { SqliteDatabase } from './database.js';
import { createEnqueue, type BodySealing } from './message-enqueue.js';
import { IDENTITY_COLUMNS, transitionOf, type IdentityRow, type MessageEventWriter } from './message-event-writer.js';
import { createOutcomeRecorder } from './message-outcomes.js';
import { personalColumns, personalOpener, type PersonalRow } from './personal-fields.js';
import { BODY_COLUMNS, spoolReader } from './stored-body.js';

const WAITING = `state IN ('queued', 'deferred') AND suspended = 0`;

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
}

const toClaimed = (row: ClaimRow, personal: PersonalFields): ClaimedMessage => ({
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
  mailFrom: personal.mailFrom,
  rcptTo: personal.rcptTo,
});

/** Claims due messages in priority order under a lease, counting them against the account's windows. */
function createClaims(db: SqliteDatabase, writeEvent: MessageEventWriter, seal: BodySeal) {
  const open = personalOpener(seal);
  const due = db.prepare<[string, string, number, number, number], { pk: number }>(`SELECT pk FROM messages
    WHERE tenant_id = ? AND account_id = ? AND ${WAITING} AND priority = ? AND next_attempt_at <= ?
    ORDER BY next_attempt_at, pk LIMIT ?`);
  const lease = db.prepare<[string, number, number, number], ClaimRow>(`UPDATE messages
    SET state = 'sending', attempts = attempts + 1, lease_owner = ?, lease_expires_at = ?, updated_at = ?
    WHERE pk = ? RETURNING pk, tenant_id, id, account_id, priority, batch_code, attempts, created_at, next_attempt_at, source, ${BODY_COLUMNS}, message_id_header, spool_id, ${personalColumns()}`);
  const nextDue = db.prepare<
    [string, string, number],
    { at: number | null }
  >(`SELECT min(next_attempt_at) AS at FROM messages
    WHERE tenant_id = ? AND account_id = ? AND ${WAITING} AND priority = ?`);
  const usageRows = db.prepare<[string, string], { window_kind: string; window_start: number; used: number }>(
    `SELECT window_kind, window_start, used FROM account_usage WHERE tenant_id = ? AND account_id = ?`,
  );
  const addUsage =
    db.prepare(`INSERT INTO account_usage (tenant_id, account_id, window_kind, window_start, used) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (tenant_id, account_id, window_kind) DO UPDATE SET
      used = CASE WHEN window_start = excluded.window_start THEN used + excluded.used ELSE excluded.used END,
      window_start = excluded.window_start`);

  const usage = (tenantId: string, accountId: string, now: number): Usage => {
    const counted: Usage = { minute: 0, hour: 0, day: 0 };
    for (const row of usageRows.all(tenantId, accountId)) {
      const kind = row.window_kind as keyof Usage;
      if (row.window_start === windowStart(kind, now)) counted[kind] = row.used;
    }
    return counted;
  };

  const claim = db.transaction((request: Parameters<MessageQueue['claim']>[0]): ClaimedMessage[] => {
    const claimed: ClaimedMessage[] = [];
    for (let priority = 0; priority <= (request.maxPriority ?? 3) && claimed.length < request.limit; priority += 1) {
      for (const { pk } of due.all(
        request.tenantId,
        request.accountId,
        priority,
        request.now,
        request.limit - claimed.length,
      )) {
        const row = lease.get(request.leaseOwner, request.leaseUntil, request.now, pk);
        if (row === undefined) continue;
        const via = request.via;
        const message =
          via === undefined ? toClaimed(row, open(row)) : { ...toClaimed(row, open(row)), viaAccountId: via };
        claimed.push(message);
        writeEvent({
          ...message,
          type: 'sending',
          at: request.now,
          attempt: message.attempts,
          ...(via === undefined ? {} : { data: { via_account_id: via } }),
        });
      }
    }
    if (claimed.length > 0) {
      for (const kind of WINDOW_KINDS)
        addUsage.run(
          request.tenantId,
          request.via ?? request.accountId,
          kind,
          windowStart(kind, request.now),
          claimed.length,
        );
    }
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

  return { claim, usage, nextDueAt };
}

/** Gives leased messages back to the queue: expired leases (a crash, another node's) and this node's own at stop. */
function createLeaseRecovery(db: SqliteDatabase, writeEvent: MessageEventWriter) {
  const expired = db.prepare<[{ now: number; owner: string; others: number; held: string }], IdentityRow>(
    `UPDATE messages SET state = 'queued', lease_owner = NULL, lease_expires_at = NULL
     WHERE state = 'sending' AND (lease_expires_at <= @now OR (@others = 1 AND lease_owner <> @owner))
       AND pk NOT IN (SELECT value FROM json_each(@held))
     RETURNING ${IDENTITY_COLUMNS}`,
  );
  const owned = db.prepare<[{ owner: string }], IdentityRow>(
    `UPDATE messages SET state = 'queued', lease_owner = NULL, lease_expires_at = NULL
     WHERE state = 'sending' AND lease_owner = @owner RETURNING ${IDENTITY_COLUMNS}`,
  );

  const reclaim = db.transaction(
    (now: number, owner: string, otherOwnersToo: boolean, held: readonly number[]): number => {
      const rows = expired.all({ now, owner, others: otherOwnersToo ? 1 : 0, held: JSON.stringify(held) });
      for (const row of rows) {
        writeEvent(
          transitionOf(row, 'lease_expired', now, {
            text: 'the send was interrupted; it will be retried with the same X-Genro-Mail-ID',
          }),
        );
      }
      return rows.length;
    },
  );

  const handBack = db.transaction((owner: string, now: number): number => {
    const rows = owned.all({ owner });
    for (const row of rows) {
      writeEvent(
        transitionOf(row, 'lease_expired', now, {
          text: 'the daemon stopped before the relay answered; it will be retried with the same X-Genro-Mail-ID',
        }),
      );
    }
    return rows.length;
  });

  return { reclaim, handBack };
}

/** What intake and delivery look up beside the queue: client ids' states, erased messages, spooled bytes. */
function createQueueLookups(db: SqliteDatabase): Pick<MessageQueue, 'states' | 'spooledContent' | 'erasedOf'> {
  const erasedRows = db
    .prepare<[string], number>(
      `SELECT pk FROM messages WHERE pk IN (SELECT value FROM json_each(?)) AND erased_at IS NOT NULL`,
    )
    .pluck();
  const spooled = spoolReader(db);
  const stateRows = db.prepare<[string, string], { id: string; state: HandoffState }>(
    `SELECT id, state FROM messages WHERE tenant_id = ? AND id IN (SELECT value FROM json_each(?))`,
  );

  return {
    states: (tenantId, clientIds) =>
      new Map(stateRows.all(tenantId, JSON.stringify(clientIds)).map((row) => [row.id, row.state])),
    spooledContent: spooled,
    erasedOf: (pks) => new Set(pks.length === 0 ? [] : erasedRows.all(JSON.stringify(pks))),
  };
}

export function createSqliteMessageQueue(
  db: SqliteDatabase,
  writeEvent: MessageEventWriter,
  bodies: BodySealing,
  /** The suppression list's lookup (suppression-repository.ts): it matches by digest. */
  suppressed: MessageQueue['suppressed'],
): MessageQueue {
  const claims = createClaims(db, writeEvent, bodies.seal);
  const recovery = createLeaseRecovery(db, writeEvent);
  const pause = db.prepare(`UPDATE accounts SET paused_at = ?, paused_reason = ? WHERE tenant_id = ? AND id = ?`);

  return {
    ...createQueueLookups(db),
    suppressed,
    enqueue: createEnqueue(db, writeEvent, bodies),
    claim: (request) => claims.claim.immediate(request),
    record: createOutcomeRecorder(db, writeEvent, bodies.seal),
    reclaimLeases: (now, owner, otherOwnersToo, held = []) =>
      recovery.reclaim.immediate(now, owner, otherOwnersToo, held),
    handBack: (owner, now) => recovery.handBack.immediate(owner, now),
    nextDueAt: claims.nextDueAt,
    usage: claims.usage,
    pauseAccount: (tenantId, accountId, at, reason) => {
      pause.run(at, reason, tenantId, accountId);
    },
  };
}
