/**
 * The SMTP session's DATA: the message is accepted durably (data-acceptance.ts)
 * within the data timeout, and every failure is answered with its reply. A
 * session that finishes DATA while the listener closes is closed right after.
 */
import type { SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import { AppError } from '../../core/index.js';
import type { SmtpIdentity } from './identity.js';
import { replies, SmtpReply } from './replies.js';
import type { SessionState, SmtpCallback, SmtpSessionDeps } from './session-deps.js';

type Accept = (stream: SMTPServerDataStream, session: SMTPServerSession, identity: SmtpIdentity) => Promise<string>;

export function createDataHandler(
  deps: SmtpSessionDeps,
  state: SessionState,
  identityOf: (session: SMTPServerSession) => SmtpIdentity | null,
  accept: Accept,
) {
  const { policy, log } = deps;

  /** The reply to a DATA whose message was not stored. */
  const refusal = (error: unknown, session: SMTPServerSession): Error => {
    if (error instanceof SmtpReply) return error;
    if (error instanceof AppError && error.code === 'NODE_DRAINING') return replies.draining();
    // The client left (or was closed for a timeout) in the middle of DATA: its
    // message was never ours, and nobody is left to answer.
    if ((error as { code?: unknown }).code === 'ECONNECTION') {
      log.info({ reason: (error as Error).message, session: session.id }, 'smtp transfer abandoned');
      return error as Error;
    }
    log.error({ err: error, session: session.id }, 'smtp message not stored');
    return replies.storeFailed();
  };

  return function onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback: SmtpCallback<string>) {
    const identity = identityOf(session);
    if (identity === null) return callback(replies.authRequired());
    const timer = setTimeout(() => state.closeSession(session.id, replies.dataTimeout()), policy.dataTimeoutMs);
    state.inData.add(session.id);
    accept(stream, session, identity)
      .then(
        (reply) => callback(null, reply),
        (error: unknown) => callback(refusal(error, session)),
      )
      .finally(() => {
        clearTimeout(timer);
        state.inData.delete(session.id);
        if (state.closing) setImmediate(() => state.closeSession(session.id, replies.shuttingDown()));
      });
  };
}
