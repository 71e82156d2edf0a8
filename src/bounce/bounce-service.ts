/**
 * Bounce detection as the daemon runs it: one poller per configured mailbox
 * (the instance's and each tenant's), the parser in a thread of its own, and
 * the PEC accounts' watchers (pec-service.ts), run as one service that stops
 * with intake: no new mail is read once the daemon is stopping.
 */
import type { BouncePolicy } from '../core/bounce/index.js';
import type { Clock, IdSource, Logger } from '../core/index.js';
import { type Service, within } from '../runtime/index.js';
import { createBouncePoller, type BouncePoller } from './bounce-poller.js';
import type { BounceAnalysis } from './bounce-parser.js';
import { createParserThread, openImapMailbox, type MailboxSettings } from '../mailbox/index.js';
import { createPecWatchers, type MailboxWatchers, type PecSettings, type PecStore } from '../pec/index.js';

export type { MailboxWatchers } from '../pec/index.js';

export interface BounceSettings {
  mailboxes: MailboxSettings[];
  policy: BouncePolicy;
  pollIntervalMs: number;
  maxMessageBytes: number;
  parseTimeoutMs: number;
  batchSize: number;
  reconnectInitialMs: number;
  reconnectMaxMs: number;
}

export interface BounceService {
  watchers: MailboxWatchers;
  service: Service;
}

export function createBounceService(
  settings: { bounce: BounceSettings; pec: PecSettings },
  store: PecStore,
  deps: { clock: Clock; ids: IdSource; log: Logger; random: () => number },
): BounceService {
  const { bounce } = settings;
  const parser = createParserThread<BounceAnalysis>({
    script: new URL('./bounce-parser.thread.js', import.meta.url),
    name: 'bounce-parser',
    timeoutMs: bounce.parseTimeoutMs,
    log: deps.log,
  });
  const pollers: BouncePoller[] = bounce.mailboxes.map((mailbox) =>
    createBouncePoller({
      mailbox,
      ledger: store.bounceLedger,
      open: openImapMailbox,
      analyse: parser.analyse,
      policy: bounce.policy,
      clock: deps.clock,
      random: deps.random,
      log: deps.log.child({ component: 'bounce', mailbox: mailbox.name }),
      config: {
        pollIntervalMs: bounce.pollIntervalMs,
        maxMessageBytes: bounce.maxMessageBytes,
        parseTimeoutMs: bounce.parseTimeoutMs,
        batchSize: bounce.batchSize,
        reconnectInitialMs: bounce.reconnectInitialMs,
        reconnectMaxMs: bounce.reconnectMaxMs,
      },
    }),
  );
  const pec = createPecWatchers(settings.pec, store, deps);
  const watchers: MailboxWatchers = {
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
  return {
    watchers,
    service: {
      name: 'mailboxes',
      start: () => watchers.start(),
      stop: (budget) => within(watchers.stop(), budget.waitLeft()),
    },
  };
}
