/**
 * The SMTP conversation's decisions, as smtp-server handlers: who may connect,
 * who may submit as which tenant and account (account-checks.ts), which
 * recipients are taken, and DATA, whose durable accept is data-acceptance.ts.
 * Every refusal is an SmtpReply (replies.ts).
 */
import type { SMTPServerOptions, SMTPServerSession } from 'smtp-server';
import { createDataAcceptance } from './data-acceptance.js';
import { isLoopback, sessionIdentity, trustedNetworks, type SmtpIdentity } from './identity.js';
import { createReceivedHeader } from './received-header.js';
import type { SmtpReply } from './replies.js';
import { createAuthHandler } from './session-auth.js';
import { createConnectHandlers } from './session-connect.js';
import { createDataHandler } from './session-data.js';
import type { SessionState, SmtpSessionDeps } from './session-deps.js';
import { createEnvelopeHandlers, type AccountsAtMail } from './session-envelope.js';

export type { SmtpPolicy, SmtpSessionDeps } from './session-deps.js';

/** One handler per phase (connect, auth, envelope, data), sharing where the listener stands. */
export function createSessionHandlers(deps: SmtpSessionDeps) {
  const { policy } = deps;
  const trusted = trustedNetworks(policy.trustedNetworks);
  const state: SessionState = { closing: false, inData: new Set<string>(), closeSession: () => undefined };

  const identityOf = (session: SMTPServerSession): SmtpIdentity | null =>
    sessionIdentity(session.user, () => trusted(session.remoteAddress));
  const accountsAtMail: AccountsAtMail = new WeakMap();
  const accept = createDataAcceptance(deps, accountsAtMail, createReceivedHeader(policy.hostname, deps.clock));

  const handlers = {
    ...createConnectHandlers(deps, state),
    onAuth: createAuthHandler(deps),
    ...createEnvelopeHandlers(deps, state, identityOf, accountsAtMail),
    onData: createDataHandler(deps, state, identityOf, accept),
  } satisfies Partial<SMTPServerOptions>;

  return {
    handlers,
    greetingDelayMs: (remoteAddress: string): number =>
      policy.greetingDelayMs === 0 || isLoopback(remoteAddress) || trusted(remoteAddress) !== null
        ? 0
        : policy.greetingDelayMs,
    bindCloser(closer: (sessionId: string, reply: SmtpReply) => void): void {
      state.closeSession = closer;
    },
    /** From now on every new command or connection is answered 421. */
    beginClosing(): void {
      state.closing = true;
    },
    /** Sessions in the middle of DATA: they finish (and are answered) before the listener closes. */
    busySessions: (): ReadonlySet<string> => state.inData,
  };
}

export type SessionHandlers = ReturnType<typeof createSessionHandlers>;
