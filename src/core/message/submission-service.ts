/**
 * The enqueue use-case: a request's messages are checked against the caller's
 * tenant, the tenant's accounts, its suppression list and the idempotency rule,
 * then the valid ones are committed together before anyone is told "queued".
 */
import { AppError } from '../app-error.js';
import type { Clock, IdSource } from '../clock.js';
import type { PriorityLabel } from './message.js';
import type { AdminStore } from '../ports.js';
import type { Principal } from '../tenant/principal.js';
import type { MessageAdmin } from './admin.js';
import type { MessageQueue } from './queue.js';
import { tenantContext, type SubmissionItem } from './submission-admission.js';
import {
  admitRequest,
  wakeFor,
  type Admitted,
  type SubmissionRequest,
  type SubmissionResult,
} from './submission-request.js';

export type { SubmissionItem } from './submission-admission.js';
export type { SubmissionResult } from './submission-request.js';

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

interface Waiting extends SubmissionRequest {
  resolve: (result: SubmissionResult) => void;
  reject: (error: unknown) => void;
}

type Outcome = { admitted: Admitted } | { error: unknown };

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
function commit(deps: SubmissionServiceDeps, batch: readonly Waiting[], isolated: boolean): Promise<void> {
  const { store } = deps;
  const outcomes: Outcome[] = [];
  // Inside the transaction, so an account saved meanwhile cannot be half seen.
  const tenantOf = memoize((tenantId: string) => tenantContext(tenantId, store, deps.messages));
  return store
    .commitGroup(() => {
      if (!isolated) {
        for (const request of batch) outcomes.push({ admitted: admitRequest(deps, request, tenantOf) });
        return;
      }
      for (const request of batch) {
        try {
          outcomes.push({ admitted: store.transaction(() => admitRequest(deps, request, tenantOf)) });
        } catch (error) {
          if (isStoreUnavailable(error)) throw error;
          outcomes.push({ error });
        }
      }
    })
    .then(
      () => {
        wakeFor(
          deps.wake,
          outcomes.flatMap((outcome) => ('admitted' in outcome ? [outcome.admitted] : [])),
        );
        answerGroup(batch, outcomes);
      },
      (error: unknown) => {
        // Nothing of the group was committed. A store that cannot write fails all of it;
        // anything else was one request's failure: the group is written again, each alone.
        if (!isolated && !isStoreUnavailable(error)) return commit(deps, batch, true);
        for (const request of batch) request.reject(error);
      },
    );
}

export function createSubmissionService(deps: SubmissionServiceDeps) {
  let waiting: Waiting[] = [];

  /**
   * One group at a time: requests that arrive while a group is being committed and synced wait
   * for it, then go in the next group together. They would have waited as long anyway (their
   * commit, made at once, is durable only with the fsync after the running one), and the
   * commits, each of which writes every page it touched to the WAL, are fewer.
   */
  let committing = false;
  const flush = (): void => {
    if (committing || waiting.length === 0) return;
    const batch = waiting;
    waiting = [];
    committing = true;
    void commit(deps, batch, false).finally(() => {
      committing = false;
      flush();
    });
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

/** Each request of a committed group hears its own outcome. */
function answerGroup(batch: readonly Waiting[], outcomes: readonly Outcome[]): void {
  batch.forEach((request, index) => {
    const outcome = outcomes[index];
    if (outcome !== undefined && 'admitted' in outcome) request.resolve(outcome.admitted.result);
    else request.reject(outcome?.error);
  });
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
