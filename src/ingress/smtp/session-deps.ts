/** What the SMTP session handlers are given: the listener's policy and the ports they decide with. */
import type { AccountChoice } from '../../core/account.js';
import type { Clock, IdSource } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { Principal } from '../../core/principal.js';
import type { MessageSpool } from '../../core/queue.js';
import type { SubmissionService } from '../../core/submission-service.js';
import type { IntakeTelemetry } from '../../core/telemetry.js';
import type { TrustedNetwork } from './identity.js';

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
