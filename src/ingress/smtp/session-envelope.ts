/**
 * The SMTP session's envelope: MAIL FROM (a signed-in or trusted client whose
 * account may submit) and RCPT TO (a valid, unsuppressed recipient within the
 * limit).
 */
import type { SMTPServerAddress, SMTPServerSession } from 'smtp-server';
import { isAddrSpec } from '../../core/index.js';
import { envelopeAccountProblem, type TenantAccounts } from './account-checks.js';
import type { SmtpIdentity } from './identity.js';
import { replies, SmtpReply } from './replies.js';
import { whenAnswered, type SessionState, type SmtpCallback, type SmtpSessionDeps } from './session-deps.js';

/** The tenant's accounts as read at each transaction's MAIL FROM, by its envelope (smtp-server makes one per transaction). */
export type AccountsAtMail = WeakMap<object, TenantAccounts>;

export function createEnvelopeHandlers(
  deps: SmtpSessionDeps,
  state: SessionState,
  identityOf: (session: SMTPServerSession) => SmtpIdentity | null,
  accountsAtMail: AccountsAtMail,
) {
  const { policy, log } = deps;
  const reuseMs = deps.reuseMailCheckMs ?? 0;
  /** When each session's identity last passed the MAIL FROM check (kept only with `reuseMailCheckMs`). */
  const passedAt = new WeakMap<SMTPServerSession, number>();
  return {
    onMailFrom(address: SMTPServerAddress, session: SMTPServerSession, callback: SmtpCallback) {
      if (state.closing) return callback(replies.shuttingDown());
      if (deps.draining?.() === true) return callback(replies.draining());
      const identity = identityOf(session);
      if (identity === null) return callback(replies.authRequired());
      if (address.address !== '' && !isAddrSpec(address.address))
        return callback(new SmtpReply(553, '5.1.7', 'Sender address is not a valid mailbox'));
      const { envelope } = session;
      const now = deps.clock.now();
      if (now - (passedAt.get(session) ?? -Infinity) < reuseMs) return callback();
      whenAnswered(
        () => deps.accountsOf(identity.tenantId),
        (accounts) => {
          accountsAtMail.set(envelope, accounts);
          const problem = envelopeAccountProblem(accounts, identity);
          if (problem === null && reuseMs > 0) passedAt.set(session, now);
          callback(problem);
        },
        (error) => {
          log.error({ err: error }, 'account lookup failed');
          callback(replies.storeFailed());
        },
      );
    },

    onRcptTo(address: SMTPServerAddress, session: SMTPServerSession, callback: SmtpCallback) {
      const identity = identityOf(session);
      if (identity === null) return callback(replies.authRequired());
      if (session.envelope.rcptTo.length >= policy.maxRecipients)
        return callback(replies.tooManyRecipients(policy.maxRecipients));
      if (!isAddrSpec(address.address)) return callback(replies.badRecipient());
      whenAnswered(
        () => deps.suppressed(identity.tenantId, [address.address], deps.clock.now()),
        (suppressed) => {
          if (suppressed.size > 0) return callback(replies.suppressed());
          // Not in this turn: with MAIL and RCPT both answered synchronously, smtp-server
          // loses what a client pipelined after the DATA of the session's second
          // transaction (its QUIT went unanswered until the idle timeout). Found by
          // test/security/hostile-smtp.test.ts; one tick per recipient is the price.
          setImmediate(callback);
        },
        (error) => {
          log.error({ err: error }, 'suppression lookup failed');
          callback(replies.storeFailed());
        },
      );
    },
  };
}
