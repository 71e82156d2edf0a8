/**
 * Watches one IMAP mailbox for a handler (the bounce mailbox's, a PEC
 * mailbox's): connects (and reconnects with backoff, forever), takes up from
 * the checkpoint, reads each new message, has the handler record what it means
 * (one durable transaction per batch, checkpoint included) and only then files
 * it in the mailbox. Between rounds it waits for the server to tell of new mail
 * (IDLE) or for the poll interval. `pollNow()` cuts a wait short.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { BounceDisposition, BounceLedger, MailboxStatus } from '../core/bounce.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { exponentialBackoff } from '../core/retry-policy.js';
import type { ListedMessage, MailboxSession, MailboxSettings } from './imap-mailbox.js';
import { summariseHeaders, type HeaderSummary } from './mailbox-reading.js';

export interface WatcherConfig {
  pollIntervalMs: number;
  batchSize: number;
  reconnectInitialMs: number;
  reconnectMaxMs: number;
}

/** What a handler makes of one message: its filing, and what it records (`value`, the handler's own). */
export interface Handled<T> {
  uid: number;
  disposition: BounceDisposition;
  /** Nothing to move or flag (ours already, or gone meanwhile): only the checkpoint moves past it. */
  filed?: boolean;
  /** The message could not be understood (counted in the status, filed for a human). */
  unreadable?: boolean;
  value: T;
}

export interface MessageToPlan<R> {
  uidValidity: number;
  uid: number;
  size: number;
  raw: Buffer;
  headers: HeaderSummary;
  understood: R;
  /** How an earlier message with the same Message-ID was filed (a copy has no effect again), or null. */
  copyOf: BounceDisposition | null;
}

/** What a kind of mailbox does with its messages. */
export interface MailboxHandler<R, T> {
  /** How much of each message is read. */
  maxMessageBytes: number;
  /** Starts understanding one message: a group's messages are started together (the parser thread takes them in one hop). */
  understand(raw: Buffer): Promise<R>;
  plan(message: MessageToPlan<R>): Handled<T>;
  /** A message skipped unread: ours already (a keyword from before a lost checkpoint) or gone meanwhile. */
  skip(uidValidity: number, uid: number, size: number): Handled<T>;
  /** The whole batch in one durable transaction; the checkpoint moves past its last. */
  settle(batch: ReadonlyArray<Handled<T>>, at: number): void;
  /** Told of each message filed after the batch committed (for logs and counters). */
  filed?(handled: Handled<T>): void;
}

export interface WatcherDeps<R, T> {
  mailbox: MailboxSettings;
  ledger: Pick<BounceLedger, 'checkpoint' | 'resetCheckpoint' | 'unfiled' | 'markFiled' | 'previousDisposition'>;
  open: (settings: MailboxSettings) => Promise<MailboxSession>;
  handler: MailboxHandler<R, T>;
  clock: Clock;
  random: () => number;
  log: Logger;
  config: WatcherConfig;
}

export interface MailboxWatcher {
  start(): void;
  stop(): Promise<void>;
  /** Ends the current wait: the next round starts now. */
  pollNow(): void;
  status(): MailboxStatus;
}

