/**
 * The enqueue use-case: a request's messages are checked against the caller's
 * tenant, the tenant's accounts, its suppression list and the idempotency rule,
 * then the valid ones are committed together before anyone is told "queued".
 */
import { AppError } from './app-error.js';
import type { Clock, IdSource } from './clock.js';
import type { NewMessage, PriorityLabel } from './message.js';
import type { AdminStore } from './ports.js';
import type { Principal } from './principal.js';
import type { MessageAdmin } from './message-admin.js';
import type { MessageQueue } from './queue.js';
import { refusal, rejection, type Rejection } from './rejection.js';
import { admissionProblems, isRefusal, resolve, tenantContext, type Candidate, type SubmissionItem, type TenantContext } from './submission-admission.js';

export type { SubmissionItem } from './submission-admission.js';
export type { Rejection, RejectionCode } from './rejection.js';

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
  /** Written in the same transaction as the request's messages (an inbox row: processed once). */
  alongside: ((result: SubmissionResult) => void) | undefined;
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
      if (isRefusal(outcome)) {
        rejected.push(rejection(item.index, item.id, outcome));
        continue;
      }
      const key = `${outcome.tenantId}\u0000${outcome.id}`;
      if (seen.has(key)) {
        rejected.push(rejection(item.index, item.id, refusal('DUPLICATE_ID')));
        continue;
      }
      seen.add(key);
      accepted.push(outcome);
    }

    const problems = admissionProblems(accepted, queue, now);
    const admissible = accepted.filter((message) => {
      const code = problems.get(message);
      if (code !== undefined) rejected.push(rejection(message.index, message.id, refusal(code)));
      return code === undefined;
    });
    // The idempotency rule is kept by the store as it writes: an id that is no longer
    // waiting is left as it is (asking first cost a query per message).
    const { notWaiting } = queue.enqueue(admissible, now, correlationId);
    for (const message of notWaiting) rejected.push(rejection(message.index, message.id, refusal('ALREADY_SENT')));
    const queued = notWaiting.length === 0 ? admissible : admissible.filter((message) => !notWaiting.includes(message));
    rejected.sort((a, b) => a.index - b.index);
    const result = { queued: queued.length, rejected };
    request.alongside?.(result);
    return { result, sendable: queued.filter((message) => !message.suspended) };
  };

  // Only after the commit: the dispatcher must find what it is told about. Suspended
  // mail is not its business until activated (the activation wakes it).
  const wakeFor = (admitted: readonly Admitted[]): void => {
    const accounts = admitted.flatMap(({ sendable }) =>
      sendable.map((message) => ({ tenantId: message.tenantId, accountId: message.accountId, priority: message.priority })),
    );
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
    store
      .commitGroup(() => {
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
      })
      .then(
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
    enqueue(
      principal: Principal,
      items: readonly SubmissionItem[],
      defaultPriority: number | PriorityLabel | undefined,
      correlationId: string | null,
      alongside?: (result: SubmissionResult) => void,
    ): Promise<SubmissionResult> {
      return new Promise((resolve, reject) => {
        waiting.push({ principal, items, defaultPriority, correlationId, alongside, resolve, reject });
        if (waiting.length === 1) deps.defer(flush);
      });
    },
  };
}

export type SubmissionService = ReturnType<typeof createSubmissionService>;

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
