/** Operator prompts: what an agent is asked to do with the tools, worded once here. */
import { z } from 'zod';

export interface PromptSpec {
  name: string;
  title: string;
  description: string;
  args: z.ZodRawShape;
  text(args: Record<string, unknown>): string;
}

export const PROMPTS: readonly PromptSpec[] = [
  {
    name: 'investigate_message',
    title: 'Investigate a message that did not arrive',
    description: 'Find out what happened to one message, and what would get it delivered.',
    args: { id: z.string().describe('The message id (X-Genro-Mail-ID, its `id` at submission)') },
    text: ({ id }) =>
      `Find out why the message "${String(id ?? '')}" did not arrive. Call message_status for it: read its state, its timeline ` +
      'and, if it still waits, why. Check the account it goes through with list_accounts (paused, failing over, over ' +
      'its limits) and whether its recipient is in list_suppressions. Say what happened in two or three sentences, then ' +
      'what would fix it. Change nothing (retry_now, resend) unless asked.',
  },
  {
    name: 'summarise_bounces',
    title: "Summarise today's bounces",
    description: 'Bounces and complaints of the last day, grouped by cause, with what to do about them.',
    args: {},
    text: () =>
      'Summarise the bounces and complaints of the last 24 hours. Call outcome_summary for the period, bounce_records ' +
      'for what the bounce mailbox read, and search_messages with status=bounced or status=error for examples. Group them by cause (unknown user, mailbox full, blocked as spam, ' +
      'policy, other) with counts and the domains most affected, and say which need action (a relay or DNS problem, ' +
      'a list to clean) and which do not.',
  },
];
