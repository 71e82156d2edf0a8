/**
 * A MessageFilter as SQL over `messages m`: one predicate per filter that is
 * set, every value bound. Search pages and bulk actions select with the same
 * predicates, so the filter language is one.
 */
import { normalizeAddress, type BlindIndex } from '../core/index.js';
import { addressTerm, blindTextQuery, type MessageFilter, type MessageStatus } from '../core/message/index.js';

/** Each status as a predicate over `m`; `state` is spelled so that messages_tenant_state serves it. */
export const STATUS_SQL: Record<MessageStatus, string> = {
  queued: `m.state = 'queued' AND m.suspended = 0`,
  deferred: `m.state = 'deferred' AND m.suspended = 0`,
  sending: `m.state = 'sending'`,
  sent: `m.state = 'sent' AND m.bounce_at IS NULL`,
  error: `m.state = 'error'`,
  suspended: `m.state IN ('queued', 'deferred') AND m.suspended = 1`,
  bounced: `m.state = 'sent' AND m.bounce_at IS NOT NULL`,
};

/**
 * The messages an address term names that the indexer has not reached yet (their terms looked
 * through), and those whose envelope is still in clear from before it was sealed (compared in clear).
 */
const UNINDEXED = (param: string): string => `UNION ALL SELECT pk FROM message_search_terms
    WHERE pk > (SELECT indexed_pk FROM search_state WHERE id = 1) AND instr(search_terms, ${param}) > 0
  UNION ALL SELECT pk FROM messages WHERE personal IS NULL AND erased_at IS NULL`;

export interface FilterSql {
  where: string[];
  params: Record<string, unknown>;
  /** The index of search terms narrows the rows (text, sender or recipient): look their pks up rather than walk the table. */
  narrowed: boolean;
}

export function filterSql(filter: MessageFilter, index: BlindIndex): FilterSql {
  const where: string[] = [];
  const params: Record<string, unknown> = {};
  const set = (predicate: string, name: string, value: unknown): void => {
    where.push(predicate);
    params[name] = value;
  };
  if (filter.tenantId !== null) set('m.tenant_id = @tenant', 'tenant', filter.tenantId);
  if (filter.status !== null) where.push(STATUS_SQL[filter.status]);
  if (filter.accountId !== null) set('m.account_id = @account', 'account', filter.accountId);
  if (filter.batchCode !== null) set('m.batch_code = @batch', 'batch', filter.batchCode);
  if (filter.priority !== null) set('m.priority = @priority', 'priority', filter.priority);
  if (filter.createdFrom !== null) set('m.created_at >= @from', 'from', filter.createdFrom);
  if (filter.createdTo !== null) set('m.created_at < @to', 'to', filter.createdTo);
  // An address narrows the rows through the index of search terms (whole terms: exact), plus what
  // it has not reached yet; a row from before sealing (no terms until the sealer reaches it) is
  // compared in clear.
  const narrow = (role: 'sender' | 'recipient', address: string, clear: string): void => {
    set(
      `m.pk IN (SELECT rowid FROM messages_terms WHERE messages_terms MATCH @${role} ${UNINDEXED(`@${role}`)})`,
      role,
      addressTerm(index, role, address),
    );
    where.push(`(m.personal IS NOT NULL OR ${clear})`);
    params[`${role}Clear`] = normalizeAddress(address);
  };
  if (filter.sender !== null) narrow('sender', filter.sender, 'lower(m.mail_from) = @senderClear');
  if (filter.recipient !== null)
    narrow(
      'recipient',
      filter.recipient,
      'EXISTS (SELECT 1 FROM json_each(m.rcpt_to) r WHERE lower(r.value) = @recipientClear)',
    );
  const match = filter.text === null ? null : blindTextQuery(index, filter.text);
  if (match !== null)
    set('m.pk IN (SELECT rowid FROM messages_terms WHERE messages_terms MATCH @match)', 'match', match);
  const narrowed = match !== null || filter.sender !== null || filter.recipient !== null;
  // An erased message keeps its terms until the scrub right after its erasure: never found by them.
  if (narrowed) where.push('m.erased_at IS NULL');
  return { where, params, narrowed };
}
