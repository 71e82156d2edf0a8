/**
 * Verified provider events applied to the tenant's messages: first to those held here (correlated,
 * planned, settled once each), then, in a fleet, the ones no message here matched to the other nodes.
 */
import type { BouncePolicy } from '../../core/bounce/index.js';
import type { Clock, Logger } from '../../core/index.js';
import {
  type EventOutcome,
  type ProviderEvent,
  type ProviderLedger,
  correlateProviderEvent,
  planProviderEvent,
} from '../../core/provider/index.js';

export interface EventSettlementDeps {
  ledger: ProviderLedger;
  policy: BouncePolicy;
  /**
   * Fleet mode: the other nodes, asked to apply the events no message here matched (a message lives
   * on the node that took it). One outcome per event; throws when a node that may hold some cannot
   * be asked. Absent on a single node.
   */
  elsewhere?: (tenantId: string, events: readonly ProviderEvent[]) => Promise<EventOutcome[]>;
  clock: Clock;
  log: Logger;
}

export interface EventSettlement {
  /** Applied to the messages held here; one outcome per event. */
  here(tenantId: string, events: readonly ProviderEvent[]): Promise<EventOutcome[]>;
  /**
   * Here first; in a fleet, the events no message here matched go to the other nodes. Null when a
   * node that may hold some of them cannot be asked: the provider is answered 503 and delivers the
   * request again (what was applied meanwhile is applied once).
   */
  everywhere(tenantId: string, events: readonly ProviderEvent[]): Promise<EventOutcome[] | null>;
}

export function createEventSettlement(deps: EventSettlementDeps): EventSettlement {
  const here = async (tenantId: string, events: readonly ProviderEvent[]): Promise<EventOutcome[]> => {
    if (events.length === 0) return [];
    const now = deps.clock.now();
    const items = events.map((event) => {
      const correlation = correlateProviderEvent(event, (by, value) => deps.ledger.candidates(by, value, tenantId));
      return {
        event,
        plan: correlation.matched
          ? planProviderEvent(event, correlation.candidate, correlation.by, deps.policy, now)
          : null,
      };
    });
    return deps.ledger.settle(tenantId, items, now);
  };

  const everywhere = async (tenantId: string, events: readonly ProviderEvent[]): Promise<EventOutcome[] | null> => {
    const outcomes = await here(tenantId, events);
    const missing = outcomes.flatMap((outcome, index) => (outcome === 'unmatched' ? [index] : []));
    if (deps.elsewhere === undefined || missing.length === 0) return outcomes;
    try {
      const there = await deps.elsewhere(
        tenantId,
        missing.map((index) => events[index] as ProviderEvent),
      );
      missing.forEach((index, position) => (outcomes[index] = there[position] ?? 'unmatched'));
      return outcomes;
    } catch (error) {
      deps.log.warn(
        { err: error, tenantId, events: missing.length },
        'provider events for other fleet nodes could not be delivered to all of them',
      );
      return null;
    }
  };

  return { here, everywhere };
}
