/**
 * Fleet mode's part of a dispatcher step: the account as this node
 * may use it (its share of the connections) and the usage its claim plan
 * sees (the lease folded in). Without a gate (a single node) neither is
 * called: the step is today's, at today's cost.
 */
import type { Account, Limits, Usage } from '../core/account/index.js';
import type { FleetLimitGate } from '../core/fleet/index.js';
import type { MessageQueue } from '../core/message/index.js';

/** The account with this node's share of its connections (the same object when the share is the whole). */
export function sharedAccount(gate: FleetLimitGate, account: Account, now: number): Account {
  const share = gate.connections(account, now);
  return share === account.maxConnections ? account : { ...account, maxConnections: share };
}

/**
 * The usage to plan with, or when to look again: a spent lease waits for the
 * next chunk (asked for here when mail is due; its grant wakes the
 * dispatcher), never rejects for it.
 */
export function fleetUsage(
  gate: FleetLimitGate,
  queue: Pick<MessageQueue, 'nextDueAt'>,
  account: Account,
  limits: Limits,
  local: Usage,
  now: number,
): { usage: Usage } | { wakeAt: number | null } {
  const budget = gate.budget(account, limits, local, now);
  if (budget.kind === 'usage') return { usage: budget.usage };
  const due = queue.nextDueAt(account.tenantId, account.id);
  if (due === null) return { wakeAt: null };
  if (due > now) return { wakeAt: due };
  gate.want(account, limits, now);
  return { wakeAt: null };
}
