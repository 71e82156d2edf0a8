/**
 * The enqueue use-case: a request's messages are checked against the caller's
 * tenant, the tenant's accounts, its suppression list and the idempotency rule,
 * then the valid ones are committed together before anyone is told "queued".
 */
import { defaultAccount, type AccountChoice } from './account.js';
import { AppError } from './app-error.js';
import { normalizeAddress } from './address.js';
import type { Clock, IdSource } from './clock.js';
import { toPriority, WAITING_STATES, type NewMessage, type PriorityLabel } from './message.js';
import type { AdminStore } from './ports.js';
import type { Principal } from './principal.js';
import type { MessageAdmin } from './message-admin.js';
import { WHOLE_TENANT } from './message-commands.js';
import type { MessageQueue } from './queue.js';

/** One message as the edge parsed it; `problem` set when its shape was already invalid. */
export interface SubmissionItem {
  /** Position in the request, so a client can match a rejection without an id. */
  index: number;
  id: string | null;
  problem?: string;
  tenantId?: string;
  accountId?: string;
  priority?: number | PriorityLabel;
  message?: Omit<NewMessage, 'tenantId' | 'accountId' | 'priority' | 'suspended'>;
}

export interface Rejection {
  index: number;
  id: string | null;
  reason: string;
}

export interface SubmissionResult {
  queued: number;
  rejected: Rejection[];
}

export interface SubmissionServiceDeps {
  store: AdminStore;
  queue: MessageQueue;
  /** The tenant's suspended batch codes, read inside the commit group's transaction. */
  messages: Pick<MessageAdmin, 'suspensions'>;
  clock: Clock;
  ids: IdSource;
  /** Tells the dispatcher that work arrived for these accounts. */
  wake: (accounts: ReadonlyArray<{ tenantId: string; accountId: string; priority: number }>) => void;
  /**
   * Runs `fn` once the submissions that are ready right now have all been
   * handed over (setImmediate); they are then committed together.
   */
  defer: (fn: () => void) => void;
}

interface Admitted {
  result: SubmissionResult;
  /** Admitted messages the dispatcher may have to send (not those that entered suspended). */
  sendable: NewMessage[];
}

interface Waiting {
  principal: Principal;
  items: readonly SubmissionItem[];
  defaultPriority: number | PriorityLabel | undefined;
  correlationId: string | null;
  resolve: (result: SubmissionResult) => void;
  reject: (error: unknown) => void;
}

