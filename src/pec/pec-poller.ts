/**
 * A PEC account's mailbox, watched like a bounce mailbox (mailbox-watcher.ts)
 * with its own handler: each new message is read whole (a receipt is legal
 * evidence: its bytes are kept), parsed as a PEC receipt (bounded in time),
 * tied to the message it is about (core/pec/plan.ts), and recorded with its
 * effect in the batch's durable transaction before it is flagged. Mail that is
 * no receipt is flagged too, never marked read: people read this mailbox.
 */
import type { BounceLedger } from '../core/bounce/index.js';
import type { Clock, IdSource, Logger } from '../core/index.js';
import {
  correlateReceipt,
  planReceipt,
  type PecLedger,
  type PecPlan,
  type PecSettlement,
  NOT_A_RECEIPT,
  type PecReceiptFindings,
} from '../core/pec/index.js';
import {
  parseWithin,
  filedMessage,
  watchMailbox,
  type Handled,
  type MailboxHandler,
  type MailboxSession,
  type MailboxSettings,
  type MailboxWatcher,
  type MessageToPlan,
  type WatcherConfig,
} from '../mailbox/index.js';

export interface PecPollerConfig extends WatcherConfig {
  /** A larger receipt is kept in part (`complete: false`). */
  maxReceiptBytes: number;
  parseTimeoutMs: number;
}

export interface PecPollerDeps {
  /** `pec:<tenant>/<account>`, the account's tenant, its IMAP settings. */
  mailbox: MailboxSettings & { tenantId: string };
  accountId: string;
  ledger: BounceLedger;
  pecLedger: PecLedger;
  open: (settings: MailboxSettings) => Promise<MailboxSession>;
  /** The receipt parser, wherever it runs (a worker thread in the daemon); it rejects on its own timeout. */
  analyse: (raw: Buffer) => Promise<PecReceiptFindings>;
  clock: Clock;
  ids: IdSource;
  random: () => number;
  log: Logger;
  config: PecPollerConfig;
}

type Reading = { findings: PecReceiptFindings; problem: string | null };

const NOTHING: PecPlan = { disposition: 'not_bounce', unmatchedReason: null, match: null, effect: null };

/**
 * A receipt tied to the message it is about (core/pec/plan.ts), its effect planned, and its bytes
 * kept whole (legal evidence); mail that is no receipt gets a plan and no receipt.
 */
function planReceiptMessage(
  deps: PecPollerDeps,
  message: MessageToPlan<Reading>,
  findings: PecReceiptFindings,
): Pick<PecSettlement, 'plan' | 'receipt'> {
  const { mailbox } = deps;
  const { uidValidity, uid, size, raw, headers } = message;
  const now = deps.clock.now();
  const receiptId = deps.ids.uuid();
  const correlation = correlateReceipt(findings, (by, value) => deps.pecLedger.candidates(by, value, mailbox.tenantId));
  const plan = planReceipt(findings, correlation, receiptId, now);
  if (findings.type === null) return { plan, receipt: null };
  const receipt = {
    receiptId,
    tenantId: mailbox.tenantId,
    accountId: deps.accountId,
    mailbox: mailbox.name,
    uidValidity,
    uid,
    receivedAt: now,
    findings,
    headerMessageId: headers.messageId,
    subject: headers.subject,
    sizeBytes: size,
    raw,
    complete: raw.length >= size,
  };
  return { plan, receipt };
}

/** What one message of the mailbox is, and how it is filed: unreadable, a copy, a receipt, or other mail. */
function planMessage(deps: PecPollerDeps, message: MessageToPlan<Reading>): Handled<PecSettlement> {
  const { uid, understood, copyOf } = message;
  const name = deps.mailbox.name;
  const record = filedMessage(name, message);
  if (understood.problem !== null) {
    deps.log.warn({ mailbox: name, uid, problem: understood.problem }, 'PEC mailbox message not understood');
    // Kept for a human (`unmatched`): it may be a receipt the parser could not read.
    const plan: PecPlan = { ...NOTHING, disposition: 'unmatched' };
    return {
      uid,
      disposition: plan.disposition,
      unreadable: true,
      value: { ...record, kind: 'unreadable', plan, receipt: null },
    };
  }
  const { findings } = understood;
  // A copy of a message handled before (the same Message-ID) is filed as it was, without effects.
  if (copyOf !== null)
    return {
      uid,
      disposition: copyOf,
      value: {
        ...record,
        kind: findings.type === null ? 'not_receipt' : 'pec_receipt',
        plan: { ...NOTHING, disposition: copyOf },
        receipt: null,
      },
    };
  const { plan, receipt } = planReceiptMessage(deps, message, findings);
  return {
    uid,
    disposition: plan.disposition,
    value: { ...record, kind: receipt === null ? 'not_receipt' : 'pec_receipt', plan, receipt },
  };
}

export function createPecPoller(deps: PecPollerDeps): MailboxWatcher {
  const { mailbox, clock, log, config } = deps;

  // `analyse` keeps to parseTimeoutMs itself (abandoning the thread); this is the backstop should it not.
  const understand = async (raw: Buffer): Promise<Reading> => {
    const read = await parseWithin(() => deps.analyse(raw), config.parseTimeoutMs * 2 + BACKSTOP_MS);
    return read.problem === null
      ? { findings: read.value, problem: null }
      : { findings: NOT_A_RECEIPT, problem: read.problem };
  };

  const handler: MailboxHandler<Reading, PecSettlement> = {
    maxMessageBytes: config.maxReceiptBytes,
    understand,
    plan: (message) => planMessage(deps, message),
    skip: (uidValidity, uid, size) => ({
      uid,
      disposition: 'not_bounce',
      value: {
        mailbox: mailbox.name,
        uidValidity,
        uid,
        headerMessageId: null,
        from: null,
        subject: null,
        sizeBytes: size,
        kind: 'not_receipt',
        plan: NOTHING,
        receipt: null,
      },
    }),
    settle: (batch, at) =>
      deps.pecLedger.settle(
        batch.map((handled) => handled.value),
        at,
      ),
    filed({ uid, value }) {
      if (value.receipt === null) return;
      const match = value.plan.match;
      log.info(
        {
          mailbox: mailbox.name,
          uid,
          receiptId: value.receipt.receiptId,
          type: value.receipt.findings.type,
          messageId: match?.candidate.id ?? null,
          unmatched: value.plan.unmatchedReason,
        },
        'PEC receipt recorded',
      );
    },
  };

  return watchMailbox({
    mailbox,
    ledger: deps.ledger,
    open: deps.open,
    handler,
    clock,
    random: deps.random,
    log,
    config,
  });
}

const BACKSTOP_MS = 10_000;
