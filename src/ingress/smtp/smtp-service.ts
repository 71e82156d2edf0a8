/**
 * SMTP intake as the daemon runs it: the listeners (none when both are off),
 * AUTH through the daemon's authenticator with a failure throttle of its own,
 * the tenants' accounts and suppression lists from the store, and the same
 * submission service (and so the same group commit) as HTTP. Stopped with
 * intake: DATA in the middle may finish within the wait, the rest is told 421.
 */
import type { Authenticator, Principal } from '../../core/tenant/index.js';
import {
  type Clock,
  type IdSource,
  type Logger,
  type AccountRepository,
  type TenantRepository,
  AppError,
  type IntakeTelemetry,
  type SmtpTelemetry,
} from '../../core/index.js';
import type { MessageQueue, MessageSpool, SubmissionService } from '../../core/message/index.js';
import type { Service } from '../../runtime/index.js';
import type { SealingMaterial } from '../../security/index.js';
import type { TrustedNetwork } from './identity.js';
import { countingGate } from './client-gate.js';
import type { HostPorts } from './session-answers.js';
import { startSessionProcesses } from './session-host.js';
import { startSmtpIngress, type Endpoint, type SmtpIngress } from './server.js';
import type { SmtpPolicy } from './session.js';

export interface SmtpSettings extends Omit<SmtpPolicy, 'hostname' | 'trustedNetworks'> {
  /** 0: sessions run in the daemon's main thread; more: in that many processes of their own. */
  sessionProcesses: number;
  /** The daemon's log level, which the session processes log at too. */
  logLevel: string;
  listen: Endpoint | null;
  tlsListen: Endpoint | null;
  tls: { certFile: string; keyFile: string } | null;
  maxConnections: number;
  commandTimeoutMs: number;
  /** Empty: `defaultHostname`. */
  hostname: string;
  trustedNetworks: readonly TrustedNetwork[];
}

export interface SmtpDeps {
  store: {
    tenants: Pick<TenantRepository, 'get'>;
    accounts: Pick<AccountRepository, 'choices'>;
    queue: Pick<MessageQueue, 'suppressed'>;
    spool: MessageSpool;
  };
  submissions: SubmissionService;
  /** Checks tenant API keys, with a failure throttle of its own. */
  authenticator: Authenticator;
  defaultHostname: string;
  clock: Clock;
  ids: IdSource;
  log: Logger;
  intake?: IntakeTelemetry;
  /** Told of connections, AUTH failures and refusals (metrics). */
  telemetry?: SmtpTelemetry;
  /** True while this fleet node drains (absent for a single node). */
  draining?: (() => boolean) | undefined;
  /** The keys session processes seal what they receive with; absent, the daemon seals it. */
  sealing?: SealingMaterial;
}

export interface SmtpService {
  /** The listeners once started; null before, and when both are off. */
  ingress(): SmtpIngress | null;
  service: Service;
}

/** The session policy from the settings (an empty host name is the machine's). */
const policyOf = (settings: SmtpSettings, defaultHostname: string): SmtpPolicy => ({
  hostname: settings.hostname === '' ? defaultHostname : settings.hostname,
  maxMessageBytes: settings.maxMessageBytes,
  maxHeaderBytes: settings.maxHeaderBytes,
  maxRecipients: settings.maxRecipients,
  maxConnectionsPerClient: settings.maxConnectionsPerClient,
  dataTimeoutMs: settings.dataTimeoutMs,
  greetingDelayMs: settings.greetingDelayMs,
  addReceivedHeader: settings.addReceivedHeader,
  allowInsecureAuth: settings.allowInsecureAuth,
  trustedNetworks: settings.trustedNetworks,
});

/** The session ports over the daemon's store and authenticator, for the in-process listener and the session processes alike. */
function hostPorts(settings: SmtpSettings, deps: SmtpDeps, log: Logger): HostPorts {
  const { store } = deps;
  const countingFailures = <T>(authenticate: () => T): T => {
    try {
      return authenticate();
    } catch (error) {
      if (error instanceof AppError && (error.code === 'UNAUTHORIZED' || error.code === 'AUTH_THROTTLED'))
        deps.telemetry?.authFailed(error.code === 'UNAUTHORIZED' ? 'invalid' : 'throttled');
      throw error;
    }
  };
  const inProcess = settings.sessionProcesses === 0;
  return {
    authenticate: (password, client, tenantId) => {
      // Only the named tenant's key signs in (session-auth.ts).
      const accepts = (principal: Principal): boolean =>
        tenantId !== null && principal.kind === 'tenant' && principal.tenantId === tenantId;
      countingFailures(() => deps.authenticator.authenticate(password, client, accepts));
    },
    accountsOf: (tenantId) => (store.tenants.get(tenantId) === null ? null : store.accounts.choices(tenantId)),
    suppressed: (tenantId, addresses, now) => store.queue.suppressed(tenantId, addresses, now),
    // In one process smtp-server counts the connections in all; across processes the gate does.
    clients: countingGate(settings.maxConnectionsPerClient, inProcess ? Infinity : settings.maxConnections),
    submissions: deps.submissions,
    intake: deps.intake,
    draining: deps.draining,
    spool: store.spool,
    telemetry: deps.telemetry,
    log,
  };
}

export function createSmtpService(settings: SmtpSettings, deps: SmtpDeps): SmtpService {
  const log = deps.log.child({ component: 'smtp' });
  let ingress: SmtpIngress | null = null;
  const policy = policyOf(settings, deps.defaultHostname);
  const ports = hostPorts(settings, deps, log);
  const inProcess = settings.sessionProcesses === 0;
  const listening = {
    listen: settings.listen,
    tlsListen: settings.tlsListen,
    tls: settings.tls,
    maxConnections: settings.maxConnections,
    commandTimeoutMs: settings.commandTimeoutMs,
    log,
  };
  const start = async (): Promise<void> => {
    if (settings.listen === null && settings.tlsListen === null) return;
    ingress = inProcess
      ? await startSmtpIngress({
          ...listening,
          telemetry: deps.telemetry,
          session: { ...ports, clock: deps.clock, ids: deps.ids, policy },
        })
      : await startSessionProcesses({
          ...listening,
          processes: settings.sessionProcesses,
          logLevel: settings.logLevel,
          ports,
          policy,
          ...(deps.sealing === undefined ? {} : { sealing: deps.sealing }),
        });
    for (const [kind, address] of [
      ['plain', ingress.plain],
      ['implicit-tls', ingress.implicitTls],
    ] as const) {
      if (address !== null)
        log.info(
          { host: address.host, port: address.port, listener: kind, starttls: settings.tls !== null },
          'smtp listening',
        );
    }
  };
  return {
    ingress: () => ingress,
    service: { name: 'smtp', start, stop: async (budget) => ingress?.close(budget.waitLeft()) },
  };
}