export function watchMailbox<R, T>(deps: WatcherDeps<R, T>): MailboxWatcher {
  const { mailbox, ledger, handler, clock, log, config } = deps;
  const name = mailbox.name;
  const status: MailboxStatus = {
    mailbox: name, tenant_id: mailbox.tenantId, state: 'stopped', connected: false, idle: false, uid_validity: null, last_uid: null,
    last_round_at: null, last_error: null, last_error_at: null, failures: 0, next_attempt_at: null,
    handled: { processed: 0, unmatched: 0, not_bounce: 0 }, unreadable: 0,
  };
  let abort = new AbortController();
  let running: Promise<void> | null = null;
  let stopping = false;

  /** Waits `ms`, or less when pollNow() or stop() aborts the wait. */
  const sleep = (ms: number): Promise<void> => delay(ms, undefined, { signal: abort.signal }).catch(() => undefined);

  /**
   * Reads every message past the checkpoint (in groups fetched by one command
   * each, bounded in bytes), records the whole batch in one durable
   * transaction, then files it; true when a full batch suggests more.
   */
  const round = async (session: MailboxSession): Promise<boolean> => {
    const lastUid = ledger.checkpoint(name)?.lastUid ?? 0;
    const listed = await session.listAfter(lastUid, config.batchSize);
    const batch: Array<Handled<T>> = [];
    const seenInBatch = new Map<string, BounceDisposition>();
    for (const group of fetchGroups(listed, handler.maxMessageBytes)) {
      if (stopping) break;
      const wanted = group.filter((message) => !message.handled);
      const sources = wanted.length === 0 ? new Map<number, Buffer>() : await session.readMany(wanted.map((message) => message.uid), handler.maxMessageBytes);
      const understanding = new Map([...sources].map(([uid, raw]) => [uid, handler.understand(raw)]));
      // Decided in UID order: a copy later in the batch sees how its first was filed.
      for (const message of group) {
        const raw = message.handled ? undefined : sources.get(message.uid);
        const understood = understanding.get(message.uid);
        if (raw === undefined || understood === undefined) {
          batch.push({ ...handler.skip(session.uidValidity, message.uid, message.size), filed: true });
          continue;
        }
        const headers = summariseHeaders(raw);
        const copyOf = headers.messageId === null ? null : (seenInBatch.get(headers.messageId) ?? ledger.previousDisposition(name, headers.messageId));
        const handled = handler.plan({ uidValidity: session.uidValidity, uid: message.uid, size: message.size, raw, headers, understood: await understood, copyOf });
        if (handled.unreadable === true) status.unreadable += 1;
        if (headers.messageId !== null) seenInBatch.set(headers.messageId, handled.disposition);
        batch.push(handled);
      }
    }
    if (batch.length === 0) {
      status.last_round_at = clock.now();
      return false;
    }
    handler.settle(batch, clock.now());
    const nothingToFile = batch.filter((handled) => handled.filed === true).map((handled) => handled.uid);
    if (nothingToFile.length > 0) ledger.markFiled(name, session.uidValidity, nothingToFile, clock.now());
    const toFile = new Map<BounceDisposition, number[]>();
    for (const handled of batch) {
      if (handled.filed === true) continue;
      status.handled[handled.disposition] += 1;
      toFile.set(handled.disposition, [...(toFile.get(handled.disposition) ?? []), handled.uid]);
      handler.filed?.(handled);
    }
    await fileAll(session, toFile);
    status.last_round_at = clock.now();
    status.last_uid = ledger.checkpoint(name)?.lastUid ?? null;
    return listed.length >= config.batchSize;
  };

  const fileAll = async (session: MailboxSession, toFile: Map<BounceDisposition, number[]>): Promise<void> => {
    for (const [disposition, uids] of toFile) {
      await session.file(uids, disposition);
      ledger.markFiled(name, session.uidValidity, uids, clock.now());
    }
  };

  /** Messages recorded before a crash but not yet moved or flagged. */
  const refile = async (session: MailboxSession): Promise<void> => {
    const pending = new Map<BounceDisposition, number[]>();
    for (const { uid, disposition } of ledger.unfiled(name, session.uidValidity)) pending.set(disposition, [...(pending.get(disposition) ?? []), uid]);
    await fileAll(session, pending);
  };

  const connectAndWatch = async (): Promise<void> => {
    status.state = 'connecting';
    const session = await deps.open(mailbox);
    try {
      status.connected = true;
      status.idle = session.idle;
      status.next_attempt_at = null;
      const checkpoint = ledger.checkpoint(name);
      if (checkpoint === null || checkpoint.uidValidity !== session.uidValidity) {
        if (checkpoint !== null) log.warn({ mailbox: name, was: checkpoint.uidValidity, now: session.uidValidity }, 'mailbox UIDVALIDITY changed: reading it again from the start');
        ledger.resetCheckpoint(name, session.uidValidity, clock.now());
      }
      status.uid_validity = session.uidValidity;
      await refile(session);
      log.info({ mailbox: name, folder: mailbox.folder, idle: session.idle }, 'mailbox connected');
      while (!stopping) {
        status.state = 'reading';
        const more = await round(session);
        // Only a round that went through ends a run of failures: a message that breaks every round backs off further each time.
        status.failures = 0;
        if (more) continue;
        status.state = 'waiting';
        await session.wait(config.pollIntervalMs, abort.signal);
        if (abort.signal.aborted && !stopping) abort = new AbortController();
      }
    } finally {
      status.connected = false;
      await session.close();
    }
  };

  const run = async (): Promise<void> => {
    while (!stopping) {
      try {
        await connectAndWatch();
      } catch (error) {
        if (stopping) break;
        status.failures += 1;
        status.last_error = error instanceof Error ? error.message : String(error);
        status.last_error_at = clock.now();
        const wait = exponentialBackoff(status.failures, { initialMs: config.reconnectInitialMs, maxMs: config.reconnectMaxMs, jitter: 0.2 }, deps.random());
        status.next_attempt_at = clock.now() + wait;
        status.state = 'backoff';
        log.warn({ mailbox: name, err: error, failures: status.failures, retryInMs: wait }, 'mailbox unavailable');
        await sleep(wait);
        if (abort.signal.aborted && !stopping) abort = new AbortController();
      }
    }
    status.state = 'stopped';
  };

  return {
    start() {
      if (running !== null) return;
      stopping = false;
      running = run();
    },
    async stop() {
      stopping = true;
      abort.abort();
      // A connection attempt to a server that does not answer is not waited for to its timeout.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([running, new Promise((resolve) => { timer = setTimeout(resolve, STOP_WAIT_MS); })]);
      clearTimeout(timer);
      running = null;
    },
    pollNow() {
      abort.abort();
    },
    status: () => ({ ...status, handled: { ...status.handled } }),
  };
}

/** How long stop() waits for a round or a connection attempt in progress. */
const STOP_WAIT_MS = 5000;

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
