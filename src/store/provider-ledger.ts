/**
 * SQLite side of provider events: candidates by the references an
 * event carries, and the durable (group-committed) transaction that applies a request's events:
 * each one once (its row in `provider_events`), the message's provider state by
 * rank, its timeline event, bounce or complaint (as the bounce mailbox records
 * them), and the suppression, mirrored as an admin event.
 */
import type { IdSource, ChangeLog } from '../core/index.js';
import {
  PROVIDER_STATE_RANKS,
  type EventOutcome,
  type ProviderEvent,
  type ProviderPlan,
  type ProviderLedger,
} from '../core/provider/index.js';
import type { SuppressionRepository } from '../core/tenant/index.js';
import type { BodySeal } from '../core/message/index.js';
import { transactionRunner, type SqliteDatabase } from './database.js';
import type { MessageBounceWriter } from './message-bounces.js';
import { candidateReader, MAX_CANDIDATES, type CandidateRow } from './message-candidates.js';
import { suppressionAdded } from './suppression-change.js';
import { IDENTITY_COLUMNS, transitionOf, type IdentityRow, type MessageEventWriter } from './message-event-writer.js';

export interface ProviderLedgerDeps {
  writeEvent: MessageEventWriter;
  bounces: MessageBounceWriter;
  suppressions: SuppressionRepository;
  changes: ChangeLog;
  ids: IdSource;
  /** Opens the candidates' sealed recipients. */
  seal: BodySeal;
  /**
   * The store's group commit: a request's events are answered once on disk, but concurrent
   * requests share one fsync (Mailgun and Postmark send one event per request).
   */
  commitGroup<T>(fn: () => T): Promise<T>;
}

/** core's PROVIDER_STATE_RANKS in SQL: a stored state of higher rank is never replaced by a lower one. */
const RANK = (value: string): string =>
  `CASE WHEN ${value} IS NULL THEN 0 ${Object.entries(PROVIDER_STATE_RANKS)
    .map(([state, rank]) => `WHEN ${value} = '${state}' THEN ${rank}`)
    .join(' ')} ELSE 0 END`;

/** Message-IDs are stored as the message carries them, `<…>`; providers echo them with or without the brackets. */
const messageIdForms = (value: string): string[] => {
  const bare = value.trim().replace(/^<(.*)>$/, '$1');
  return [`<${bare}>`, bare];
};

/** A provider's id may extend what its 250 reply named (SendGrid: `<queue id>.filter…`): the part before the first dot too. */
const providerIdForms = (value: string): string[] => {
  const head = value.split('.')[0] ?? value;
  return head.length >= 8 && head !== value ? [value, head] : [value];
};

interface SettleRequest {
  tenantId: string;
  items: ReadonlyArray<{ event: ProviderEvent; plan: ProviderPlan | null }>;
  now: number;
}

/** The candidate lookups: one statement per reference kind an event may carry. */
function createCandidateLookup(db: SqliteDatabase, seal: BodySeal): ProviderLedger['candidates'] {
  const toCandidate = candidateReader(db, seal);
  const lookups = {
    mail_id: db.prepare<Record<string, unknown>, CandidateRow>(
      `SELECT tenant_id, pk, id, rcpt_to FROM messages WHERE tenant_id = @tenant AND id = @a AND erased_at IS NULL`,
    ),
    provider_message_id: db.prepare<
      Record<string, unknown>,
      CandidateRow
    >(`SELECT tenant_id, pk, id, rcpt_to FROM messages
      WHERE provider_message_id IN (@a, @b) AND tenant_id = @tenant AND erased_at IS NULL LIMIT ${MAX_CANDIDATES}`),
    message_id: db.prepare<Record<string, unknown>, CandidateRow>(`SELECT tenant_id, pk, id, rcpt_to FROM messages
      WHERE message_id_header IN (@a, @b) AND tenant_id = @tenant LIMIT ${MAX_CANDIDATES}`),
  };
  return (by, value, tenantId) => {
    const forms =
      by === 'message_id' ? messageIdForms(value) : by === 'provider_message_id' ? providerIdForms(value) : [value];
    return lookups[by].all({ tenant: tenantId, a: forms[0], b: forms[1] ?? forms[0] }).map(toCandidate);
  };
}

