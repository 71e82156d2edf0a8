/**
 * A MessageFilter as SQL over `messages m`: one predicate per filter that is
 * set, every value bound. Search pages and bulk actions select with the same
 * predicates, so the filter language is one.
 */
import { normalizeAddress } from '../core/index.js';
import { addressPhrase, fullTextQuery, type MessageFilter, type MessageStatus } from '../core/message/index.js';

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

/** The messages the indexer has not reached yet: candidates for any address until it has. */
const UNINDEXED = 'UNION ALL SELECT pk FROM messages WHERE pk > (SELECT indexed_pk FROM search_state WHERE id = 1)';

export interface FilterSql {
  where: string[];
  params: Record<string, unknown>;
  /** The full-text index narrows the rows (text, sender or recipient): look their pks up rather than walk the table. */
  narrowed: boolean;
}

export function filterSql(filter: MessageFilter): FilterSql {
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
  // An address narrows the rows through the full-text index (plus what it has not reached yet),
  // then is compared whole: a phrase of its parts could also be part of a longer address.
  const narrow = (column: 'mail_from' | 'rcpt_to', address: string): void => {
    const phrase = addressPhrase(column, address);
    if (phrase !== null)
      set(
        `m.pk IN (SELECT rowid FROM messages_fts WHERE messages_fts MATCH @${column}Match ${UNINDEXED})`,
        `${column}Match`,
        phrase,
      );
  };
  if (filter.sender !== null) {
    narrow('mail_from', filter.sender);
    set('lower(m.mail_from) = @sender', 'sender', normalizeAddress(filter.sender));
  }
  if (filter.recipient !== null) {
    narrow('rcpt_to', filter.recipient);
    // Envelope recipients are kept as given; the comparison is on the normalized form.
    set(
      `EXISTS (SELECT 1 FROM json_each(m.rcpt_to) r WHERE lower(r.value) = @recipient)`,
      'recipient',
      normalizeAddress(filter.recipient),
    );
  }
  const match = filter.text === null ? null : fullTextQuery(filter.text);
  if (match !== null) set('m.pk IN (SELECT rowid FROM messages_fts WHERE messages_fts MATCH @match)', 'match', match);
  return { where, params, narrowed: match !== null || filter.sender !== null || filter.recipient !== null };
}
