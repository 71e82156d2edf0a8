/**
 * Which account serves a submission that names none: the tenant's default, marked
 * explicitly (`isDefault`, at most one per tenant). There is no implicit default any
 * more: a tenant's only account used to serve silently, and adding a second broke
 * its clients. Also the warnings an account change answers with. Pure: no store.
 */
import type { AccountChoice } from './account.js';

/** The tenant's default account, if one is marked. */
export function defaultAccount<T extends AccountChoice>(accounts: readonly T[]): T | undefined {
  return accounts.find((account) => account.isDefault);
}

/** The account a submission goes through, or why there is none. */
export type AccountPick<T extends AccountChoice> =
  { kind: 'account'; account: T } | { kind: 'unknown' } | { kind: 'no-default'; accountIds: string[] };

/** `requested`: the account the client named (undefined: none, the default serves). */
export function pickAccount<T extends AccountChoice>(
  accounts: readonly T[],
  requested: string | undefined,
): AccountPick<T> {
  if (requested !== undefined) {
    const named = accounts.find((account) => account.id === requested);
    return named === undefined ? { kind: 'unknown' } : { kind: 'account', account: named };
  }
  const fallback = defaultAccount(accounts);
  return fallback === undefined
    ? { kind: 'no-default', accountIds: accounts.map((account) => account.id) }
    : { kind: 'account', account: fallback };
}

/**
 * Whether a saved account is the default: as asked, else as stored, else (a new
 * account) only when it is the tenant's first, so a one-account tenant needs no flag.
 */
export function isDefaultOnSave(
  requested: boolean | undefined,
  stored: boolean | undefined,
  others: readonly AccountChoice[],
): boolean {
  return requested ?? stored ?? others.length === 0;
}

/** `a1, a2`, or `none` for a tenant without accounts. */
export function accountList(accountIds: readonly string[]): string {
  return accountIds.length === 0 ? 'none' : accountIds.join(', ');
}

export type AccountWarningCode =
  /** The tenant has accounts but no default: messages that name no account are refused. */
  | 'NO_DEFAULT_ACCOUNT'
  /** Messages that name no account now go through another account. */
  | 'DEFAULT_ACCOUNT_CHANGED';

/** Something the operator should know after a change that succeeded. */
export interface AccountWarning {
  code: AccountWarningCode;
  message: string;
}

/**
 * What an account change did to the tenant's default, from its accounts before and
 * after: nothing to say while a default stays in place; a warning when the tenant is
 * left without one (its clients that name no account are refused from now on) or when
 * the default moved to another account.
 */
export function defaultWarnings(
  tenantId: string,
  before: readonly AccountChoice[],
  after: readonly AccountChoice[],
): AccountWarning[] {
  const was = defaultAccount(before);
  const now = defaultAccount(after);
  if (now === undefined) {
    // A tenant without accounts and without a default before has nothing to lose.
    if (after.length === 0 && was === undefined) return [];
    return [
      {
        code: 'NO_DEFAULT_ACCOUNT',
        message: noDefaultText(
          tenantId,
          after.map((account) => account.id),
        ),
      },
    ];
  }
  if (was !== undefined && was.id !== now.id) {
    return [
      {
        code: 'DEFAULT_ACCOUNT_CHANGED',
        message: `messages of tenant ${tenantId} that name no account now go through ${now.id} (before: ${was.id})`,
      },
    ];
  }
  return [];
}

function noDefaultText(tenantId: string, accountIds: readonly string[]): string {
  if (accountIds.length === 0)
    return `tenant ${tenantId} has no account left; the next account added becomes its default`;
  return (
    `tenant ${tenantId} has no default account: messages that name no account (account_id, or the SMTP user <tenant>/<account>) are refused; ` +
    `its accounts: ${accountList(accountIds)}; save one with is_default true`
  );
}
