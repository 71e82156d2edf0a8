/**
 * Why a submitted message was not queued: a stable code that the edges map
 * (an HTTP item, an SMTP reply) and the human reason clients have always read.
 * The reason texts are a contract too: genro clients match on them.
 */

export type RejectionCode =
  /** The edge found the message's shape invalid; the reason names the fields. */
  | 'INVALID_MESSAGE'
  /** The admin token submitted without naming a tenant. */
  | 'TENANT_REQUIRED'
  /** No such tenant, or a tenant key naming another tenant (which learns nothing of it). */
  | 'UNKNOWN_TENANT'
  | 'UNKNOWN_ACCOUNT'
  /** No account named and the tenant has no default one; the reason lists its accounts. */
  | 'NO_DEFAULT_ACCOUNT'
  /** The same tenant and id twice in one request: the first one counts. */
  | 'DUPLICATE_ID'
  /** A recipient is on the tenant's suppression list. */
  | 'SUPPRESSED'
  /** The id was already handed off: a client repeating itself. */
  | 'ALREADY_SENT';

/** The reason each code has always been given with (INVALID_MESSAGE's names the fields instead). */
const REASONS: Record<RejectionCode, string> = {
  INVALID_MESSAGE: 'invalid message',
  TENANT_REQUIRED: 'tenant_id is required',
  UNKNOWN_TENANT: 'unknown tenant',
  UNKNOWN_ACCOUNT: 'unknown account',
  NO_DEFAULT_ACCOUNT: 'account_id is required: the tenant has no default account',
  DUPLICATE_ID: 'duplicate id in this request',
  SUPPRESSED: 'suppressed',
  ALREADY_SENT: 'already sent',
};

export const REJECTION_CODES = Object.keys(REASONS) as readonly RejectionCode[];

/** A rejection before it is placed in the request. */
export interface Refusal {
  code: RejectionCode;
  reason: string;
}

export function refusal(code: RejectionCode, reason: string = REASONS[code]): Refusal {
  return { code, reason };
}

/**
 * NO_DEFAULT_ACCOUNT with the way out: the tenant's accounts and how to pick one. The
 * reason still starts with the words clients have always matched on.
 */
export function noDefaultRefusal(accountIds: readonly string[]): Refusal {
  const choices = accountIds.length === 0 ? 'it has no account' : `its accounts: ${accountIds.join(', ')}`;
  return refusal(
    'NO_DEFAULT_ACCOUNT',
    `${REASONS.NO_DEFAULT_ACCOUNT} (${choices}; name one in account_id, or save one with is_default true)`,
  );
}

/** One rejected message of a request: `index` lets a client match it without an id. */
export interface Rejection {
  index: number;
  id: string | null;
  reason: string;
  code: RejectionCode;
}

// Field order as the wire has always had it, `code` added last.
export function rejection(index: number, id: string | null, refused: Refusal): Rejection {
  return { index, id, reason: refused.reason, code: refused.code };
}
