/**
 * The console's message filters (URL parameters of the list, hidden fields of a
 * bulk action's form) and the core filter they stand for: the list and the bulk
 * actions read them the same way.
 */
import { z } from 'zod';
import { MESSAGE_STATUSES, type MessageFilter, type MessageStatus } from '../../core/message/index.js';
import { parseUtcInput } from './format.js';
import type { MessageFilters } from './pages/messages.js';

const text = (max: number) => z.string().max(max).optional().default('');
export const filtersQuery = z.object({
  tenant: text(64),
  q: text(200),
  status: z
    .union([z.literal(''), z.enum(MESSAGE_STATUSES as [MessageStatus, ...MessageStatus[]])])
    .optional()
    .default(''),
  account: text(64),
  batch: text(255),
  recipient: text(320),
  from: text(40),
  to: text(40),
  // A fleet cursor holds each node's position: longer than a single node's.
  cursor: z.string().max(4000).optional(),
});

export const blankToNull = (value: string): string | null => (value.trim() === '' ? null : value.trim());

const ms = (seconds: number | null): number | null => (seconds === null ? null : seconds * 1000);

/** The filter the fields set, without the tenant (scoped by the caller). */
export function filterOf(filters: MessageFilters): Omit<MessageFilter, 'tenantId'> {
  return {
    status: filters.status === '' ? null : (filters.status as MessageStatus),
    accountId: blankToNull(filters.account),
    batchCode: blankToNull(filters.batch),
    recipient: blankToNull(filters.recipient),
    sender: null,
    createdFrom: ms(parseUtcInput(filters.from)),
    createdTo: ms(parseUtcInput(filters.to)),
    priority: null,
    text: blankToNull(filters.q),
  };
}

/** A filter is set (beyond the tenant): bulk actions are offered only over a search, never over "everything" by accident. */
export const hasFilter = (filters: MessageFilters): boolean =>
  (['q', 'status', 'account', 'batch', 'recipient', 'from', 'to'] as const).some((key) => filters[key] !== '');

/** Only a batch is named (the unit suspension holds): suspend and activate are offered. */
export const batchOnly = (filters: MessageFilters): boolean =>
  filters.batch !== '' &&
  (['q', 'status', 'account', 'recipient', 'from', 'to'] as const).every((key) => filters[key] === '');
