/**
 * One submission request admitted: each message resolved against the caller's tenant
 * and accounts, checked (duplicates, suppressions, limits) and enqueued, inside the
 * commit group's transaction. Part of the submission service (submission-service.ts).
 */
import type { Clock, IdSource } from '../clock.js';
import type { NewMessage, PriorityLabel } from './message.js';
import type { Principal } from '../tenant/principal.js';
import type { MessageQueue } from './queue.js';
import { refusal, rejection, type Rejection } from './rejection.js';
import {
  admissionProblems,
  isRefusal,
  resolve,
  type Candidate,
  type SubmissionItem,
  type TenantContext,
} from './submission-admission.js';

export interface SubmissionResult {
  queued: number;
  rejected: Rejection[];
}

interface AdmissionDeps {
  queue: MessageQueue;
  clock: Clock;
  ids: IdSource;
  /** Tells the dispatcher that work arrived for these accounts. */
  wake: (accounts: ReadonlyArray<{ tenantId: string; accountId: string; priority: number }>) => void;
}

export interface SubmissionRequest {
  principal: Principal;
  items: readonly SubmissionItem[];
  defaultPriority: number | PriorityLabel | undefined;
  correlationId: string | null;
  /** Written in the same transaction as the request's messages (an inbox row: processed once). */
  alongside: ((result: SubmissionResult) => void) | undefined;
}

export interface Admitted {
  result: SubmissionResult;
  /** Admitted messages the dispatcher may have to send (not those that entered suspended). */
  sendable: NewMessage[];
}

/**
 * Checks and enqueues one request's messages, inside the caller's transaction.
 * `tenantOf` is shared by the requests of one commit group.
 */
export function admitRequest(
  { queue, clock, ids }: AdmissionDeps,
  request: SubmissionRequest,
  tenantOf: (tenantId: string) => TenantContext | null,
): Admitted {
  const { principal, items, defaultPriority, correlationId } = request;
  const now = clock.now();
  const rejected: Rejection[] = [];
  const accepted: Candidate[] = [];
  const seen = new Set<string>();

  for (const item of items) {
    const outcome = resolve(item, principal, tenantOf, defaultPriority, ids);
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
}

// Only after the commit: the dispatcher must find what it is told about. Suspended
// mail is not its business until activated (the activation wakes it).
export function wakeFor(wake: AdmissionDeps['wake'], admitted: readonly Admitted[]): void {
  const accounts = admitted.flatMap(({ sendable }) =>
    sendable.map((message) => ({
      tenantId: message.tenantId,
      accountId: message.accountId,
      priority: message.priority,
    })),
  );
  if (accounts.length > 0) wake(accounts);
}
