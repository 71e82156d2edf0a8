/** `mailproxy messages`: finding messages, and why one waits (message-view.ts); retry and bulk actions in message-actions.ts. */
import type { Command } from '../command.js';
import { bulkVerb, retryVerb } from './message-actions.js';
import { READ_VERBS } from './resources.js';

export const messagesCommand: Command = {
  name: 'messages',
  summary: 'Messages: find them, see where one stands and why it waits, retry them now, act on all a filter finds.',
  verbs: {
    ...READ_VERBS.messages,
    retry: retryVerb,
    bulk: bulkVerb,
  },
};
