/**
 * What one node learns of a relay that the others should act on too (fleet mode): the relay
 * pushed back ("too fast": every node slows down, not only the one that was told), went silent
 * past the account's `failover_after_seconds` (every node fails over at once rather than each
 * finding out by its own failed sends), or answers again (every node takes its mail back). A port:
 * the fleet carries the signals between nodes; a single node has none.
 */

export type RelaySignal =
  | { kind: 'pushback'; tenantId: string; accountId: string; at: number; hintMs: number | null }
  | { kind: 'unreachable'; tenantId: string; accountId: string; since: number }
  | { kind: 'answering'; tenantId: string; accountId: string; at: number };

export interface RelaySignals {
  /** This node saw it: the other nodes are told (best effort: a signal lost costs each node its own finding out). */
  tell(signal: RelaySignal): void;
  /** What another node saw, as it comes. */
  hear(listener: (signal: RelaySignal) => void): void;
}
