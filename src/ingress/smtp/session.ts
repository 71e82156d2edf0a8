/**
 * The SMTP conversation's decisions, as smtp-server handlers: who may connect,
 * who may submit as which tenant and account (account-checks.ts), which
 * recipients are taken, and DATA, whose durable accept is data-acceptance.ts.
 * Every refusal is an SmtpReply (replies.ts).
 */
import type { SMTPServerAddress, SMTPServerAuthentication, SMTPServerDataStream, SMTPServerOptions, SMTPServerSession } from 'smtp-server';
import { isAddrSpec } from '../../core/address.js';
import { AppError } from '../../core/app-error.js';
import { createAccountChecks } from './account-checks.js';
import { createDataAcceptance } from './data-acceptance.js';
import { isLoopback, parseUser, sessionIdentity, trustedNetworks, type AuthenticatedIdentity, type SmtpIdentity } from './identity.js';
import { createReceivedHeader } from './received-header.js';
import { replies, SmtpReply } from './replies.js';
import type { SmtpSessionDeps } from './session-deps.js';

export type { SmtpPolicy, SmtpSessionDeps } from './session-deps.js';

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
  const { accountProblem, envelopeAccountProblem } = createAccountChecks(deps.accountsOf);
  const accept = createDataAcceptance(deps, accountProblem, createReceivedHeader(policy.hostname, deps.clock));

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
