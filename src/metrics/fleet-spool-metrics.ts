/**
 * A fleet node's replicated spool in the metrics: the waiting messages against
 * the entries the cluster holds for them (at the last check), the entries not
 * taken yet, and the messages found without an entry and written again. Not
 * registered on a single node or a fleet node without the spool.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export interface FleetSpoolHealth {
  /** At the last check (null before the first): messages waiting here, and how many had a replayable entry. */
  checked: { waiting: number; entries: number } | null;
  /** Entries the cluster has not taken yet. */
  pending: number;
  /** Waiting messages found without an entry and written again since the start. */
  repaired: number;
}

export function registerFleetSpoolMetrics(registers: Registry[], health: () => FleetSpoolHealth): void {
  new Gauge({
    name: 'mailproxy_fleet_spool_waiting_messages',
    help: 'Fleet mode: messages waiting on this node at the last check of its replicated spool',
    registers,
    collect() {
      const checked = health().checked;
      if (checked !== null) this.set(checked.waiting);
    },
  });
  new Gauge({
    name: 'mailproxy_fleet_spool_entries',
    help: 'Fleet mode: of those, how many had an entry a survivor would replay (less than waiting: a defect, repaired)',
    registers,
    collect() {
      const checked = health().checked;
      if (checked !== null) this.set(checked.entries);
    },
  });
  new Gauge({
    name: 'mailproxy_fleet_spool_pending_entries',
    help: 'Fleet mode: entries of waiting messages the cluster has not taken yet',
    registers,
    collect() {
      this.set(health().pending);
    },
  });
  new Counter({
    name: 'mailproxy_fleet_spool_repaired_total',
    help: 'Fleet mode: waiting messages found without a replicated spool entry and written again',
    registers,
    collect() {
      this.reset();
      this.inc(health().repaired);
    },
  });
}