export function createSubmissionService(deps: SubmissionServiceDeps) {
  const { store, queue, clock } = deps;
  let waiting: Waiting[] = [];

  /**
   * Checks and enqueues one request's messages, inside the caller's transaction.
   * `tenantOf` is shared by the requests of one commit group.
   */
  const admit = (request: Waiting, tenantOf: (tenantId: string) => TenantContext | null): Admitted => {
    const { principal, items, defaultPriority, correlationId } = request;
    const now = clock.now();
    const rejected: Rejection[] = [];
    const accepted: Candidate[] = [];
    const seen = new Set<string>();

    for (const item of items) {
      const outcome = resolve(item, principal, tenantOf, defaultPriority, deps.ids);
      if (typeof outcome === 'string') {
        rejected.push({ index: item.index, id: item.id, reason: outcome });
        continue;
      }
      const key = `${outcome.tenantId}\u0000${outcome.id}`;
      if (seen.has(key)) {
        rejected.push({ index: item.index, id: item.id, reason: 'duplicate id in this request' });
        continue;
      }
      seen.add(key);
      accepted.push(outcome);
    }

    const problems = admissionProblems(accepted, queue, now);
    const admissible = accepted.filter((message) => {
      const reason = problems.get(message) ?? null;
      if (reason !== null) rejected.push({ index: message.index, id: message.id, reason });
      return reason === null;
    });
    // The idempotency rule is kept by the store as it writes: an id that is no longer
    // waiting is left as it is (asking first cost a query per message).
    const { notWaiting } = queue.enqueue(admissible, now, correlationId);
    for (const message of notWaiting) rejected.push({ index: message.index, id: message.id, reason: 'already sent' });
    const queued = notWaiting.length === 0 ? admissible : admissible.filter((message) => !notWaiting.includes(message));
    rejected.sort((a, b) => a.index - b.index);
    return { result: { queued: queued.length, rejected }, sendable: queued.filter((message) => !message.suspended) };
  };

  // Only after the commit: the dispatcher must find what it is told about. Suspended
  // mail is not its business until activated (the activation wakes it).
  const wakeFor = (admitted: readonly Admitted[]): void => {
    const accounts = admitted.flatMap(({ sendable }) => sendable.map((message) => ({ tenantId: message.tenantId, accountId: message.accountId, priority: message.priority })));
    if (accounts.length > 0) deps.wake(accounts);
  };

  /**
   * Group commit: every request that became ready in the same turn is written
   * in one transaction, so that the fsync is shared. Nobody hears "queued"
   * before that commit is durable; while the disk syncs, the next group is
   * gathered.
   *
   * A request that fails (a bug, a constraint) must fail alone. The group is
   * first written without savepoints: a savepoint per request cost a quarter of
   * the store's time per message (SQLite journals every page a request touches
   * again), and failures are rare. When one request throws, that transaction is
   * rolled back and the group is written again with a savepoint per request.
   */
  const commit = (batch: readonly Waiting[], isolated: boolean): void => {
    const outcomes: Array<{ admitted: Admitted } | { error: unknown }> = [];
    // Inside the transaction, so an account saved meanwhile cannot be half seen.
    const tenantOf = memoize((tenantId: string) => tenantContext(tenantId, store, deps.messages));
    store.commitGroup(() => {
      if (!isolated) {
        for (const request of batch) outcomes.push({ admitted: admit(request, tenantOf) });
        return;
      }
      for (const request of batch) {
        try {
          outcomes.push({ admitted: store.transaction(() => admit(request, tenantOf)) });
        } catch (error) {
          if (isStoreUnavailable(error)) throw error;
          outcomes.push({ error });
        }
      }
    }).then(
      () => {
        wakeFor(outcomes.flatMap((outcome) => ('admitted' in outcome ? [outcome.admitted] : [])));
        batch.forEach((request, index) => {
          const outcome = outcomes[index];
          if (outcome !== undefined && 'admitted' in outcome) request.resolve(outcome.admitted.result);
          else request.reject(outcome?.error);
        });
      },
      (error: unknown) => {
        // Nothing of the group was committed. A store that cannot write fails all of it;
        // anything else was one request's failure: the group is written again, each alone.
        if (!isolated && !isStoreUnavailable(error)) return commit(batch, true);
        for (const request of batch) request.reject(error);
      },
    );
  };

  const flush = (): void => {
    const batch = waiting;
    waiting = [];
    commit(batch, false);
  };

  return {
    /**
     * Commits this request's valid messages, together with the other requests
     * ready in the same turn, and only then resolves.
     */
    enqueue(principal: Principal, items: readonly SubmissionItem[], defaultPriority: number | PriorityLabel | undefined, correlationId: string | null): Promise<SubmissionResult> {
      return new Promise((resolve, reject) => {
        waiting.push({ principal, items, defaultPriority, correlationId, resolve, reject });
        if (waiting.length === 1) deps.defer(flush);
      });
    },
  };
}

export type SubmissionService = ReturnType<typeof createSubmissionService>;

/** What admission needs of a tenant, read once per commit group. */
interface TenantContext {
  accounts: AccountChoice[];
  /** Whether a message of this batch enters suspended. */
  holds(batchCode: string | null): boolean;
}

function tenantContext(tenantId: string, store: AdminStore, messages: Pick<MessageAdmin, 'suspensions'>): TenantContext | null {
  // Only what admission needs: the whole tenant row would open its client credentials.
  const active = store.tenants.isActive(tenantId);
  if (active === null) return null;
  const suspensions = new Set(messages.suspensions(tenantId));
  const whole = !active || suspensions.has(WHOLE_TENANT);
  return {
    accounts: store.accounts.choices(tenantId),
    holds: (batchCode) => whole || (batchCode !== null && suspensions.has(batchCode)),
  };
}

