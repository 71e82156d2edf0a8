/**
 * The bounce mailbox's handler for the mailbox watcher (mailbox-watcher.ts):
 * each new message is parsed (bounded in time), tied to the message it is
 * about, and its plan (core/bounce/plan.ts) is recorded in the batch's durable
 * transaction before the message is filed.
 */
import {
  correlate,
  planBounce,
  type BouncePolicy,
  type BounceDisposition,
  type BounceLedger,
  type BouncePlan,
  type MailboxItem,
  type MatchedBy,
  verpMessagePk,
} from '../core/bounce/index.js';
import type { Clock, Logger } from '../core/index.js';
import type { BounceAnalysis } from './bounce-parser.js';
import {
  filedMessage,
  watchMailbox,
  type Handled,
  type MailboxHandler,
  type MailboxSession,
  type MailboxSettings,
  type MailboxWatcher,
  type WatcherConfig,
} from '../mailbox/index.js';
import { readFindings, UNREADABLE } from './bounce-findings.js';

export interface BouncePollerConfig extends WatcherConfig {
  maxMessageBytes: number;
  parseTimeoutMs: number;
}

export interface BouncePollerDeps {
  mailbox: MailboxSettings;
  ledger: BounceLedger;
  open: (settings: MailboxSettings) => Promise<MailboxSession>;
  /** The parser, wherever it runs (a worker thread in the daemon); it rejects on its own timeout. */
  analyse: (raw: Buffer) => Promise<BounceAnalysis>;
  policy: BouncePolicy;
  clock: Clock;
  random: () => number;
  log: Logger;
  config: BouncePollerConfig;
}

export type BouncePoller = MailboxWatcher;

type Reading = Awaited<ReturnType<typeof readFindings>>;
type Settlement = { item: MailboxItem; plan: BouncePlan };

export function createBouncePoller(deps: BouncePollerDeps): BouncePoller {
  const { mailbox, ledger, clock, log, config } = deps;
  const name = mailbox.name;
  const lookup = (by: MatchedBy, value: string) => ledger.candidates(by, value, mailbox.tenantId);

  const handler: MailboxHandler<Reading, Settlement> = {
    maxMessageBytes: config.maxMessageBytes,
    // `analyse` keeps to parseTimeoutMs itself (abandoning the thread); this is the backstop should it not.
    understand: (raw) => readFindings(raw, config.parseTimeoutMs * 2 + BACKSTOP_MS, deps.analyse),
    plan(message) {
      const { uid, headers, understood, copyOf } = message;
      if (understood.problem !== null)
        log.warn({ mailbox: name, uid, problem: understood.problem }, 'bounce mailbox message not understood');
      const findings = {
        ...understood.findings,
        verpMessagePk: verpMessagePk(mailbox.verpReturnPath, headers.deliveredTo),
      };
      const item: MailboxItem = { ...filedMessage(name, message), findings };
      // A copy of a message handled before (the same Message-ID) is filed as it was, without effects.
      const plan =
        copyOf !== null
          ? { ...SKIP_PLAN, disposition: copyOf }
          : planBounce(findings, correlate(findings, lookup), deps.policy, clock.now());
      return { uid, disposition: plan.disposition, unreadable: understood.problem !== null, value: { item, plan } };
    },
    skip: (uidValidity, uid, size) => ({
      uid,
      disposition: 'not_bounce',
      value: { item: skipped(name, uidValidity, uid, size), plan: SKIP_PLAN },
    }),
    settle: (batch, at) =>
      ledger.settle(
        batch.map((handled) => handled.value),
        at,
      ),
    filed({ uid, value: { item, plan } }: Handled<Settlement>) {
      if (plan.match !== null)
        log.info(
          {
            mailbox: name,
            uid,
            tenantId: plan.match.candidate.tenantId,
            messageId: plan.match.candidate.id,
            kind: item.findings.kind,
          },
          'bounce recorded',
        );
    },
  };

  return watchMailbox({ mailbox, ledger, open: deps.open, handler, clock, random: deps.random, log, config });
}

const BACKSTOP_MS = 10_000;

const SKIP_PLAN: BouncePlan = {
  disposition: 'not_bounce' satisfies BounceDisposition,
  unmatchedReason: null,
  match: null,
  bounces: [],
  complaints: [],
  suppressions: [],
};

const skipped = (mailbox: string, uidValidity: number, uid: number, sizeBytes: number): MailboxItem => ({
  mailbox,
  uidValidity,
  uid,
  headerMessageId: null,
  from: null,
  subject: null,
  sizeBytes,
  findings: { ...UNREADABLE, kind: 'not_bounce' },
});
