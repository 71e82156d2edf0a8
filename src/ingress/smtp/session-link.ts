/**
 * A session process's side of the IPC channel: the session handlers' ports as
 * questions to the daemon (answered by id), telemetry and spool writes as news.
 * What is said in one turn leaves as one message. The spool is written ahead:
 * parts go out as they arrive and the daemon stores them in order, under this
 * process's number for the spool, so a large message never waits here.
 */
import type { Clock, IdSource, Logger, SmtpTelemetry } from '../../core/index.js';
import { sealedWhereRead, type MessageSpool, type SealingKeys, type SubmissionItem } from '../../core/message/index.js';
import type { Principal } from '../../core/tenant/index.js';
import type { SmtpPolicy, SmtpSessionDeps } from './session-deps.js';
import {
  fromWire,
  replyFromWire,
  type Answers,
  type Ask,
  type FromSession,
  type Tell,
  type WireAnswer,
} from './session-protocol.js';

/** How long a session's passed MAIL FROM check holds for its next transactions (SmtpSessionDeps). */
const MAIL_CHECK_REUSE_MS = 1000;
/** How long news nobody waits for may wait for company. */
const NEWS_DELAY_MS = 50;
/**
 * News that leaves at the end of the turn: spool parts (memory, and their order before the
 * submission), a closed connection (the per-client count must not lag behind a client that
 * reconnects at once) and the process's own state.
 */
const URGENT: ReadonlySet<string> = new Set([
  'tls-reloaded',
  'spool-open',
  'spool-append',
  'spool-discard',
  'release',
  'listening',
  'closed',
]);

type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void };

/**
 * An item whose bytes are in hand, sealed here for its tenant (the daemon's store then keeps it as
 * it is, without a cipher on the daemon's main thread). A spooled one was sealed part by part
 * under its spool's key by the daemon; one with no tenant yet is left to the store.
 */
function sealedItem(item: SubmissionItem, principal: Principal, keys: SealingKeys | null): SubmissionItem {
  if (keys === null) return item;
  const message = item.message;
  const tenantId = item.tenantId ?? (principal.kind === 'tenant' ? principal.tenantId : null);
  if (message === undefined || message.content.kind !== 'raw' || tenantId === null) return item;
  return { ...item, message: sealedWhereRead(message, tenantId, keys, message.content.bytes, 'smtp') };
}

/**
 * What this process says to the daemon, gathered: questions and spool writes
 * leave at the end of the turn; news nobody waits for (telemetry, a log line)
 * waits up to NEWS_DELAY_MS for something else to leave with, as each message
 * wakes the daemon's main thread.
 */
function gathered(send: (message: FromSession) => void) {
  let outbox: FromSession = [];
  let timer: NodeJS.Timeout | null = null;
  let flushing = false;
  const flush = (): void => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    flushing = false;
    const batch = outbox;
    outbox = [];
    if (batch.length > 0) send(batch);
  };
  return (entry: FromSession[number], urgent: boolean): void => {
    outbox.push(entry);
    if (urgent && !flushing) {
      flushing = true;
      setImmediate(flush);
    } else if (!urgent && timer === null && !flushing) {
      timer = setTimeout(flush, NEWS_DELAY_MS);
      timer.unref();
    }
  };
}

/** The spool written ahead: parts told as they arrive, under this process's number for the spool. */
function spoolAhead(tell: (news: Tell) => void): MessageSpool {
  let nextSpool = 1;
  return {
    open(now, tenantId) {
      const id = nextSpool++;
      tell({ op: 'spool-open', spool: id, now, tenantId });
      return id;
    },
    append: (id, seq, bytes) => tell({ op: 'spool-append', spool: id, seq, bytes }),
    discard: (id) => tell({ op: 'spool-discard', spool: id }),
    // The daemon sweeps its own store.
    sweep: () => 0,
  };
}

export function connectSessionLink(send: (message: FromSession) => void) {
  const post = gathered(send);
  let nextId = 1;
  let draining = false;
  const pending = new Map<number, Pending>();

  const tell = (news: Tell): void => post({ tell: news }, 'op' in news && URGENT.has(news.op));
  const ask = <A extends Ask>(question: A): Promise<Answers[A['op']]> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      post({ id, ask: question }, true);
    });

  const spool = spoolAhead(tell);

  const telemetry: SmtpTelemetry = {
    connected: (listener) => tell({ op: 'connected', listener }),
    rejected: (code, status) => tell({ op: 'rejected', code, status }),
    // Counted by the daemon, which decides the AUTH and sees its processes end.
    authFailed: () => undefined,
    sessionProcessLost: () => undefined,
  };

  const deps = (
    local: { policy: SmtpPolicy; clock: Clock; ids: IdSource; log: Logger },
    sealing: SealingKeys | null = null,
  ): SmtpSessionDeps => ({
    ...local,
    authenticate: async (password, client, tenantId) => {
      await ask({ op: 'auth', password, client, tenantId });
    },
    accountsOf: (tenantId) => ask({ op: 'accounts', tenantId }),
    suppressed: async (tenantId, addresses, now) => new Set(await ask({ op: 'suppressed', tenantId, addresses, now })),
    clients: {
      admit: async (client) => replyFromWire(await ask({ op: 'admit', client })),
      release: (client) => tell({ op: 'release', client }),
    },
    submissions: {
      enqueue: (principal, items, priority, correlationId) =>
        ask({
          op: 'enqueue',
          principal,
          items: items.map((item) => sealedItem(item, principal, sealing)),
          priority,
          correlationId,
        }),
    },
    spool,
    intake: { submitted: (_channel, elapsedMs) => tell({ op: 'submitted', elapsedMs }) },
    draining: () => draining,
    // A keep-alive session's next transaction does not ask again: a third of its questions.
    reuseMailCheckMs: MAIL_CHECK_REUSE_MS,
  });

  return {
    deps,
    telemetry,
    tell,
    /** The daemon's answers, and whether its node drains (told with every answer). */
    answered(answers: readonly WireAnswer[], nowDraining: boolean): void {
      draining = nowDraining;
      for (const answer of answers) {
        const waiting = pending.get(answer.id);
        if (waiting === undefined) continue;
        pending.delete(answer.id);
        if (answer.ok) waiting.resolve(answer.value);
        else waiting.reject(fromWire(answer.error));
      }
    },
  };
}
