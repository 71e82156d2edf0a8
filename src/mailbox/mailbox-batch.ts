/**
 * One round of a watched mailbox: read every message past the checkpoint (in
 * groups fetched by one command each, bounded in bytes), have the handler
 * record the whole batch in one durable transaction, and only then file it.
 * Also what a new connection does first: take up from the checkpoint (read
 * again from the start when UIDVALIDITY changed) and file what a crash left unfiled.
 */
import type { BounceDisposition, BounceLedger, MailboxStatus } from '../core/bounce/index.js';
import type { Clock, Logger } from '../core/index.js';
import type { ListedMessage, MailboxSession } from './imap-mailbox.js';
import type { Handled, MailboxHandler } from './mailbox-handler.js';
import { summariseHeaders } from './mailbox-reading.js';

export interface MailboxBatchDeps<R, T> {
  name: string;
  ledger: Pick<BounceLedger, 'checkpoint' | 'resetCheckpoint' | 'unfiled' | 'markFiled' | 'previousDisposition'>;
  handler: MailboxHandler<R, T>;
  clock: Clock;
  log: Logger;
  batchSize: number;
  /** The watcher's status, whose counters a round moves. */
  status: MailboxStatus;
  /** A stop is under way: no further group is read. */
  stopping: () => boolean;
}

/** What one FETCH may bring back: enough to amortise the round trip, little enough to hold in memory. */
const GROUP_BYTES = 16 * 1024 * 1024;

/** Consecutive messages whose first `maxBytes` together stay within GROUP_BYTES (at least one per group). */
function fetchGroups(listed: readonly ListedMessage[], maxBytes: number): ListedMessage[][] {
  const groups: ListedMessage[][] = [];
  let current: ListedMessage[] = [];
  let bytes = 0;
  for (const message of listed) {
    const size = Math.min(message.size, maxBytes);
    if (current.length > 0 && bytes + size > GROUP_BYTES) {
      groups.push(current);
      current = [];
      bytes = 0;
    }
    current.push(message);
    bytes += size;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

/** UIDs by the disposition they are filed under: one command files each. */
function byDisposition(
  entries: Iterable<{ uid: number; disposition: BounceDisposition }>,
): Map<BounceDisposition, number[]> {
  const grouped = new Map<BounceDisposition, number[]>();
  for (const { uid, disposition } of entries) grouped.set(disposition, [...(grouped.get(disposition) ?? []), uid]);
  return grouped;
}

/**
 * One group's messages read in one FETCH and planned in UID order: a copy later in the batch sees
 * how its first was filed (`seenInBatch`, Message-ID to disposition).
 */
async function planGroup<R, T>(
  deps: MailboxBatchDeps<R, T>,
  session: MailboxSession,
  group: readonly ListedMessage[],
  seenInBatch: Map<string, BounceDisposition>,
): Promise<Array<Handled<T>>> {
  const { handler, ledger, name } = deps;
  const wanted = group.filter((message) => !message.handled);
  const sources =
    wanted.length === 0
      ? new Map<number, Buffer>()
      : await session.readMany(
          wanted.map((message) => message.uid),
          handler.maxMessageBytes,
        );
  // Started together: the parser's thread takes the group's messages in one hop.
  const understanding = new Map([...sources].map(([uid, raw]) => [uid, handler.understand(raw)]));
  const planned: Array<Handled<T>> = [];
  for (const message of group) {
    const raw = message.handled ? undefined : sources.get(message.uid);
    const understood = understanding.get(message.uid);
    if (raw === undefined || understood === undefined) {
      planned.push({ ...handler.skip(session.uidValidity, message.uid, message.size), filed: true });
      continue;
    }
    const headers = summariseHeaders(raw);
    const copyOf =
      headers.messageId === null
        ? null
        : (seenInBatch.get(headers.messageId) ?? ledger.previousDisposition(name, headers.messageId));
    const handled = handler.plan({
      uidValidity: session.uidValidity,
      uid: message.uid,
      size: message.size,
      raw,
      headers,
      understood: await understood,
      copyOf,
    });
    if (handled.unreadable === true) deps.status.unreadable += 1;
    if (headers.messageId !== null) seenInBatch.set(headers.messageId, handled.disposition);
    planned.push(handled);
  }
  return planned;
}

/** The batch past the checkpoint, planned message by message in UID order. */
async function readBatch<R, T>(
  deps: MailboxBatchDeps<R, T>,
  session: MailboxSession,
  listed: readonly ListedMessage[],
): Promise<Array<Handled<T>>> {
  const batch: Array<Handled<T>> = [];
  const seenInBatch = new Map<string, BounceDisposition>();
  for (const group of fetchGroups(listed, deps.handler.maxMessageBytes)) {
    if (deps.stopping()) break;
    batch.push(...(await planGroup(deps, session, group, seenInBatch)));
  }
  return batch;
}

export function createMailboxBatch<R, T>(deps: MailboxBatchDeps<R, T>) {
  const { name, ledger, handler, clock, status } = deps;

  const fileAll = async (session: MailboxSession, toFile: Map<BounceDisposition, number[]>): Promise<void> => {
    for (const [disposition, uids] of toFile) {
      await session.file(uids, disposition);
      ledger.markFiled(name, session.uidValidity, uids, clock.now());
    }
  };

  return {
    /** Takes up a new connection: the checkpoint checked against UIDVALIDITY, then what was recorded before a crash but not yet moved or flagged. */
    async takeUp(session: MailboxSession): Promise<void> {
      const checkpoint = ledger.checkpoint(name);
      if (checkpoint === null || checkpoint.uidValidity !== session.uidValidity) {
        if (checkpoint !== null)
          deps.log.warn(
            { mailbox: name, was: checkpoint.uidValidity, now: session.uidValidity },
            'mailbox UIDVALIDITY changed: reading it again from the start',
          );
        ledger.resetCheckpoint(name, session.uidValidity, clock.now());
      }
      status.uid_validity = session.uidValidity;
      await fileAll(session, byDisposition(ledger.unfiled(name, session.uidValidity)));
    },
    /** One round; true when a full batch suggests more. */
    async round(session: MailboxSession): Promise<boolean> {
      const listed = await session.listAfter(ledger.checkpoint(name)?.lastUid ?? 0, deps.batchSize);
      const batch = await readBatch(deps, session, listed);
      if (batch.length === 0) {
        status.last_round_at = clock.now();
        return false;
      }
      handler.settle(batch, clock.now());
      const nothingToFile = batch.filter((handled) => handled.filed === true).map((handled) => handled.uid);
      if (nothingToFile.length > 0) ledger.markFiled(name, session.uidValidity, nothingToFile, clock.now());
      const toFile = batch.filter((handled) => handled.filed !== true);
      for (const handled of toFile) {
        status.handled[handled.disposition] += 1;
        handler.filed?.(handled);
      }
      await fileAll(session, byDisposition(toFile));
      status.last_round_at = clock.now();
      status.last_uid = ledger.checkpoint(name)?.lastUid ?? null;
      return listed.length >= deps.batchSize;
    },
  };
}
