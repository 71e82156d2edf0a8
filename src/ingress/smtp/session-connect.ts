/**
 * The SMTP session's connect and close: a client over its connection limit,
 * or any client while the listener closes or the fleet node drains, is turned
 * away before the greeting.
 */
import type { SMTPServerSession } from 'smtp-server';
import { replies } from './replies.js';
import type { SessionState, SmtpCallback, SmtpSessionDeps } from './session-deps.js';

export function createConnectHandlers(deps: SmtpSessionDeps, state: SessionState) {
  const { policy } = deps;
  const perClient = new Map<string, number>();
  /** Sessions counted in `perClient`: only those are uncounted at close. */
  const counted = new Set<string>();

  return {
    onConnect(session: SMTPServerSession, callback: SmtpCallback) {
      if (state.closing) return callback(replies.shuttingDown());
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
  };
}
