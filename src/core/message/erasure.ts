/**
 * Erasure of personal data on request (GDPR art. 17; seed 000, "Retention, PII &
 * GDPR"): the bodies' data keys are destroyed (crypto-shredding: every copy of a
 * sealed body, in a backup, the WAL or the fleet's spool stream, is unreadable
 * from then on) and every personal field of the rows is cleared, the rows kept
 * as tombstones: status, times and ids stay for the client's reports and for
 * accounting. One transaction per request, with its audit row and its events; the scrub of
 * what SQLite keeps elsewhere (search terms, index segments, WAL frames) follows it.
 */

/** What to erase: messages by client id, everything to or from an address, or a whole tenant's mail. */
export type ErasureTarget =
  | { kind: 'messages'; tenantId: string; ids: readonly string[] }
  /** `tenantId` null: the records of no tenant (bounces no message matched, audit rows of the admin's). */
  | { kind: 'address'; tenantId: string | null; address: string }
  | { kind: 'tenant'; tenantId: string };

export interface ErasureCounts {
  /** Messages tombstoned by this request. */
  messages: number;
  /** Of them, messages that were still waiting: never sent, reported as erased. */
  waiting: number;
  /** Of them, messages being sent at the time: their outcome is still recorded. */
  inFlight: number;
  /** Client ids asked for that no message has (kind `messages`). */
  notFound: string[];
  suppressions: number;
  /** Bounce and PEC mailbox records cleared. */
  mailboxRecords: number;
  pecReceipts: number;
  /** Events whose personal fields were cleared (the messages' timelines, suppression changes). */
  events: number;
}

export interface ErasureStore {
  /** Erases in one transaction, with a `message.erased` event per message; part of the caller's transaction if any. */
  erase(target: ErasureTarget, now: number, correlationId: string | null): ErasureCounts;
  /**
   * After the commit, in the background (the search index's loop): one step of overwriting what
   * SQLite keeps of the erased rows outside them: up to `limit` erased messages' search terms out
   * of the full-text index, then, none left, the index merged and the WAL checkpointed and
   * truncated, freed pages zeroed by secure delete. Answers how many messages' terms it took out
   * (`limit`: call again). Owed from the erasure's own transaction, so a crash in between loses none.
   */
  scrub(limit: number): number;
  /** What the erasures so far still leave to the background: GET /status shows it. */
  pending(): ErasurePending;
}

/** The background work erasures leave: 0 and false once every copy is overwritten. */
export interface ErasurePending {
  /** The index merge or WAL truncation is still owed. */
  scrubOwed: boolean;
  /** Erased messages whose search terms are still in the full-text index (unreadable by any search meanwhile). */
  searchTerms: number;
  /** Shredded bodies (their keys destroyed: unreadable) whose sealed bytes retention has not removed yet. */
  shreddedBodies: number;
}
