/**
 * Bounce detection for the daemon: one poller per configured mailbox (the
 * instance's `[bounce]` and each of `[[bounce.tenant_mailboxes]]`). With no
 * host configured there is nothing to watch and nothing runs.
 */
import type { BouncePolicy } from '../core/bounce-plan.js';
import type { Clock, IdSource } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { Config } from '../config/index.js';
import { createBouncePoller, type BouncePoller } from '../bounce/bounce-poller.js';
import type { BounceAnalysis } from '../bounce/bounce-parser.js';
import { openImapMailbox, type MailboxSettings } from '../bounce/imap-mailbox.js';
import type { SqliteStore } from '../store/index.js';
import { createParserThread } from './parser-thread.js';
import { createPec, type MailboxWatchers } from './pec.js';

/** The bounce mailboxes' pollers and the PEC accounts' watchers (daemon/pec.ts), run as one. */
export type DaemonBounces = MailboxWatchers;

type MailboxConfig = Config['bounce']['tenant_mailboxes'][number];

const settingsOf = (name: string, tenantId: string | null, mailbox: Omit<MailboxConfig, 'tenant_id'>): MailboxSettings => ({
  name,
  tenantId,
  host: mailbox.host,
  port: mailbox.port,
  tls: mailbox.tls,
  tlsRejectUnauthorized: mailbox.tls_reject_unauthorized,
  user: mailbox.user,
  password: mailbox.password,
  folder: mailbox.folder,
  folders: { processed: mailbox.processed_folder, unmatched: mailbox.unmatched_folder, not_bounce: mailbox.not_bounce_folder },
  verpReturnPath: mailbox.verp_return_path,
  markSeen: true,
});

export function createBounces(config: Readonly<Config>, store: SqliteStore, deps: { clock: Clock; ids: IdSource; log: Logger; random: () => number }): DaemonBounces {
  const { bounce } = config;
  const policy: BouncePolicy = {
    suppressHardBounces: bounce.suppress_hard_bounces,
    suppressComplaints: bounce.suppress_complaints,
    suppressionTtlMs: bounce.suppression_ttl_seconds === 0 ? null : bounce.suppression_ttl_seconds * 1000,
  };
  const mailboxes = [
    ...(bounce.host === '' ? [] : [settingsOf('default', null, bounce)]),
    ...bounce.tenant_mailboxes.map((mailbox) => settingsOf(`tenant:${mailbox.tenant_id}`, mailbox.tenant_id, mailbox)),
  ];
  const parser = createParserThread<BounceAnalysis>({
    script: '../workers/bounce-parser.js', name: 'bounce-parser', timeoutMs: bounce.parse_timeout_seconds * 1000, log: deps.log,
  });
  const pollers: BouncePoller[] = mailboxes.map((mailbox) =>
    createBouncePoller({
      mailbox,
      ledger: store.bounceLedger,
      open: openImapMailbox,
      analyse: parser.analyse,
      policy,
      clock: deps.clock,
      random: deps.random,
      log: deps.log.child({ component: 'bounce', mailbox: mailbox.name }),
      config: {
        pollIntervalMs: bounce.poll_interval_seconds * 1000,
        maxMessageBytes: bounce.max_message_bytes,
        parseTimeoutMs: bounce.parse_timeout_seconds * 1000,
        batchSize: bounce.batch_size,
        reconnectInitialMs: bounce.reconnect_initial_seconds * 1000,
        reconnectMaxMs: bounce.reconnect_max_seconds * 1000,
      },
    }));
  const pec = createPec(config, store, deps);
  return {
    start: () => {
      pollers.forEach((poller) => poller.start());
      pec.start();
    },
    stop: async () => {
      await Promise.all([...pollers.map((poller) => poller.stop()), pec.stop()]);
      await parser.close();
    },
    pollNow: () => {
      pollers.forEach((poller) => poller.pollNow());
      pec.pollNow();
    },
    status: () => [...pollers.map((poller) => poller.status()), ...pec.status()],
    accountsChanged: () => pec.accountsChanged(),
  };
}
