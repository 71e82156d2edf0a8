/**
 * An account's fallback accounts (and destination limits) as saved: accounts of the same tenant, other than itself,
 * named once each, of its own kind (a PEC account's mail goes only through PEC relays: its
 * receipts are what the client is told, and a plain relay sends none).
 */
import { AppError } from '../app-error.js';
import { MAX_FALLBACK_ACCOUNTS, type Account } from './account.js';
import { checkDestinationLimits } from './destination-limit.js';

const invalid = (message: string, path = 'fallback_accounts'): AppError =>
  new AppError('VALIDATION_FAILED', 'invalid request body', { details: [{ path, message }] });

/** Throws VALIDATION_FAILED unless every fallback is an account `lookup` finds, fit to stand in for `account`. */
export function checkFallbacks(account: Account, lookup: (id: string) => Account | null): void {
  const named = account.fallbackAccounts;
  if (named.length > MAX_FALLBACK_ACCOUNTS) throw invalid(`at most ${MAX_FALLBACK_ACCOUNTS} fallback accounts`);
  if (new Set(named).size !== named.length) throw invalid('a fallback account is named twice');
  for (const id of named) {
    if (id === account.id) throw invalid('an account cannot be its own fallback');
    const fallback = lookup(id);
    if (fallback === null) throw invalid(`no account "${id}" in this tenant`);
    if (fallback.isPec !== account.isPec)
      throw invalid(
        `"${id}" ${fallback.isPec ? 'is' : 'is not'} a PEC account, and this one ${account.isPec ? 'is' : 'is not'}`,
      );
  }
}

/** Throws VALIDATION_FAILED when the account's destination limits name one twice or one sets no limit. */
export function checkDestinations(account: Account): void {
  const problem = checkDestinationLimits(account.destinationLimits);
  if (problem !== null) throw invalid(problem, 'destination_limits');
}
