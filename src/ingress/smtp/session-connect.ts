/**
 * The SMTP session's connect and close: a client over its connection limit,
 * or any client while the listener closes or the fleet node drains, is turned
 * away before the greeting.
 */
import type { SMTPServerSession } from 'smtp-server';
import { replies } from './replies.js';
import { whenAnswered, type SessionState, type SmtpCallback, type SmtpSessionDeps } from './session-deps.js';

export function createConnectHandlers(deps: SmtpSessionDeps, state: SessionState) {
  const { clients, log } = deps;
  /**
   * Sessions asked about (false) or counted (true) at the gate. A session that
   * closes while the gate is still deciding (a session process asks the daemon)
   * is uncounted when the answer comes.
   */
  const gated = new Map<string, boolean>();

  return {
    onConnect(session: SMTPServerSession, callback: SmtpCallback) {
      if (state.closing) return callback(replies.shuttingDown());
      if (deps.draining?.() === true) return callback(replies.draining());
      const client = session.remoteAddress;
      gated.set(session.id, false);
      whenAnswered(
        () => clients.admit(client),
        (refusal) => {
          // Asked again: a session process learns that its node drains with the daemon's answer.
          const turnedAway = refusal ?? (deps.draining?.() === true ? replies.draining() : null);
          if (refusal === null && (turnedAway !== null || !gated.has(session.id))) clients.release(client);
          if (!gated.has(session.id)) return;
          if (turnedAway !== null) {
            gated.delete(session.id);
            return callback(turnedAway);
          }
          gated.set(session.id, true);
          callback();
        },
        (error) => {
          gated.delete(session.id);
          log.error({ err: error }, 'smtp connection not admitted');
          callback(replies.unavailable());
        },
      );
    },

    onClose(session: SMTPServerSession) {
      const counted = gated.get(session.id);
      gated.delete(session.id);
      if (counted === true) clients.release(session.remoteAddress);
    },
  };
}
