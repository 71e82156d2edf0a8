/**
 * Which messages a bulk action reaches: the search filter (one filter language
 * for finding and acting), narrowed to the statuses the action applies to. The
 * port reads them a page at a time, newest first, so a run works in chunks.
 */
import type { MessageFilter, MessageStatus } from './search.js';

export interface Selection {
  filter: MessageFilter;
  /** Null: any status the filter allows; else only these (intersected with the filter's own status). */
  statuses: readonly MessageStatus[] | null;
  /** Only messages whose next attempt is later than this instant (not yet due), epoch ms; null: any. */
  dueAfter: number | null;
}

export interface SelectedMessage {
  pk: number;
  tenantId: string;
  id: string;
}

/** Port: the store's answer to a Selection. */
export interface MessageSelection {
  count(selection: Selection): number;
  /** At most `limit` selected messages, newest first, older than `beforePk` (null: from the newest). */
  page(selection: Selection, beforePk: number | null, limit: number): SelectedMessage[];
}
