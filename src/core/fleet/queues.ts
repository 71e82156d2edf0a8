/**
 * The queue of each node and of the whole fleet (GET /status and
 * /metrics show each node and the fleet total). Each node counts its own
 * waiting messages; the asking node adds them up. Pure.
 */
import type { QueueCount, WaitingStatus } from '../message/queue-status.js';

/** One node's waiting messages: in all, and by status. */
export interface NodeQueue {
  waiting: number;
  by_status: Record<WaitingStatus, number>;
}

export interface FleetQueues {
  /** Each node that answered, by node id. */
  nodes: Record<string, NodeQueue>;
  /** The sum over the nodes that answered. */
  total: NodeQueue;
  /** Known nodes that are not alive or did not answer in time: not in the total. */
  missing_nodes: string[];
}

const empty = (): NodeQueue => ({ waiting: 0, by_status: { queued: 0, deferred: 0, sending: 0, suspended: 0 } });

export function nodeQueue(counts: readonly QueueCount[]): NodeQueue {
  const queue = empty();
  for (const row of counts) {
    queue.waiting += row.count;
    queue.by_status[row.status] += row.count;
  }
  return queue;
}

export function fleetQueues(nodes: Record<string, NodeQueue>, missing: string[]): FleetQueues {
  const total = empty();
  for (const queue of Object.values(nodes)) {
    total.waiting += queue.waiting;
    for (const status of Object.keys(total.by_status) as WaitingStatus[])
      total.by_status[status] += queue.by_status[status] ?? 0;
  }
  return { nodes, total, missing_nodes: missing };
}
