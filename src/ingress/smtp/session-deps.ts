/** What the SMTP session handlers are given: the listener's policy and the ports they decide with. */
import type { AccountChoice } from '../../core/account/index.js';
import type { Clock, IdSource, Logger, IntakeTelemetry } from '../../core/index.js';
import type { Principal } from '../../core/tenant/index.js';
import type { MessageSpool, SubmissionService } from '../../core/message/index.js';
import type { TrustedNetwork } from './identity.js';
import type { SmtpReply } from './replies.js';

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

/** smtp-server's handler callback: an error (an SmtpReply) refuses, a value answers. */
export type SmtpCallback<T = void> = (error?: Error | null, value?: T) => void;

/** Where the listener stands, shared by the handlers of every phase. */
export interface SessionState {
  /** From `beginClosing()`: every new command or connection is answered 421. */
  closing: boolean;
  /** Sessions whose DATA is being received or committed. */
  readonly inData: Set<string>;
  /** Set by the server: writes `reply` to that session's client and closes it. */
  closeSession: (sessionId: string, reply: SmtpReply) => void;
}