/** A message ready for admission, and its place in the request. */
type Candidate = NewMessage & { index: number };

function resolve(
  item: SubmissionItem,
  principal: Principal,
  tenantOf: (tenantId: string) => TenantContext | null,
  defaultPriority: number | PriorityLabel | undefined,
  ids: IdSource,
): Candidate | string {
  if (item.problem !== undefined || item.message === undefined || item.id === null) return item.problem ?? 'invalid message';
  const tenantId = principal.kind === 'tenant' ? principal.tenantId : item.tenantId;
  if (tenantId === undefined) return 'tenant_id is required';
  // A tenant key naming another tenant learns nothing about it.
  if (principal.kind === 'tenant' && item.tenantId !== undefined && item.tenantId !== principal.tenantId) return 'unknown tenant';
  const tenant = tenantOf(tenantId);
  if (tenant === null) return 'unknown tenant';
  const { accounts } = tenant;
  const account = item.accountId === undefined ? defaultAccount(accounts) : accounts.find((candidate) => candidate.id === item.accountId);
  if (account === undefined) {
    return item.accountId === undefined ? 'account_id is required: the tenant has no default account' : 'unknown account';
  }
  const { message } = item;
  // Every field named (no spread): one object shape for every message, which the
  // engine copies and reads faster; a field added to NewMessage fails to compile here.
  return {
    index: item.index,
    tenantId,
    id: message.id,
    accountId: account.id,
    priority: toPriority(item.priority ?? defaultPriority ?? 2),
    batchCode: message.batchCode,
    deferredUntil: message.deferredUntil,
    content: message.content,
    subject: message.subject,
    messageId: message.messageId ?? generatedMessageId(message.mailFrom, ids),
    mailFrom: message.mailFrom,
    rcptTo: message.rcptTo,
    sizeBytes: message.sizeBytes,
    suspended: tenant.holds(message.batchCode),
  };
}

/**
 * Fixes the Message-ID at submission, so that every attempt (a retry, a resend
 * after a crash) carries the same one and receivers can recognise a repeat.
 */
function generatedMessageId(mailFrom: string, ids: IdSource): string {
  const domain = mailFrom.slice(mailFrom.lastIndexOf('@') + 1) || 'mailproxy.invalid';
  return `<${ids.uuid()}@${domain}>`;
}

/**
 * Suppression, looked up once per tenant for the whole request. A message with a
 * suppressed recipient whose id was already handed off is "already sent" (a
 * client repeating itself), as the store would say of it without a suppression.
 */
function admissionProblems(messages: readonly NewMessage[], queue: MessageQueue, now: number): Map<NewMessage, string> {
  const problems = new Map<NewMessage, string>();
  const byTenant = new Map<string, NewMessage[]>();
  for (const message of messages) {
    const group = byTenant.get(message.tenantId);
    if (group === undefined) byTenant.set(message.tenantId, [message]);
    else group.push(message);
  }
  for (const [tenantId, group] of byTenant) {
    const suppressed = queue.suppressed(tenantId, group.flatMap((message) => message.rcptTo), now);
    if (suppressed.size === 0) continue;
    const held = group.filter((message) => message.rcptTo.some((address) => suppressed.has(normalizeAddress(address))));
    if (held.length === 0) continue;
    const states = queue.states(tenantId, held.map((message) => message.id));
    for (const message of held) {
      const state = states.get(message.id);
      problems.set(message, state !== undefined && !WAITING_STATES.includes(state) ? 'already sent' : 'suppressed');
    }
  }
  return problems;
}

function isStoreUnavailable(error: unknown): boolean {
  return error instanceof AppError && error.code === 'STORE_UNAVAILABLE';
}

function memoize<T>(load: (key: string) => T): (key: string) => T {
  const cache = new Map<string, T>();
  return (key) => {
    if (!cache.has(key)) cache.set(key, load(key));
    return cache.get(key) as T;
  };
}
