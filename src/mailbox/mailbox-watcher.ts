/**
 * Watches one IMAP mailbox for a handler (the bounce mailbox's, a PEC
 * mailbox's) on the wakeable loop. A step connects when there is no session
 * (a failure backs off, forever), then runs a round (mailbox-batch.ts); between
 * rounds the server's word of new mail (IDLE) wakes a step, and the loop's
 * timer polls. `pollNow()` is a wake.
 */
import type { BounceLedger, MailboxStatus } from '../core/bounce/index.js';
import { type Clock, type Logger, errorText } from '../core/index.js';
import { exponentialBackoff } from '../core/delivery/index.js';
import { createWakeableLoop, type StepReport, within } from '../runtime/index.js';
import type { MailboxSession, MailboxSettings } from './imap-mailbox.js';
import { createMailboxBatch } from './mailbox-batch.js';
import type { MailboxHandler, WatcherConfig } from './mailbox-handler.js';

export { filedMessage } from './mailbox-handler.js';
export type { Handled, MailboxHandler, MessageToPlan, WatcherConfig } from './mailbox-handler.js';

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

/** How long stop() waits for a round or a connection attempt in progress, and the logout. */
const STOP_WAIT_MS = 5000;

const stoppedStatus = (mailbox: MailboxSettings): MailboxStatus => ({
  mailbox: mailbox.name,
  tenant_id: mailbox.tenantId,
  state: 'stopped',
  connected: false,
  idle: false,
  uid_validity: null,
  last_uid: null,
  last_round_at: null,
  last_error: null,
  last_error_at: null,
  failures: 0,
  next_attempt_at: null,
  handled: { processed: 0, unmatched: 0, not_bounce: 0 },
  unreadable: 0,
});

/** A failed connection or round: counted, said, and the reconnect `waitMs` from `at`. */
function recordFailure(status: MailboxStatus, error: unknown, at: number, waitMs: number): void {
  status.failures += 1;
  status.last_error = errorText(error);
  status.last_error_at = at;
  status.next_attempt_at = at + waitMs;
  status.state = 'backoff';
}

/**
 * The watcher's connection: opened when a step needs it (and taken up by the batch), closed after a
 * failure or at stop. Between rounds it listens for the server's word of new mail, or of a lost
 * connection, which wakes a step; our own abort of the wait does not.
 */
function mailboxConnection<R, T>(
  deps: WatcherDeps<R, T>,
  status: MailboxStatus,
  batch: ReturnType<typeof createMailboxBatch>,
  wake: () => void,
) {
  const { mailbox, log } = deps;
  let session: MailboxSession | null = null;
  /** The connection was lost while waiting: the next step backs off and reconnects. */
  let lost: unknown = null;
  let listening = new AbortController();

  const connect = async (): Promise<MailboxSession> => {
    status.state = 'connecting';
    session = await deps.open(mailbox);
    Object.assign(status, { connected: true, idle: session.idle, next_attempt_at: null });
    await batch.takeUp(session);
    log.info({ mailbox: mailbox.name, folder: mailbox.folder, idle: session.idle }, 'mailbox connected');
    return session;
  };

  return {
    async current(): Promise<MailboxSession> {
      if (lost !== null) throw lost;
      return session ?? (await connect());
    },
    listen(current: MailboxSession): void {
      const signal = (listening = new AbortController()).signal;
      current.wait(signal).then(
        () => (signal.aborted ? undefined : wake()),
        (error: unknown) => {
          lost = error;
          wake();
        },
      );
    },
    stopListening: (): void => listening.abort(),
    async disconnect(): Promise<void> {
      const closing = session;
      session = null;
      lost = null;
      status.connected = false;
      await closing?.close();
    },
  };
}

export function watchMailbox<R, T>(deps: WatcherDeps<R, T>): MailboxWatcher {
  const { mailbox, clock, log, config } = deps;
  const status = stoppedStatus(mailbox);
  const stopping = (): boolean => loop.isStopped();
  const batch = createMailboxBatch({
    name: mailbox.name,
    ledger: deps.ledger,
    handler: deps.handler,
    clock,
    log,
    batchSize: config.batchSize,
    status,
    stopping,
  });
  const link = mailboxConnection(deps, status, batch, () => loop.wake());

  const backOff = (error: unknown): StepReport => {
    const wait = exponentialBackoff(
      status.failures + 1,
      { initialMs: config.reconnectInitialMs, maxMs: config.reconnectMaxMs, jitter: 0.2 },
      deps.random(),
    );
    recordFailure(status, error, clock.now(), wait);
    log.warn({ mailbox: mailbox.name, err: error, failures: status.failures, retryInMs: wait }, 'mailbox unavailable');
    return { nextWakeAt: status.next_attempt_at };
  };

  const step = async (now: number): Promise<StepReport> => {
    link.stopListening();
    try {
      const current = await link.current();
      if (loop.isStopped()) return { nextWakeAt: null };
      status.state = 'reading';
      const more = await batch.round(current);
      // Only a round that went through ends a run of failures: a message that breaks every round backs off further each time.
      status.failures = 0;
      if (more || loop.isStopped()) return { nextWakeAt: more ? now : null };
      status.state = 'waiting';
      link.listen(current);
      return { nextWakeAt: clock.now() + config.pollIntervalMs };
    } catch (error) {
      await link.disconnect();
      return loop.isStopped() ? { nextWakeAt: null } : backOff(error);
    }
  };
  const loop = createWakeableLoop({
    name: `mailbox ${mailbox.name}`,
    step,
    recover: (error) => backOff(error),
    clock,
    log,
  });

  return {
    start() {
      if (loop.isRunning()) return;
      status.state = 'connecting';
      loop.start();
    },
    async stop() {
      link.stopListening();
      // A connection attempt to a server that does not answer is not waited for to its timeout.
      await within(loop.stop().then(link.disconnect), STOP_WAIT_MS);
      status.state = 'stopped';
    },
    pollNow: () => loop.wake(),
    status: () => ({ ...status, handled: { ...status.handled } }),
  };
}
