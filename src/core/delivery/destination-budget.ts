/**
 * Per-destination limits at claim time: which due messages of an account may be claimed now,
 * and until when each of the others is held. A message is claimed only when every limited
 * destination among its recipients has budget in every window (it counts against each: it is
 * sent whole, once); otherwise it is held, queued, until the budget of the last one returns,
 * without spending an attempt. Pure: usage, leases and time come in; the caller keeps `tails`.
 *
 * Held messages are spread over the windows to come (GCRA-like: one slot every window / limit),
 * so that a backlog of thousands for one destination is held once each rather than all of it
 * again at every window's start; each priority has its own spread, and priority 0 (and a message
 * held once already) goes to the front, where the claim takes it in priority order.
 */
import { destinationsOf, destinationWindows, type DestinationLimit } from '../account/destination-limit.js';
import {
  availableBudget,
  budgetReturnsAt,
  WINDOW_KINDS,
  WINDOW_MS,
  windowStart,
  type Usage,
  type WindowKind,
} from '../account/rate-limit.js';

/**
 * The most messages one claim holds: a backlog for a spent destination is held over several
 * claims (the step runs again at once), so that no one transaction runs long.
 */
export const MAX_HOLDS_PER_CLAIM = 500;

/** Fleet mode: a destination whose lease is spent waits this long for its next chunk before it is looked at again. */
export const AWAITING_LEASE_HOLD_MS = 1000;

export interface DestinationBudgetInput {
  limits: readonly DestinationLimit[];
  /** Counted in the windows that contain `now`, per destination name (fleet leases folded in); absent: none used. */
  usage: ReadonlyMap<string, Usage>;
  /** Fleet mode: destinations whose lease is spent while the fleet may have more. */
  awaiting?: ReadonlySet<string>;
  /** Fleet mode: destinations whose budget here is this node's lease, not the window's: spent, they await the next chunk. */
  leaseBound?: ReadonlySet<string>;
  /** Per destination and priority, the next slot of the spread (kept by the caller from claim to claim). */
  tails: Map<string, number>;
  now: number;
}

export interface Candidate {
  /** The message's recipient domains (core/account/destination-limit.ts recipientDomains). */
  domains: readonly string[];
  priority: number;
  /** Held for a destination before: it is at the front of its spread already. */
  heldBefore: boolean;
}

export type Admission =
  /** `destinations`: the names it counts against (none when no rule holds it). */
  | { kind: 'claim'; destinations: string[] }
  /** Held for `destination` (the one whose budget returns last) until `until` (epoch ms). */
  | { kind: 'hold'; destination: string; until: number };

const ZERO: Usage = { minute: 0, hour: 0, day: 0 };

const plus = (usage: Usage, more: number): Usage =>
  more === 0 ? usage : { minute: usage.minute + more, hour: usage.hour + more, day: usage.day + more };

/**
 * How far apart held messages are spread: one per window / limit of the exhausted window whose end
 * comes last (the one they wait for), or, with none exhausted (a fleet lease awaited), of the
 * shortest limited window: the fastest pace the destination allows.
 */
function spacing(limit: DestinationLimit, used: Usage, now: number): number {
  const windows = destinationWindows(limit);
  let binding: { kind: WindowKind; end: number } | null = null;
  for (const kind of WINDOW_KINDS) {
    const max = windows[kind];
    if (max === null || used[kind] < max) continue;
    const end = windowStart(kind, now) + WINDOW_MS[kind];
    if (binding === null || end >= binding.end) binding = { kind, end };
  }
  const kind = binding?.kind ?? WINDOW_KINDS.find((candidate) => windows[candidate] !== null) ?? 'minute';
  return WINDOW_MS[kind] / (windows[kind] ?? 1);
}

export interface DestinationBudget {
  /** The decision for one due message, counted as claimed when it is claimed. */
  admit(candidate: Candidate): Admission;
  /** How many were admitted per destination: what the store adds to its usage. */
  taken(): ReadonlyMap<string, number>;
  /** Held as many as one claim may: the claim stops, and the step runs again at once. */
  full(): boolean;
  /** The destinations it held a message for (fleet mode asks for their next chunk). */
  heldFor(): ReadonlySet<string>;
}

export function destinationBudget(input: DestinationBudgetInput): DestinationBudget {
  const { limits, usage, now, tails } = input;
  const taken = new Map<string, number>();
  let holds = 0;
  const heldFor = new Set<string>();
  const usedOf = (limit: DestinationLimit): Usage => plus(usage.get(limit.name) ?? ZERO, taken.get(limit.name) ?? 0);

  const awaitsLease = (limit: DestinationLimit): boolean =>
    input.awaiting?.has(limit.name) === true || input.leaseBound?.has(limit.name) === true;

  /**
   * When a message held for `limit` may go: the window's end (or, awaiting a fleet lease, a moment
   * from now), or, for one not held before and not of priority 0, its slot in the spread after it.
   */
  const holdUntil = (limit: DestinationLimit, candidate: Candidate): { until: number; tail: string | null } => {
    const used = usedOf(limit);
    const from = awaitsLease(limit)
      ? now + AWAITING_LEASE_HOLD_MS
      : (budgetReturnsAt(destinationWindows(limit), used, now) ?? now);
    if (candidate.heldBefore || candidate.priority === 0) return { until: from, tail: null };
    const key = `${limit.name}\u0000${candidate.priority}`;
    return { until: Math.max(tails.get(key) ?? 0, from), tail: key };
  };

  return {
    admit(candidate) {
      const held = destinationsOf(limits, candidate.domains);
      const exhausted = held.filter(
        (limit) =>
          input.awaiting?.has(limit.name) === true || availableBudget(destinationWindows(limit), usedOf(limit)) === 0,
      );
      if (exhausted.length === 0) {
        for (const limit of held) taken.set(limit.name, (taken.get(limit.name) ?? 0) + 1);
        return { kind: 'claim', destinations: held.map((limit) => limit.name) };
      }
      let last: { limit: DestinationLimit; until: number; tail: string | null } | null = null;
      for (const limit of exhausted) {
        const slot = holdUntil(limit, candidate);
        if (last === null || slot.until > last.until) last = { limit, ...slot };
      }
      const chosen = last as { limit: DestinationLimit; until: number; tail: string | null };
      // The next held message of this priority takes the slot after: one per window / limit.
      if (chosen.tail !== null) tails.set(chosen.tail, chosen.until + spacing(chosen.limit, usedOf(chosen.limit), now));
      holds += 1;
      heldFor.add(chosen.limit.name);
      return { kind: 'hold', destination: chosen.limit.name, until: Math.ceil(chosen.until) };
    },
    taken: () => taken,
    full: () => holds >= MAX_HOLDS_PER_CLAIM,
    heldFor: () => heldFor,
  };
}
