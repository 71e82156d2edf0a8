/**
 * The daemon's side of one session process's questions and news: the same
 * ports the in-process listener uses (the store, the authenticator, the one
 * submission service and so the same group commit), and what must be undone
 * when the process goes away: the connections it had admitted and the
 * spools no message took.
 */
import type { Logger, SmtpTelemetry } from '../../core/index.js';
import type { MessageSpool, SubmissionItem } from '../../core/message/index.js';
import type { TenantAccounts } from './account-checks.js';
import type { CountingGate } from './client-gate.js';
import type { Answer, SmtpSessionDeps } from './session-deps.js';
import { replyToWire, type Ask, type Tell } from './session-protocol.js';

/** The session ports as the daemon has them: answered at once, from this process's store. */
export interface HostPorts extends Pick<SmtpSessionDeps, 'submissions' | 'spool' | 'intake' | 'draining'> {
  authenticate(password: string, client: string, tenantId: string | null): void;
  accountsOf(tenantId: string): TenantAccounts;
  suppressed(tenantId: string, addresses: readonly string[], now: number): ReadonlySet<string>;
  clients: CountingGate;
  telemetry?: SmtpTelemetry | undefined;
  log: Logger;
}

/**
 * A session process's spools: the store's spool under the process's number
 * until the message takes it, or why it could not be written (the message is
 * then refused with 451 when submitted; nothing of it is kept).
 */
function createSpoolRelay(spool: MessageSpool, log: Logger) {
  const spools = new Map<number, number | Error>();
  const discardStored = (stored: number | Error | undefined): void => {
    if (typeof stored !== 'number') return;
    try {
      spool.discard(stored);
    } catch {
      // The store cannot write now; its sweep removes the spool later.
    }
  };
  return {
    /** The items with each spool named by the store's id; throws when a spool could not be written. */
    stored: (items: readonly SubmissionItem[]): SubmissionItem[] =>
      items.map((item) => {
        const content = item.message?.content;
        if (item.message === undefined || content?.kind !== 'spooled') return item;
        const id = spools.get(content.spoolId);
        if (typeof id !== 'number') throw id ?? new Error(`spool ${content.spoolId} of a session process is unknown`);
        return { ...item, message: { ...item.message, content: { kind: 'spooled', spoolId: id } } };
      }),
    /** The message took its spool: it is the message's now. */
    taken: (items: readonly SubmissionItem[]): void => {
      for (const item of items)
        if (item.message?.content.kind === 'spooled') spools.delete(item.message.content.spoolId);
    },
    hear(news: Extract<Tell, { op: `spool-${string}` }>): void {
      const current = spools.get(news.spool);
      try {
        if (news.op === 'spool-open') spools.set(news.spool, spool.open(news.now, news.tenantId));
        else if (news.op === 'spool-append' && typeof current === 'number') spool.append(current, news.seq, news.bytes);
        else if (news.op === 'spool-discard') {
          spools.delete(news.spool);
          discardStored(current);
        }
      } catch (error) {
        log.error({ err: error }, 'spooling a message failed');
        discardStored(current);
        spools.set(news.spool, error instanceof Error ? error : new Error(String(error)));
      }
    },
    /** The process went away: the spools no message took are abandoned. */
    forget(): void {
      for (const id of spools.values()) discardStored(id);
      spools.clear();
    },
  };
}

export function createSessionAnswers(ports: HostPorts) {
  const spools = createSpoolRelay(ports.spool, ports.log);
  /** Connections of this process counted at the gate, by client. */
  const admitted = new Map<string, number>();

  const enqueue = async (ask: Extract<Ask, { op: 'enqueue' }>) => {
    const result = await ports.submissions.enqueue(
      ask.principal,
      spools.stored(ask.items),
      ask.priority,
      ask.correlationId,
    );
    // A refused message's spool is discarded by the process.
    if (result.rejected.length === 0) spools.taken(ask.items);
    return result;
  };

  const admit = (client: string) => {
    const refusal = ports.clients.admit(client);
    if (refusal === null) admitted.set(client, (admitted.get(client) ?? 0) + 1);
    return refusal;
  };

  const release = (client: string): void => {
    const open = admitted.get(client);
    if (open === undefined) return;
    if (open <= 1) admitted.delete(client);
    else admitted.set(client, open - 1);
    ports.clients.release(client);
  };

  return {
    answer(ask: Ask): Answer<unknown> {
      switch (ask.op) {
        case 'admit':
          return replyToWire(admit(ask.client));
        case 'auth':
          return ports.authenticate(ask.password, ask.client, ask.tenantId);
        case 'accounts':
          return ports.accountsOf(ask.tenantId);
        case 'suppressed':
          return [...ports.suppressed(ask.tenantId, ask.addresses, ask.now)];
        case 'enqueue':
          return enqueue(ask);
      }
    },

    hear(news: Tell): void {
      if ('log' in news) {
        ports.log[news.log.level](news.log.fields, news.log.message);
        return;
      }
      switch (news.op) {
        case 'release':
          return release(news.client);
        case 'spool-open':
        case 'spool-append':
        case 'spool-discard':
          return spools.hear(news);
        case 'connected':
          return ports.telemetry?.connected(news.listener);
        case 'rejected':
          return ports.telemetry?.rejected(news.code, news.status);
        case 'submitted':
          return ports.intake?.submitted('smtp', news.elapsedMs);
        default:
          return;
      }
    },

    /** The process went away: its connections are closed, its spools abandoned. */
    forget(): void {
      for (const [client, open] of admitted) for (let n = 0; n < open; n += 1) ports.clients.release(client);
      admitted.clear();
      spools.forget();
    },
  };
}
