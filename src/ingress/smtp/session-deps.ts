/** What the SMTP session handlers are given: the listener's policy and the ports they decide with. */
import type { AccountChoice } from '../../core/account/index.js';
import type { Clock, IdSource, Logger, IntakeTelemetry } from '../../core/index.js';
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

/**
 * A port's answer: a value at once when the store is in this process, a promise
 * when the session runs in a process of its own (sessions.process.ts) and asks
 * the daemon's.
 */
export type Answer<T> = T | Promise<T>;

/** Calls `then` with the answer: in this turn when it is a value (the in-process path stays synchronous). */
export function whenAnswered<T>(
  answer: () => Answer<T>,
  then: (value: T) => void,
  failed: (error: unknown) => void,
): void {
  let value: Answer<T>;
  try {
    value = answer();
  } catch (error) {
    failed(error);
    return;
  }
  if (value instanceof Promise) value.then(then, failed);
  else then(value);
}

/** Connections counted per client address, over every session process. */
export interface ClientGate {
  /** Counts a connection from `client`; answers the refusal instead when it is over its limit. */
  admit(client: string): Answer<SmtpReply | null>;
  /** An admitted connection closed. */
  release(client: string): void;
}

export interface SmtpSessionDeps {
  /**
   * Checks an API key as tenant `tenantId`'s (null: the user name names no
   * tenant, which only fails); fails with AppError UNAUTHORIZED or AUTH_THROTTLED.
   */
  authenticate(password: string, client: string, tenantId: string | null): Answer<void>;
  /** The tenant's accounts; null when there is no such tenant. */
  accountsOf(tenantId: string): Answer<readonly AccountChoice[] | null>;
  suppressed(tenantId: string, addresses: readonly string[], now: number): Answer<ReadonlySet<string>>;
  clients: ClientGate;
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
  /**
   * For this long after a session's MAIL FROM passed, its next MAIL FROM passes without
   * asking again (absent: always asked). Only for ports that cost a round trip: a stale
   * pass is still caught by the submission's own check after DATA, with the same reply.
   */
  reuseMailCheckMs?: number | undefined;
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
