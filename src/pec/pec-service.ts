/**
 * PEC as the daemon runs it: one mailbox watcher per PEC account (started,
 * restarted with new settings and stopped as accounts are saved and deleted:
 * the accounts' version is checked every few seconds and on every account
 * write), the receipt parser in a thread of its own (started with the first
 * PEC account), and the acceptance timeout's sweep.
 */
import type { PecMailboxAccount } from '../core/account/index.js';
import type { BounceLedger, MailboxStatus } from '../core/bounce/index.js';
import type { Clock, IdSource, Logger, AccountRepository } from '../core/index.js';
import type { PecLedger, PecReceiptFindings } from '../core/pec/index.js';
import { createPeriodicLoop } from '../runtime/index.js';
import {
  createParserThread,
  openImapMailbox,
  type MailboxSettings,
  type MailboxWatcher,
  type ParserThread,
} from '../mailbox/index.js';
import { createPecPoller } from './pec-poller.js';

/** Mailbox watchers the daemon runs: the bounce mailboxes' (bounce-service.ts) and the PEC accounts'. */
export interface MailboxWatchers {
  start(): void;
  stop(): Promise<void>;
  pollNow(): void;
  status(): MailboxStatus[];
  /** Accounts were written: PEC watchers follow at once rather than at the next check. */
  accountsChanged(): void;
}

export interface PecWatchers extends MailboxWatchers {
  /** One check of the accounts and one sweep (tests). */
  tick(): Promise<void>;
}

export interface PecSettings {
  acceptanceTimeoutMs: number;
  pollIntervalMs: number;
  maxReceiptBytes: number;
  parseTimeoutMs: number;
  sweepIntervalMs: number;
  batchSize: number;
  reconnectInitialMs: number;
  reconnectMaxMs: number;
}

export interface PecStore {
  accounts: Pick<AccountRepository, 'version' | 'pecMailboxes'>;
  bounceLedger: BounceLedger;
  pecLedger: PecLedger;
  /** Settles messages whose acceptance receipt is overdue; answers how many were expired and released. */
  pecReceipts: { expireAwaiting(cutoff: number, now: number, limit: number): { expired: number; released: number } };
}

/** How often the accounts are checked for PEC mailboxes added, changed or removed. */
const ACCOUNTS_CHECK_MS = 5000;
/** Messages whose acceptance timed out, per transaction of the sweep. */
const SWEEP_BATCH = 500;

const mailboxName = (account: PecMailboxAccount): string => `pec:${account.tenantId}/${account.accountId}`;

const settingsOf = (account: PecMailboxAccount): MailboxSettings & { tenantId: string } => ({
  name: mailboxName(account),
  tenantId: account.tenantId,
  host: account.host,
  port: account.port,
  tls: account.tlsMode,
  tlsRejectUnauthorized: account.tlsRejectUnauthorized,
  user: account.user ?? '',
  password: account.password ?? '',
  folder: account.folder,
  // Flagged where they are, never moved: the provider's own clients expect the receipts in place.
  folders: { processed: '', unmatched: '', not_bounce: '' },
  verpReturnPath: '',
  markSeen: false,
});

type PecDeps = { clock: Clock; ids: IdSource; log: Logger; random: () => number };

/** One PEC account's watcher, its receipts read by the shared parser's thread. */
function watchAccount(
  account: PecMailboxAccount,
  settings: PecSettings,
  store: PecStore,
  deps: PecDeps,
  analyse: ParserThread<PecReceiptFindings>['analyse'],
) {
  return createPecPoller({
    mailbox: settingsOf(account),
    accountId: account.accountId,
    ledger: store.bounceLedger,
    pecLedger: store.pecLedger,
    open: openImapMailbox,
    analyse,
    clock: deps.clock,
    ids: deps.ids,
    random: deps.random,
    log: deps.log.child({ mailbox: mailboxName(account) }),
    config: {
      pollIntervalMs: settings.pollIntervalMs,
      maxReceiptBytes: settings.maxReceiptBytes,
      parseTimeoutMs: settings.parseTimeoutMs,
      batchSize: settings.batchSize,
      reconnectInitialMs: settings.reconnectInitialMs,
      reconnectMaxMs: settings.reconnectMaxMs,
    },
  });
}

