/**
 * The SMTP session's envelope: MAIL FROM (a signed-in or trusted client whose
 * account may submit) and RCPT TO (a valid, unsuppressed recipient within the
 * limit).
 */
import type { SMTPServerAddress, SMTPServerSession } from 'smtp-server';
import { isAddrSpec } from '../../core/index.js';
import type { AccountChecks } from './account-checks.js';
import type { SmtpIdentity } from './identity.js';
import { replies, SmtpReply } from './replies.js';
import type { SessionState, SmtpCallback, SmtpSessionDeps } from './session-deps.js';

export interface EnvelopeChecks extends Pick<AccountChecks, 'envelopeAccountProblem'> {
  identityOf: (session: SMTPServerSession) => SmtpIdentity | null;
}

export function createEnvelopeHandlers(
  deps: SmtpSessionDeps,
  state: SessionState,
  { identityOf, envelopeAccountProblem }: EnvelopeChecks,
) {
  const { policy, log } = deps;
  return {
    onMailFrom(address: SMTPServerAddress, session: SMTPServerSession, callback: SmtpCallback) {
      if (state.closing) return callback(replies.shuttingDown());
      if (deps.draining?.() === true) return callback(replies.draining());
      const identity = identityOf(session);
      if (identity === null) return callback(replies.authRequired());
      if (address.address !== '' && !isAddrSpec(address.address))
        return callback(new SmtpReply(553, '5.1.7', 'Sender address is not a valid mailbox'));
      callback(envelopeAccountProblem(identity));
    },

    onRcptTo(address: SMTPServerAddress, session: SMTPServerSession, callback: SmtpCallback) {
      const identity = identityOf(session);
      if (identity === null) return callback(replies.authRequired());
      if (session.envelope.rcptTo.length >= policy.maxRecipients)
        return callback(replies.tooManyRecipients(policy.maxRecipients));
      if (!isAddrSpec(address.address)) return callback(replies.badRecipient());
      try {
        if (deps.suppressed(identity.tenantId, [address.address], deps.clock.now()).size > 0)
          return callback(replies.suppressed());
      } catch (error) {
        log.error({ err: error }, 'suppression lookup failed');
        return callback(replies.storeFailed());
      }
      // Not in this turn: with MAIL and RCPT both answered synchronously, smtp-server
      // loses what a client pipelined after the DATA of the session's second
      // transaction (its QUIT went unanswered until the idle timeout). Found by
      // test/security/hostile-smtp.test.ts; one tick per recipient is the price.
      setImmediate(callback);
    },
  };
}
