/**
 * Watches one bounce mailbox: connects (and reconnects with backoff, forever),
 * takes up from the checkpoint, reads each new message, records what it means
 * (core/bounce-plan.ts, one durable transaction per message) and only then
 * files it in the mailbox. Between rounds it waits for the server to tell of
 * new mail (IDLE) or for the poll interval. `pollNow()` cuts a wait short.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { correlate, planBounce, type BouncePolicy } from '../core/bounce-plan.js';
import type { BounceDisposition, BounceLedger, BouncePlan, MailboxItem, MailboxStatus, MatchedBy } from '../core/bounce.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { exponentialBackoff } from '../core/retry-policy.js';
import { verpMessagePk } from '../core/verp.js';
import type { BounceAnalysis } from './bounce-parser.js';
import type { ListedMessage, MailboxSession, MailboxSettings } from './imap-mailbox.js';
import { readFindings, summariseHeaders, UNREADABLE } from './mailbox-reading.js';

export interface BouncePollerConfig {
  pollIntervalMs: number;
  maxMessageBytes: number;
  parseTimeoutMs: number;
  batchSize: number;
  reconnectInitialMs: number;
  reconnectMaxMs: number;
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

export interface BouncePoller {
  start(): void;
  stop(): Promise<void>;
  /** Ends the current wait: the next round starts now. */
  pollNow(): void;
  status(): MailboxStatus;
}

export function createBouncePoller(deps: BouncePollerDeps): BouncePoller {
  const { mailbox, ledger, clock, log, config } = deps;
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

  const lookup = (by: MatchedBy, value: string) => ledger.candidates(by, value, mailbox.tenantId);

  // `analyse` keeps to parseTimeoutMs itself (abandoning the thread); this is the backstop should it not.
  const parse = (raw: Buffer) => readFindings(raw, config.parseTimeoutMs * 2 + BACKSTOP_MS, deps.analyse);

  /**
   * What one message means. A copy of a message handled before (the same
   * Message-ID, here or earlier in this batch) is filed as it was, without effects.
   */
  const decide = async (uidValidity: number, uid: number, size: number, raw: Buffer, parsing: ReturnType<typeof parse>, batch: Map<string, BounceDisposition>): Promise<Settlement> => {
    const headers = summariseHeaders(raw);
    const read = await parsing;
    if (read.problem !== null) {
      status.unreadable += 1;
      log.warn({ mailbox: name, uid, problem: read.problem }, 'bounce mailbox message not understood');
    }
    const findings = { ...read.findings, verpMessagePk: verpMessagePk(mailbox.verpReturnPath, headers.deliveredTo) };
    const item: MailboxItem = {
      mailbox: name, uidValidity, uid, headerMessageId: headers.messageId, from: headers.from, subject: headers.subject, sizeBytes: size, findings,
    };
    const earlier = headers.messageId === null ? null : (batch.get(headers.messageId) ?? ledger.previousDisposition(name, headers.messageId));
    const plan = earlier !== null
      ? { ...SKIP_PLAN, disposition: earlier }
      : planBounce(findings, correlate(findings, lookup), deps.policy, clock.now());
    if (headers.messageId !== null) batch.set(headers.messageId, plan.disposition);
    return { item, plan };
  };

  /**
   * Reads every message past the checkpoint (in groups fetched by one command
   * each, bounded in bytes), records the whole batch in one durable
   * transaction, then files it; true when a full batch suggests more.
   */
  const round = async (session: MailboxSession): Promise<boolean> => {
    const lastUid = ledger.checkpoint(name)?.lastUid ?? 0;
    const listed = await session.listAfter(lastUid, config.batchSize);
    const settlements: Settlement[] = [];
    const seenInBatch = new Map<string, BounceDisposition>();
    for (const group of fetchGroups(listed, config.maxMessageBytes)) {
      if (stopping) break;
      const wanted = group.filter((message) => !message.handled);
      const sources = wanted.length === 0 ? new Map<number, Buffer>() : await session.readMany(wanted.map((message) => message.uid), config.maxMessageBytes);
      // The group is parsed all at once (the parser thread takes it in one hop); decided in UID order.
      const parsing = new Map([...sources].map(([uid, raw]) => [uid, parse(raw)]));
      for (const message of group) {
        const raw = message.handled ? undefined : sources.get(message.uid);
        const parsed = parsing.get(message.uid);
        // Ours already (a keyword from before a lost checkpoint) or gone meanwhile: only the checkpoint moves.
        settlements.push(raw === undefined || parsed === undefined
          ? { item: skipped(name, session.uidValidity, message.uid, message.size), plan: SKIP_PLAN, filed: true }
          : await decide(session.uidValidity, message.uid, message.size, raw, parsed, seenInBatch));
      }
    }
    if (settlements.length === 0) {
      status.last_round_at = clock.now();
      return false;
    }
    ledger.settle(settlements, clock.now());
    const nothingToFile = settlements.filter((settlement) => settlement.filed === true).map((settlement) => settlement.item.uid);
    if (nothingToFile.length > 0) ledger.markFiled(name, session.uidValidity, nothingToFile, clock.now());
    const toFile = new Map<BounceDisposition, number[]>();
    for (const { item, plan, filed } of settlements) {
      if (filed === true) continue;
      status.handled[plan.disposition] += 1;
      toFile.set(plan.disposition, [...(toFile.get(plan.disposition) ?? []), item.uid]);
      if (plan.match !== null) log.info({ mailbox: name, uid: item.uid, tenantId: plan.match.candidate.tenantId, messageId: plan.match.candidate.id, kind: item.findings.kind }, 'bounce recorded');
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
        if (checkpoint !== null) log.warn({ mailbox: name, was: checkpoint.uidValidity, now: session.uidValidity }, 'bounce mailbox UIDVALIDITY changed: reading it again from the start');
        ledger.resetCheckpoint(name, session.uidValidity, clock.now());
      }
      status.uid_validity = session.uidValidity;
      await refile(session);
      log.info({ mailbox: name, folder: mailbox.folder, idle: session.idle }, 'bounce mailbox connected');
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
        const delay = exponentialBackoff(status.failures, { initialMs: config.reconnectInitialMs, maxMs: config.reconnectMaxMs, jitter: 0.2 }, deps.random());
        status.next_attempt_at = clock.now() + delay;
        status.state = 'backoff';
        log.warn({ mailbox: name, err: error, failures: status.failures, retryInMs: delay }, 'bounce mailbox unavailable');
        await sleep(delay);
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

const BACKSTOP_MS = 10_000;

/** How long stop() waits for a round or a connection attempt in progress. */
const STOP_WAIT_MS = 5000;

type Settlement = { item: MailboxItem; plan: BouncePlan; filed?: boolean };

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

const SKIP_PLAN: BouncePlan = { disposition: 'not_bounce', unmatchedReason: null, match: null, bounces: [], complaints: [], suppressions: [] };

const skipped = (mailbox: string, uidValidity: number, uid: number, sizeBytes: number): MailboxItem => ({
  mailbox, uidValidity, uid, headerMessageId: null, from: null, subject: null, sizeBytes, findings: { ...UNREADABLE, kind: 'not_bounce' },
});
