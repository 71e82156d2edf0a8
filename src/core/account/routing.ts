/**
 * Routing rules of a tenant: which account a message that names none is sent through,
 * chosen by its sender's domain, its batch code, its priority or one of its headers. Rules
 * are read in order and the first whose conditions all hold wins; a rule whose account no
 * longer exists is passed over; with none, the tenant's default account. A message that
 * names its account keeps it. Pure: the caller gives the rules, the message's fields and
 * the tenant's accounts.
 */
import { domainMatches, splitAddress } from '../address.js';
import { AppError } from '../app-error.js';
import type { AccountChoice } from './account.js';

export interface RouteMatch {
  /** The sender's domain is one of these (lower case); `*.example.com` also matches its subdomains. */
  senderDomains?: string[];
  batchCodes?: string[];
  /** 0 (immediate) to 3 (low). */
  priorities?: number[];
  /** A header of the message with this value (the name in any case, the value exactly). */
  header?: { name: string; value: string };
}

export interface RoutingRule {
  match: RouteMatch;
  accountId: string;
}

/** What a rule reads of a message. */
export interface RoutedMessage {
  mailFrom: string;
  batchCode: string | null;
  priority: number;
  /** A header's value by its name (any case); null when the message has none, or when headers are not known here. */
  header(name: string): string | null;
}

export type RouteDecision =
  { kind: 'rule'; accountId: string; rule: number } | { kind: 'default'; accountId: string } | { kind: 'none' };

/** The most rules a tenant may have. */
export const MAX_ROUTING_RULES = 100;

const domainOf = (address: string): string => splitAddress(address)[1].toLowerCase();

/** A message's header by its name in any case, from its fields as given (HTTP `headers`, an SMTP header section). */
export const headerLookup =
  (headers: ReadonlyArray<{ name: string; value: string }> | undefined) =>
  (name: string): string | null => {
    const wanted = name.toLowerCase();
    return headers?.find((header) => header.name.toLowerCase() === wanted)?.value ?? null;
  };

/** Whether every condition of `match` holds for `message` (a rule with none matches everything). */
export function ruleMatches(match: RouteMatch, message: RoutedMessage): boolean {
  if (match.senderDomains !== undefined) {
    const domain = domainOf(message.mailFrom);
    if (!match.senderDomains.some((pattern) => domainMatches(domain, pattern))) return false;
  }
  if (match.batchCodes !== undefined && (message.batchCode === null || !match.batchCodes.includes(message.batchCode)))
    return false;
  if (match.priorities !== undefined && !match.priorities.includes(message.priority)) return false;
  if (match.header !== undefined && message.header(match.header.name) !== match.header.value) return false;
  return true;
}

/** The account a message that names none goes through: the first rule that matches, else the default. */
export function routeMessage(
  rules: readonly RoutingRule[],
  message: RoutedMessage,
  accounts: readonly AccountChoice[],
): RouteDecision {
  const exists = (id: string): boolean => accounts.some((account) => account.id === id);
  const index = rules.findIndex((rule) => exists(rule.accountId) && ruleMatches(rule.match, message));
  const chosen = rules[index];
  if (chosen !== undefined) return { kind: 'rule', accountId: chosen.accountId, rule: index };
  const fallback = accounts.find((account) => account.isDefault);
  return fallback === undefined ? { kind: 'none' } : { kind: 'default', accountId: fallback.id };
}

/** Throws VALIDATION_FAILED unless every rule names an account of the tenant (`accounts`). */
export function checkRoutes(rules: readonly RoutingRule[], accounts: readonly AccountChoice[]): void {
  rules.forEach((rule, index) => {
    if (!accounts.some((account) => account.id === rule.accountId))
      throw new AppError('VALIDATION_FAILED', 'invalid request body', {
        details: [{ path: `routes.${index}.account_id`, message: `no account "${rule.accountId}" in this tenant` }],
      });
  });
}

/** A message as `routes test` describes it. */
export interface RouteSample {
  mailFrom: string;
  batchCode: string | null;
  priority: number;
  headers: ReadonlyArray<{ name: string; value: string }>;
  /** The account it names, if any: it is then not routed. */
  accountId: string | null;
}

export interface RouteExplanation {
  accountId: string | null;
  chosenBy: 'named' | 'rule' | 'default' | 'none';
  /** The index of the rule that chose it. */
  rule: number | null;
  why: string;
}

/** Where a message would go, and why: what POST /tenant/{id}/routes/test and `mailproxy routes test` answer. */
export function explainRoute(
  rules: readonly RoutingRule[],
  sample: RouteSample,
  accounts: readonly AccountChoice[],
): RouteExplanation {
  if (sample.accountId !== null) {
    const named = accounts.some((account) => account.id === sample.accountId);
    return named
      ? {
          accountId: sample.accountId,
          chosenBy: 'named',
          rule: null,
          why: 'the message names its account: rules do not apply',
        }
      : {
          accountId: null,
          chosenBy: 'none',
          rule: null,
          why: `the message names "${sample.accountId}", which is not an account of the tenant: it is refused`,
        };
  }
  const decision = routeMessage(rules, { ...sample, header: headerLookup(sample.headers) }, accounts);
  switch (decision.kind) {
    case 'rule':
      return {
        accountId: decision.accountId,
        chosenBy: 'rule',
        rule: decision.rule,
        why: `rule ${decision.rule} matches`,
      };
    case 'default':
      return {
        accountId: decision.accountId,
        chosenBy: 'default',
        rule: null,
        why:
          rules.length === 0
            ? 'the tenant has no routing rules: its default account'
            : 'no rule matches: the default account',
      };
    case 'none':
      return {
        accountId: null,
        chosenBy: 'none',
        rule: null,
        why: 'no rule matches and the tenant has no default account: it is refused',
      };
  }
}