/** Applies one request's events, each once, inside the caller's transaction. */
function createRequestSettler(
  db: SqliteDatabase,
  deps: ProviderLedgerDeps,
): (request: SettleRequest) => EventOutcome[] {
  const remember =
    db.prepare(`INSERT INTO provider_events (tenant_id, provider, event_id, message_pk, kind, received_at)
    VALUES (@tenant, @provider, @event_id, @pk, @kind, @now) ON CONFLICT DO NOTHING`);
  const identity = db.prepare<[number], IdentityRow>(`SELECT ${IDENTITY_COLUMNS} FROM messages WHERE pk = ?`);
  const setState = db.prepare(`UPDATE messages SET provider_state = @state, provider_state_at = @at, updated_at = @now
    WHERE pk = @pk AND ${RANK('provider_state')} <= ${RANK('@state')}`);

  const settleOne = (tenantId: string, event: ProviderEvent, plan: ProviderPlan | null, now: number): EventOutcome => {
    const row = plan === null ? undefined : identity.get(plan.candidate.pk);
    // About no message of the tenant, or about one removed since it was looked up.
    if (plan === null || row === undefined) return 'unmatched';
    const pk = plan.candidate.pk;
    if (
      remember.run({ tenant: tenantId, provider: event.provider, event_id: event.eventId, pk, kind: event.kind, now })
        .changes === 0
    )
      return 'duplicate';
    {
      if (plan.state !== null) setState.run({ pk, state: plan.state.state, at: plan.state.at, now });
      if (plan.bounce !== null) deps.bounces.bounce(plan.bounce);
      if (plan.complaint !== null) deps.bounces.complaint(plan.complaint);
      if (plan.event !== null)
        deps.writeEvent(transitionOf(row, plan.event.type, event.at, { text: plan.event.text, data: plan.event.data }));
      if (plan.suppression !== null) {
        deps.suppressions.upsert(plan.suppression);
        deps.changes.record(
          suppressionAdded(plan.suppression, deps.suppressions.digestOf(plan.suppression.address), {
            eventId: deps.ids.uuid(),
            tenantId,
            actor: `webhook:${event.provider}`,
            messageId: plan.candidate.id,
          }),
        );
      }
    }
    return 'applied';
  };

  /** One request's events, inside the batch's transaction. */
  return ({ tenantId, items, now }) => items.map(({ event, plan }) => settleOne(tenantId, event, plan, now));
}

/**
 * Requests that arrive in the same turn of the event loop are settled in one transaction (one
 * commit, one fsync): providers that send one event per request send many at once. Each request
 * runs in a savepoint of its own, so that one failing fails only itself.
 */
function createGroupedSettle(
  db: SqliteDatabase,
  deps: ProviderLedgerDeps,
  settleRequest: (request: SettleRequest) => EventOutcome[],
): ProviderLedger['settle'] {
  const inSavepoint = transactionRunner(db);
  let waiting: Array<SettleRequest & { resolve(outcomes: EventOutcome[]): void; reject(error: unknown): void }> = [];
  const flush = (): void => {
    const batch = waiting;
    waiting = [];
    const outcomes = deps.commitGroup(() =>
      batch.map((request) => {
        try {
          return { ok: true as const, outcomes: inSavepoint(() => settleRequest(request)) };
        } catch (error) {
          // SQLITE_FULL, IOERR may roll back the whole transaction, not just the savepoint: then all fail.
          if (!db.inTransaction) throw error;
          return { ok: false as const, error };
        }
      }),
    );
    outcomes.then(
      (results) =>
        results.forEach((result, index) =>
          result.ok ? batch[index]?.resolve(result.outcomes) : batch[index]?.reject(result.error),
        ),
      (error: unknown) => batch.forEach((request) => request.reject(error)),
    );
  };
  return (tenantId, items, now) =>
    new Promise((resolve, reject) => {
      waiting.push({ tenantId, items, now, resolve, reject });
      if (waiting.length === 1) setImmediate(flush);
    });
}

export function createSqliteProviderLedger(db: SqliteDatabase, deps: ProviderLedgerDeps): ProviderLedger {
  const candidates = createCandidateLookup(db, deps.seal);
  const settleRequest = createRequestSettler(db, deps);
  const prune = db.prepare(`DELETE FROM provider_events WHERE received_at < ?`);
  return {
    candidates,
    settle: createGroupedSettle(db, deps, settleRequest),
    prune: (before) => prune.run(before).changes,
  };
}