/**
 * Watchers for exactly the PEC accounts there are, each with the settings saved last: `reconcile`
 * follows the accounts when their version moved. Once halted, no watcher is started again.
 */
function accountWatchers(
  accounts: PecStore['accounts'],
  watch: (account: PecMailboxAccount) => MailboxWatcher,
  log: Logger,
) {
  const watchers = new Map<string, { fingerprint: string; watcher: MailboxWatcher }>();
  let seenVersion: string | null = null;
  let running = false;

  const reconcile = async (): Promise<void> => {
    const version = accounts.version();
    if (version === seenVersion || !running) return;
    const wanted = new Map(accounts.pecMailboxes().map((account) => [mailboxName(account), account]));
    const stopping: Array<Promise<void>> = [];
    for (const [name, { fingerprint, watcher }] of watchers) {
      const account = wanted.get(name);
      if (account !== undefined && JSON.stringify(account) === fingerprint) continue;
      watchers.delete(name);
      stopping.push(watcher.stop());
      log.info({ mailbox: name, reason: account === undefined ? 'removed' : 'changed' }, 'PEC mailbox watcher stopped');
    }
    await Promise.all(stopping);
    for (const [name, account] of wanted) {
      if (watchers.has(name) || !running) continue;
      const watcher = watch(account);
      watchers.set(name, { fingerprint: JSON.stringify(account), watcher });
      watcher.start();
    }
    // Only now: a check that failed on the way (the store busy) is made again at the next tick.
    seenVersion = version;
  };

  return {
    reconcile,
    run(): void {
      running = true;
    },
    halt(): void {
      running = false;
    },
    async stopAll(): Promise<void> {
      await Promise.all([...watchers.values()].map(({ watcher }) => watcher.stop()));
      watchers.clear();
    },
    pollNow: (): void => watchers.forEach(({ watcher }) => watcher.pollNow()),
    status: (): MailboxStatus[] => [...watchers.values()].map(({ watcher }) => watcher.status()),
  };
}

/** Settles the messages whose acceptance receipt is overdue, a transaction per SWEEP_BATCH; says how many once. */
function sweepOverdue(settings: PecSettings, store: PecStore, clock: Clock, log: Logger): void {
  const now = clock.now();
  const cutoff = now - settings.acceptanceTimeoutMs;
  let expired = 0;
  let batch: { expired: number; released: number };
  do {
    batch = store.pecReceipts.expireAwaiting(cutoff, now, SWEEP_BATCH);
    expired += batch.expired;
  } while (batch.expired + batch.released === SWEEP_BATCH);
  if (expired > 0)
    log.warn(
      { messages: expired, timeoutSeconds: settings.acceptanceTimeoutMs / 1000 },
      'PEC acceptance receipts missing: pec_error set',
    );
}

export function createPecWatchers(settings: PecSettings, store: PecStore, deps: PecDeps): PecWatchers {
  const log = deps.log.child({ component: 'pec' });
  const parser = createParserThread<PecReceiptFindings>({
    script: new URL('./pec-parser.thread.js', import.meta.url),
    name: 'pec-parser',
    timeoutMs: settings.parseTimeoutMs,
    log,
  });
  const watchers = accountWatchers(
    store.accounts,
    (account) => watchAccount(account, settings, store, { ...deps, log }, parser.analyse),
    log,
  );
  const accountsLoop = createPeriodicLoop({
    name: 'pec-accounts',
    intervalMs: ACCOUNTS_CHECK_MS,
    run: watchers.reconcile,
    log,
  });
  const sweepLoop = createPeriodicLoop({
    name: 'pec-timeout',
    intervalMs: settings.sweepIntervalMs,
    run: () => sweepOverdue(settings, store, deps.clock, log),
    log,
  });

  return {
    start() {
      watchers.run();
      void accountsLoop.tick();
      accountsLoop.start();
      sweepLoop.start();
    },
    async stop() {
      watchers.halt();
      await Promise.all([accountsLoop.stop(), sweepLoop.stop()]);
      await watchers.stopAll();
      await parser.close();
    },
    pollNow: () => watchers.pollNow(),
    status: () => watchers.status(),
    accountsChanged: () => void accountsLoop.tick(),
    async tick() {
      await accountsLoop.tick();
      await sweepLoop.tick();
    },
  };
}
