/**
 * Fleet mode's gauges: each node's waiting messages labelled `node`,
 * the fleet's total, and whether each node answered the scrape's question.
 * Asked of every node at scrape time; not registered on a single node.
 */
import { Gauge, type Registry } from 'prom-client';
import type { FleetQueues } from '../core/fleet/index.js';

/** `scraped()` at the start of each scrape: the three gauges then share one question to the fleet. */
export function registerFleetGauges(registers: Registry[], queues: () => Promise<FleetQueues>): { scraped(): void } {
  let asked: Promise<FleetQueues> | null = null;
  const read = (): Promise<FleetQueues> => (asked ??= queues());

  new Gauge({
    name: 'mailproxy_fleet_node_waiting_messages',
    help: 'Fleet mode: waiting messages on each node that answered, by status',
    labelNames: ['node', 'status'],
    registers,
    async collect() {
      const fleet = await read();
      this.reset();
      for (const [node, queue] of Object.entries(fleet.nodes))
        for (const [status, count] of Object.entries(queue.by_status)) this.set({ node, status }, count);
    },
  });
  new Gauge({
    name: 'mailproxy_fleet_waiting_messages',
    help: 'Fleet mode: waiting messages over the nodes that answered, by status',
    labelNames: ['status'],
    registers,
    async collect() {
      const fleet = await read();
      this.reset();
      for (const [status, count] of Object.entries(fleet.total.by_status)) this.set({ status }, count);
    },
  });
  new Gauge({
    name: 'mailproxy_fleet_node_answered',
    help: 'Fleet mode: 1 for each node that answered this scrape, 0 for a known node that did not (its messages are not in the totals)',
    labelNames: ['node'],
    registers,
    async collect() {
      const fleet = await read();
      this.reset();
      for (const node of Object.keys(fleet.nodes)) this.set({ node }, 1);
      for (const node of fleet.missing_nodes) this.set({ node }, 0);
    },
  });
  return {
    scraped() {
      asked = null;
    },
  };
}
