/**
 * The store's side of provider events: candidates for an event's
 * references within the tenant, and the one durable transaction that applies
 * a request's events, each at most once.
 */
import type { MessageCandidate } from '../bounce/bounce.js';
import type { EventOutcome, ProviderEvent } from './events.js';
import type { ProviderMatchedBy, ProviderPlan } from './plan.js';

export interface ProviderLedger {
  candidates(by: ProviderMatchedBy, value: string, tenantId: string): MessageCandidate[];
  /**
   * In one transaction, answered once it is on disk: each event with a plan is applied unless the tenant's
   * ledger already holds its (provider, event id); one outcome per item, in order.
   */
  settle(
    tenantId: string,
    items: ReadonlyArray<{ event: ProviderEvent; plan: ProviderPlan | null }>,
    now: number,
  ): Promise<EventOutcome[]>;
  /** Forgets applied events received before `before` (their effects stay); how many. */
  prune(before: number): number;
}
