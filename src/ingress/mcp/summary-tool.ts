/**
 * What became of a period's mail, counted: the one tool that is not one route but many pages of
 * one (GET /messages, the caller's own), since an agent asked "how did yesterday go" should not
 * page through thousands of messages itself. Counts by status, bounce type and the commonest
 * errors; a period past MAX_MESSAGES is counted that far and says so.
 */
import { z } from 'zod';
import type { ApiAnswer, CallApi } from './api-call.js';
import type { ToolSpec } from './tools.js';

const PAGE = 500;
const MAX_MESSAGES = 10_000;
const TOP_ERRORS = 10;

const seconds = (description: string, example: number) =>
  z
    .number()
    .int()
    .positive()
    .meta({ description, examples: [example] });

export const SUMMARY_TOOL: Omit<ToolSpec, 'request'> = {
  name: 'outcome_summary',
  title: 'Outcomes of a period',
  description:
    "What became of the mail accepted in a period: counts by status (sent, error, bounced, deferred, …), by bounce type, and the commonest errors. Pages through GET /messages (the caller's messages only).",
  changes: false,
  destructive: false,
  input: z.strictObject({
    tenant_id: z
      .string()
      .max(64)
      .optional()
      .meta({ description: 'The tenant: implied by a tenant key; the admin token names one.', examples: ['acme'] }),
    from_ts: seconds('The period starts here (epoch seconds, when the messages were accepted).', 1764000000),
    to_ts: seconds('The period ends here (epoch seconds); absent: now.', 1764086400).optional(),
  }),
};

interface Counted {
  counted: number;
  complete: boolean;
  by_status: Record<string, number>;
  by_bounce_type: Record<string, number>;
  top_errors: Array<{ error: string; count: number }>;
}

const bump = (counts: Record<string, number>, key: string): void => {
  counts[key] = (counts[key] ?? 0) + 1;
};

/** Counts the period's messages, page after page; an API refusal is answered as it came. */
export async function summarise(api: CallApi, input: Record<string, unknown>): Promise<ApiAnswer> {
  const query: Record<string, string> = { from_ts: String(input.from_ts), limit: String(PAGE) };
  if (input.to_ts !== undefined) query.to_ts = String(input.to_ts);
  if (typeof input.tenant_id === 'string') query.tenant_id = input.tenant_id;
  const result: Counted = { counted: 0, complete: true, by_status: {}, by_bounce_type: {}, top_errors: [] };
  const errors: Record<string, number> = {};
  let cursor: string | null = null;
  do {
    const answer = await api({
      method: 'GET',
      path: '/messages',
      query: cursor === null ? query : { ...query, cursor },
    });
    if (answer.status >= 400) return answer;
    const page = answer.body as {
      messages: Array<{ status: string; bounce_type: string | null; error: string | null }>;
      next_cursor: string | null;
    };
    for (const message of page.messages) {
      result.counted += 1;
      bump(result.by_status, message.status);
      if (message.bounce_type !== null) bump(result.by_bounce_type, message.bounce_type);
      // The reply's first words: enough to group by cause, not by recipient.
      if (message.error !== null) bump(errors, message.error.slice(0, 80));
    }
    cursor = page.next_cursor;
    if (cursor !== null && result.counted >= MAX_MESSAGES) result.complete = false;
  } while (cursor !== null && result.complete);
  result.top_errors = Object.entries(errors)
    .sort(([, a], [, b]) => b - a)
    .slice(0, TOP_ERRORS)
    .map(([error, count]) => ({ error, count }));
  return { status: 200, body: result };
}
