/**
 * The SMTP ingress of the daemon, from configuration: its own failure throttle
 * for AUTH, the tenants' accounts and suppression lists from the store, and the
 * same submission service (and so the same group commit) as HTTP.
 */
import { hostname } from 'node:os';
import type { Authenticator } from '../core/authenticator.js';
import type { Clock, IdSource } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { SubmissionService } from '../core/submission-service.js';
import type { IntakeTelemetry } from '../core/telemetry.js';
import { parseListenAddress, parseNetwork, type Config } from '../config/index.js';
import { startSmtpIngress, type SmtpIngress, type TrustedNetwork } from '../ingress/smtp/index.js';
import type { SqliteStore } from '../store/index.js';

export interface SmtpWiring {
  config: Readonly<Config>;
  store: SqliteStore;
  submissions: SubmissionService;
  /** Checks tenant API keys, with a failure throttle of its own. */
  authenticator: Authenticator;
  clock: Clock;
  ids: IdSource;
  log: Logger;
  intake?: IntakeTelemetry;
}

export async function startSmtp(wiring: SmtpWiring): Promise<SmtpIngress | null> {
  const { smtp } = wiring.config;
  if (smtp.listen === '' && smtp.tls_listen === '') return null;
  const endpoint = (text: string) => (text === '' ? null : parseListenAddress(text));
  const trustedNetworks: TrustedNetwork[] = smtp.trusted_networks.map((entry) => {
    const network = parseNetwork(entry.network);
    if (network === null) throw new Error(`smtp.trusted_networks: ${entry.network} was validated but does not parse`);
    return { ...network, tenantId: entry.tenant_id, accountId: entry.account_id ?? null };
  });
  const log = wiring.log.child({ component: 'smtp' });
  const ingress = await startSmtpIngress({
    listen: endpoint(smtp.listen),
    tlsListen: endpoint(smtp.tls_listen),
    tls: smtp.tls_cert_file === '' ? null : { certFile: smtp.tls_cert_file, keyFile: smtp.tls_key_file },
    maxConnections: smtp.max_connections,
    commandTimeoutMs: smtp.command_timeout_seconds * 1000,
    log,
    session: {
      authenticate: (password, client, accepts) => wiring.authenticator.authenticate(password, client, accepts),
      accountsOf: (tenantId) => (wiring.store.tenants.get(tenantId) === null ? null : wiring.store.accounts.choices(tenantId)),
      suppressed: (tenantId, addresses, now) => wiring.store.queue.suppressed(tenantId, addresses, now),
      submissions: wiring.submissions,
      intake: wiring.intake,
      spool: wiring.store.spool,
      clock: wiring.clock,
      ids: wiring.ids,
      log,
      policy: {
        hostname: smtp.hostname === '' ? hostname() : smtp.hostname,
        maxMessageBytes: smtp.max_message_bytes,
        maxHeaderBytes: smtp.max_header_bytes,
        maxRecipients: smtp.max_recipients,
        maxConnectionsPerClient: smtp.max_connections_per_client,
        dataTimeoutMs: smtp.data_timeout_seconds * 1000,
        greetingDelayMs: smtp.greeting_delay_ms,
        addReceivedHeader: smtp.add_received_header,
        allowInsecureAuth: smtp.allow_insecure_auth,
        trustedNetworks,
      },
    },
  });
  for (const [kind, address] of [['plain', ingress.plain], ['implicit-tls', ingress.implicitTls]] as const) {
    if (address !== null) log.info({ host: address.host, port: address.port, listener: kind, starttls: smtp.tls_cert_file !== '' }, 'smtp listening');
  }
  return ingress;
}
