/**
 * Per-destination limits: an account may hold the mail for a recipient domain, or a group of
 * them (`gmail.com` and `googlemail.com`; `*.outlook.com`), to its own pace and connections,
 * whatever the account's own limits allow. Receivers throttle per sender and destination, so
 * an account relaying to many domains is held back only where one of them asks. A message is
 * sent whole, once: it waits until every limited destination among its recipients has budget,
 * and counts against each. Pure: matching and checking; the claim-time decisions are in
 * core/delivery/destination-budget.ts.
 */
import { domainMatches, splitAddress } from '../address.js';

export interface DestinationLimit {
  /** How it is named in waiting reasons, usage and fleet counters: its first domain unless named. */
  name: string;
  /** Domains (lower case) or `*.domain` patterns; a domain in two rules is held by the first. */
  domains: string[];
  limitPerMinute: number | null;
  limitPerHour: number | null;
  limitPerDay: number | null;
  /** Sends to it in flight at once through the account, at most; null: the account's own. */
  maxConnections: number | null;
}

/** The most destination rules an account may carry, and domains per rule. */
export const MAX_DESTINATION_LIMITS = 50;
export const MAX_DESTINATION_DOMAINS = 50;

/** Its windows' limits, as rate-limit.ts reads an account's (`Limits`; spelt out here, as rate-limit.ts reads Account). */
export const destinationWindows = (
  limit: DestinationLimit,
): { minute: number | null; hour: number | null; day: number | null } => ({
  minute: limit.limitPerMinute,
  hour: limit.limitPerHour,
  day: limit.limitPerDay,
});

/** The distinct domains of a message's recipients, lower case and sorted: what a waiting message keeps of them. */
export function recipientDomains(rcptTo: readonly string[]): string[] {
  return [...new Set(rcptTo.map((address) => splitAddress(address)[1].toLowerCase()))].sort();
}

/** The destinations that hold a message for these recipient domains: each domain's first matching rule, in rule order. */
export function destinationsOf(limits: readonly DestinationLimit[], domains: readonly string[]): DestinationLimit[] {
  if (limits.length === 0) return [];
  const held = new Set<DestinationLimit>();
  for (const domain of domains) {
    const rule = limits.find((limit) => limit.domains.some((pattern) => domainMatches(domain, pattern)));
    if (rule !== undefined) held.add(rule);
  }
  return limits.filter((limit) => held.has(limit));
}

/**
 * What is wrong with an account's destination rules, or null: each needs a limit or a connection
 * cap, and names must be unique (they key usage and fleet counters).
 */
export function checkDestinationLimits(limits: readonly DestinationLimit[]): string | null {
  const names = new Set<string>();
  for (const limit of limits) {
    if (names.has(limit.name)) return `destination "${limit.name}" is named twice`;
    names.add(limit.name);
    const windows = destinationWindows(limit);
    if (windows.minute === null && windows.hour === null && windows.day === null && limit.maxConnections === null)
      return `destination "${limit.name}" sets no limit: give it limit_per_minute, limit_per_hour, limit_per_day or max_connections`;
  }
  return null;
}
