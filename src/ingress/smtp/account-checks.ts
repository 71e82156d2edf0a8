/**
 * Whether an SMTP session may send through an account: the user's at MAIL FROM,
 * one an X-Mail-Proxy-Account header names after DATA. A refusal is an SmtpReply.
 * Both decide on the tenant's accounts as read at the transaction's MAIL FROM.
 */
import { type AccountChoice, pickAccount } from '../../core/account/index.js';
import type { SmtpIdentity } from './identity.js';
import { replies, type SmtpReply } from './replies.js';

/** A tenant's accounts; null when there is no such tenant. */
export type TenantAccounts = readonly AccountChoice[] | null;

/** Why the session cannot send through `accountId` (null: the tenant's default), or null when it can. */
export function accountProblem(accounts: TenantAccounts, accountId: string | null): SmtpReply | null {
  if (accounts === null) return replies.accountNotOwned(accountId ?? '(default)');
  const pick = pickAccount(accounts, accountId ?? undefined);
  if (pick.kind === 'unknown') return replies.accountNotOwned(accountId ?? '(default)');
  return pick.kind === 'no-default' ? replies.noAccount(pick.accountIds) : null;
}

/**
 * What can be refused at MAIL FROM, before the client sends a body: an account the user
 * names that is not the tenant's, or a tenant with no account at all. A tenant with
 * accounts but no default is not refused here: the X-Mail-Proxy-Account header may still
 * name the account (ARCHITECTURE.md's control headers), and its multi-account legacy
 * clients rely on that; a message without it is refused after DATA, as a header can only be read then.
 */
export function envelopeAccountProblem(accounts: TenantAccounts, identity: SmtpIdentity): SmtpReply | null {
  if (identity.accountId !== null) return accountProblem(accounts, identity.accountId);
  if (accounts === null) return replies.accountNotOwned('(default)');
  return accounts.length === 0 ? replies.noAccount([]) : null;
}
