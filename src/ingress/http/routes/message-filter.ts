/** The search filter of GET /messages and POST /commands/bulk, from the API's fields to the core's terms. */
import type { z } from 'zod';
import { toPriority, type MessageFilter } from '../../../core/message/index.js';
import type { searchFilterFields } from '../message-filter-schemas.js';

/** Instants from epoch seconds to ms; a field not given does not narrow. */
export function filterFields(p: z.output<z.ZodObject<typeof searchFilterFields>>): Omit<MessageFilter, 'tenantId'> {
  return {
    status: p.status ?? null,
    accountId: p.account_id ?? null,
    batchCode: p.batch_code ?? null,
    recipient: p.recipient ?? null,
    sender: p.sender ?? null,
    createdFrom: p.from_ts === undefined ? null : p.from_ts * 1000,
    createdTo: p.to_ts === undefined ? null : p.to_ts * 1000,
    priority: p.priority === undefined ? null : toPriority(p.priority),
    text: p.q ?? null,
  };
}
