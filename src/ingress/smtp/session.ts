/**
 * The SMTP conversation's decisions, as smtp-server handlers: who may connect,
 * who may submit as which tenant and account, which recipients are taken, and
 * the durable accept of DATA. Every refusal is an SmtpReply (replies.ts).
 */
import type { SMTPServerAddress, SMTPServerAuthentication, SMTPServerDataStream, SMTPServerOptions, SMTPServerSession } from 'smtp-server';
import type { AccountChoice } from '../../core/account.js';
import { isAddrSpec } from '../../core/address.js';
import { AppError } from '../../core/app-error.js';
import { pickAccount } from '../../core/default-account.js';
import type { Clock, IdSource } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { Principal } from '../../core/principal.js';
import type { MessageSpool } from '../../core/queue.js';
import type { Rejection } from '../../core/rejection.js';
import type { SubmissionService } from '../../core/submission-service.js';
import type { IntakeTelemetry } from '../../core/telemetry.js';
import { isLoopback, parseUser, sessionIdentity, trustedNetworks, type AuthenticatedIdentity, type SmtpIdentity, type TrustedNetwork } from './identity.js';
import { discard, receiveMessage, type DataStream } from './message-receiver.js';
import { acceptedTexts, replies, SmtpReply } from './replies.js';
import { decideHeaders, rfc5322Date, type SubmissionHeaders } from './submission-headers.js';

/** A message up to this size is held in memory; a larger one goes to the spool in parts of this size. */
export const IN_MEMORY_BYTES = 512 * 1024;

export interface SmtpPolicy {
  hostname: string;
  maxMessageBytes: number;
  maxHeaderBytes: number;
  maxRecipients: number;
  maxConnectionsPerClient: number;
  dataTimeoutMs: number;
  greetingDelayMs: number;
  addReceivedHeader: boolean;
  allowInsecureAuth: boolean;
  trustedNetworks: readonly TrustedNetwork[];
}

export interface SmtpSessionDeps {
  /** Checks an API key; throws AppError UNAUTHORIZED or AUTH_THROTTLED. */
  /** `accepts` narrows who may sign in (see Authenticator.authenticate). */
  authenticate(password: string, client: string, accepts: (principal: Principal) => boolean): Principal;
  /** The tenant's accounts; null when there is no such tenant. */
  accountsOf(tenantId: string): readonly AccountChoice[] | null;
  suppressed(tenantId: string, addresses: readonly string[], now: number): Set<string>;
  submissions: Pick<SubmissionService, 'enqueue'>;
  spool: MessageSpool;
  clock: Clock;
  ids: IdSource;
  log: Logger;
  policy: SmtpPolicy;
  /** Told of each DATA answered after its commit (intake latency). */
  intake?: IntakeTelemetry | undefined;
  /** True while this fleet node drains: new sessions and transactions are told to go elsewhere. */
  draining?: (() => boolean) | undefined;
}

type Callback<T = void> = (error?: Error | null, value?: T) => void;

export function createSessionHandlers(deps: SmtpSessionDeps) {
  const { policy, log } = deps;
  const trusted = trustedNetworks(policy.trustedNetworks);
  const perClient = new Map<string, number>();
  const counted = new Set<string>();
  /** Sessions whose DATA is being received or committed. */
  const inData = new Set<string>();
  let closing = false;

  const identityOf = (session: SMTPServerSession): SmtpIdentity | null => sessionIdentity(session.user, () => trusted(session.remoteAddress));

  /** Why the session cannot send through `accountId` (null: the tenant's default), or null when it can. */
  const accountProblem = (identity: SmtpIdentity, accountId: string | null): SmtpReply | null => {
    const accounts = deps.accountsOf(identity.tenantId);
    if (accounts === null) return replies.accountNotOwned(accountId ?? '(default)');
    const pick = pickAccount(accounts, accountId ?? undefined);
    if (pick.kind === 'unknown') return replies.accountNotOwned(accountId ?? '(default)');
    return pick.kind === 'no-default' ? replies.noAccount(pick.accountIds) : null;
  };

  /**
   * What can be refused at MAIL FROM, before the client sends a body: an account the user
   * names that is not the tenant's, or a tenant with no account at all. A tenant with
   * accounts but no default is not refused here: the X-Mail-Proxy-Account header may still
   * name the account (ARCHITECTURE.md's control headers), and its multi-account legacy
   * clients rely on that; a message without it is refused after DATA, as a header can only be read then.
   */
  const envelopeAccountProblem = (identity: SmtpIdentity): SmtpReply | null => {
    if (identity.accountId !== null) return accountProblem(identity, identity.accountId);
    const accounts = deps.accountsOf(identity.tenantId);
    if (accounts === null) return replies.accountNotOwned('(default)');
    return accounts.length === 0 ? replies.noAccount([]) : null;
  };

  // The trace's date changes once a second; formatting it for every message showed in profiles.
  let stamped = { second: -1, text: '' };
  const dateText = (now: number): string => {
    const second = Math.floor(now / 1000);
    if (second !== stamped.second) stamped = { second, text: rfc5322Date(now) };
    return stamped.text;
  };
  const received =
    (session: SMTPServerSession) =>
    (id: string): string => {
      const helo = (session.hostNameAppearsAs || 'unknown').replace(/[^\w.:[\]-]/g, '').slice(0, 255) || 'unknown';
      // RFC 6531 §4.3: a transaction with SMTPUTF8 is UTF8SMTP(S)(A), not ESMTP(S)(A).
      const protocol = session.envelope.smtpUtf8 === true ? session.transmissionType.replace(/^E?SMTP/, 'UTF8SMTP') : session.transmissionType;
      return `Received: from ${helo} (${session.remoteAddress})\r\n\tby ${policy.hostname} (mailproxy) with ${protocol} id ${id};\r\n\t${dateText(deps.clock.now())}`;
    };

  const accept = async (stream: SMTPServerDataStream, session: SMTPServerSession, identity: SmtpIdentity): Promise<string> => {
    const now = deps.clock.now();
    const mailFrom = session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address;
    let headers: SubmissionHeaders | null = null;
    const outcome = await receiveMessage(
      stream as DataStream,
      (fields) => {
        const decided = decideHeaders(fields, { newId: deps.ids.uuid, now, mailFrom, received: policy.addReceivedHeader ? received(session) : null });
        if (decided instanceof SmtpReply) return decided;
        // An account named in the header is checked before the message is stored; the
        // user's was checked at MAIL, and the submission itself checks again in its
        // transaction (a default account, an account deleted meanwhile).
        const problem = decided.accountId === null || decided.accountId === identity.accountId ? null : accountProblem(identity, decided.accountId);
        if (problem !== null) return problem;
        headers = decided;
        return decided;
      },
      {
        spool: deps.spool,
        now: deps.clock.now,
        maxHeaderBytes: policy.maxHeaderBytes,
        maxMessageBytes: policy.maxMessageBytes,
        memoryBytes: IN_MEMORY_BYTES,
        onStoreError: (error) => log.error({ err: error, session: session.id }, 'spooling a message failed'),
      },
    );
    if (!outcome.ok) throw outcome.reply;
    // From the final dot: the client's upload of the data is not ours.
    const receivedAt = performance.now();
    const head = headers as SubmissionHeaders | null;
    if (head === null) throw new Error('the header was accepted but not recorded');
    const spoolId = outcome.content.kind === 'spooled' ? outcome.content.spoolId : null;
    const rcptTo = session.envelope.rcptTo.map((address) => address.address);
    const accountId = head.accountId ?? identity.accountId;
    let result;
    try {
      result = await deps.submissions.enqueue(
        { kind: 'tenant', tenantId: identity.tenantId },
        [
          {
            index: 0,
            id: head.id,
            tenantId: identity.tenantId,
            ...(accountId === null ? {} : { accountId }),
            ...(head.priority === null ? {} : { priority: head.priority }),
            message: {
              id: head.id,
              batchCode: head.batchCode,
              deferredUntil: head.deferredUntil,
              content: outcome.content,
              subject: head.subject,
              messageId: head.messageId,
              mailFrom,
              rcptTo,
              sizeBytes: outcome.sizeBytes,
            },
          },
        ],
        undefined,
        `smtp:${session.id}`,
      );
      deps.intake?.submitted('smtp', performance.now() - receivedAt);
    } catch (error) {
      discard(deps.spool, spoolId);
      throw error;
    }
    const rejection = result.rejected[0];
    if (rejection === undefined) return acceptedTexts.queued(head.id);
    discard(deps.spool, spoolId);
    // A repeated X-Genro-Mail-ID of a message already on its way is a client retrying
    // after a lost reply: it was accepted once, and is not sent twice.
    if (rejection.code === 'ALREADY_SENT') return acceptedTexts.alreadyAccepted(head.id);
    throw replyFor(rejection, accountId);
  };

  const handlers = {
    onConnect(session: SMTPServerSession, callback: Callback) {
      if (closing) return callback(replies.shuttingDown());
      if (deps.draining?.() === true) return callback(replies.draining());
      const client = session.remoteAddress;
      const open = perClient.get(client) ?? 0;
      if (open >= policy.maxConnectionsPerClient) return callback(replies.tooManyConnections());
      perClient.set(client, open + 1);
      counted.add(session.id);
      callback();
    },

    onClose(session: SMTPServerSession) {
      if (!counted.delete(session.id)) return;
      const open = (perClient.get(session.remoteAddress) ?? 1) - 1;
      if (open <= 0) perClient.delete(session.remoteAddress);
      else perClient.set(session.remoteAddress, open);
    },

    onAuth(auth: SMTPServerAuthentication, session: SMTPServerSession, callback: Callback<{ user: AuthenticatedIdentity }>) {
      if (!session.secure && !policy.allowInsecureAuth && !isLoopback(session.remoteAddress)) return callback(replies.encryptionRequired());
      const wanted = parseUser(auth.username ?? '');
      try {
        // Only the named tenant's key signs in: another valid key, or any key under a user name
        // that names no tenant, is a failed attempt (and throttled as one).
        deps.authenticate(
          auth.password ?? '',
          session.remoteAddress,
          (principal) => wanted !== null && principal.kind === 'tenant' && principal.tenantId === wanted.tenantId,
        );
        if (wanted === null) return callback(replies.badCredentials());
        callback(null, { user: wanted });
      } catch (error) {
        if (error instanceof AppError && error.code === 'AUTH_THROTTLED') {
          return callback(replies.authThrottled(Number((error.details as { retry_after_seconds?: number }).retry_after_seconds ?? 60)));
        }
        if (error instanceof AppError && error.code === 'UNAUTHORIZED') return callback(replies.badCredentials());
        log.error({ err: error }, 'smtp authentication failed unexpectedly');
        callback(new SmtpReply(454, '4.7.0', 'Temporary authentication failure'));
      }
    },

    onMailFrom(address: SMTPServerAddress, session: SMTPServerSession, callback: Callback) {
      if (closing) return callback(replies.shuttingDown());
      if (deps.draining?.() === true) return callback(replies.draining());
      const identity = identityOf(session);
      if (identity === null) return callback(replies.authRequired());
      if (address.address !== '' && !isAddrSpec(address.address)) return callback(new SmtpReply(553, '5.1.7', 'Sender address is not a valid mailbox'));
      callback(envelopeAccountProblem(identity));
    },

    onRcptTo(address: SMTPServerAddress, session: SMTPServerSession, callback: Callback) {
      const identity = identityOf(session);
      if (identity === null) return callback(replies.authRequired());
      if (session.envelope.rcptTo.length >= policy.maxRecipients) return callback(replies.tooManyRecipients(policy.maxRecipients));
      if (!isAddrSpec(address.address)) return callback(replies.badRecipient());
      try {
        if (deps.suppressed(identity.tenantId, [address.address], deps.clock.now()).size > 0) return callback(replies.suppressed());
      } catch (error) {
        log.error({ err: error }, 'suppression lookup failed');
        return callback(replies.storeFailed());
      }
      // Not in this turn: with MAIL and RCPT both answered synchronously, smtp-server
      // (3.21) loses what a client pipelined after the DATA of the session's second
      // transaction (its QUIT went unanswered until the idle timeout). Found by
      // test/security/hostile-smtp.test.ts; one tick per recipient is the price.
      setImmediate(callback);
    },

    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback: Callback<string>) {
      const identity = identityOf(session);
      if (identity === null) return callback(replies.authRequired());
      const timer = setTimeout(() => closeSession(session.id, replies.dataTimeout()), policy.dataTimeoutMs);
      inData.add(session.id);
      accept(stream, session, identity)
        .then(
          (reply) => callback(null, reply),
          (error: unknown) => {
            if (error instanceof SmtpReply) return callback(error);
            if (error instanceof AppError && error.code === 'NODE_DRAINING') return callback(replies.draining());
            // The client left (or was closed for a timeout) in the middle of DATA: its
            // message was never ours, and nobody is left to answer.
            if ((error as { code?: unknown }).code === 'ECONNECTION') {
              log.info({ reason: (error as Error).message, session: session.id }, 'smtp transfer abandoned');
              return callback(error as Error);
            }
            log.error({ err: error, session: session.id }, 'smtp message not stored');
            callback(replies.storeFailed());
          },
        )
        .finally(() => {
          clearTimeout(timer);
          inData.delete(session.id);
          if (closing) setImmediate(() => closeSession(session.id, replies.shuttingDown()));
        });
    },
  } satisfies Partial<SMTPServerOptions>;

  /** Set by the server: writes `reply` to that session's client and closes it. */
  let closeSession: (sessionId: string, reply: SmtpReply) => void = () => undefined;

  return {
    handlers,
    greetingDelayMs: (remoteAddress: string): number =>
      policy.greetingDelayMs === 0 || isLoopback(remoteAddress) || trusted(remoteAddress) !== null ? 0 : policy.greetingDelayMs,
    bindCloser(closer: (sessionId: string, reply: SmtpReply) => void): void {
      closeSession = closer;
    },
    /** From now on every new command or connection is answered 421. */
    beginClosing(): void {
      closing = true;
    },
    /** Sessions in the middle of DATA: they finish (and are answered) before the listener closes. */
    busySessions: (): ReadonlySet<string> => inData,
  };
}

export type SessionHandlers = ReturnType<typeof createSessionHandlers>;

/** The reply to a message the submission refused (ALREADY_SENT is an acceptance, answered by the caller). */
function replyFor(rejection: Rejection, accountId: string | null): SmtpReply {
  switch (rejection.code) {
    case 'SUPPRESSED':
      return replies.suppressed();
    case 'UNKNOWN_ACCOUNT':
    case 'UNKNOWN_TENANT':
      return replies.accountNotOwned(accountId ?? '(default)');
    case 'NO_DEFAULT_ACCOUNT':
      return replies.noAccount();
    default:
      return replies.refused(rejection.reason);
  }
}
