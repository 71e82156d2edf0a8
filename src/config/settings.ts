/**
 * The validated configuration as the daemon's rooms take it: durations in
 * milliseconds, listen addresses and networks parsed, one settings object per
 * room. Made once at start (the only place where seconds become milliseconds);
 * the configuration itself keeps the TOML's names for `config check`.
 */
import { join } from 'node:path';
import { parseListenAddress, type ListenAddress } from './listen-address.js';
import { parseNetwork, type Network } from './network.js';
import type { Config } from './schema.js';
import { storageSettings } from './storage-settings.js';

const SECOND = 1000;
const DAY = 86_400_000;

type MailboxConfig = Omit<Config['bounce']['tenant_mailboxes'][number], 'tenant_id'>;

/** An IMAP bounce mailbox as bounce/imap-mailbox.ts takes it: the instance's (`tenantId` null) or a tenant's. */
const mailboxOf = (name: string, tenantId: string | null, mailbox: MailboxConfig) => ({
  name,
  tenantId,
  host: mailbox.host,
  port: mailbox.port,
  tls: mailbox.tls,
  tlsRejectUnauthorized: mailbox.tls_reject_unauthorized,
  user: mailbox.user,
  password: mailbox.password,
  folder: mailbox.folder,
  folders: {
    processed: mailbox.processed_folder,
    unmatched: mailbox.unmatched_folder,
    not_bounce: mailbox.not_bounce_folder,
  },
  verpReturnPath: mailbox.verp_return_path,
  markSeen: true,
});

/** A listen address the schema validated; empty is "no listener". */
function endpoint(text: string, key: string): ListenAddress | null {
  if (text === '') return null;
  const parsed = parseListenAddress(text);
  if (parsed === null) throw new Error(`${key}: ${text} was validated but does not parse`);
  return parsed;
}

function network(text: string): Network {
  const parsed = parseNetwork(text);
  if (parsed === null) throw new Error(`smtp.trusted_networks: ${text} was validated but does not parse`);
  return parsed;
}

/** How every mailbox is read, the bounce mailboxes' and the PEC accounts' alike. */
const mailboxReading = ({ bounce }: Readonly<Config>) => ({
  batchSize: bounce.batch_size,
  reconnectInitialMs: bounce.reconnect_initial_seconds * SECOND,
  reconnectMaxMs: bounce.reconnect_max_seconds * SECOND,
});

const httpSettings = ({ http }: Readonly<Config>) => ({
  listen: endpoint(http.listen, 'http.listen') as ListenAddress,
  maxBodyBytes: http.max_body_bytes,
  parseThreads: http.parse_threads,
  parser: {
    maxBatchMessages: http.max_batch_messages,
    maxMessageBytes: http.max_message_bytes,
    maxRecipients: http.max_recipients,
  },
  authThrottle: { maxFailures: http.auth_max_failures, windowMs: http.auth_failure_window_seconds * SECOND },
});

const smtpSettings = ({ smtp, log }: Readonly<Config>) => ({
  listen: endpoint(smtp.listen, 'smtp.listen'),
  sessionProcesses: smtp.session_processes,
  logLevel: log.level,
  tlsListen: endpoint(smtp.tls_listen, 'smtp.tls_listen'),
  tls: smtp.tls_cert_file === '' ? null : { certFile: smtp.tls_cert_file, keyFile: smtp.tls_key_file },
  maxConnections: smtp.max_connections,
  commandTimeoutMs: smtp.command_timeout_seconds * SECOND,
  authThrottle: { maxFailures: smtp.auth_max_failures, windowMs: smtp.auth_failure_window_seconds * SECOND },
  /** Empty: the machine's host name. */
  hostname: smtp.hostname,
  maxMessageBytes: smtp.max_message_bytes,
  maxHeaderBytes: smtp.max_header_bytes,
  maxRecipients: smtp.max_recipients,
  maxConnectionsPerClient: smtp.max_connections_per_client,
  dataTimeoutMs: smtp.data_timeout_seconds * SECOND,
  greetingDelayMs: smtp.greeting_delay_ms,
  addReceivedHeader: smtp.add_received_header,
  allowInsecureAuth: smtp.allow_insecure_auth,
  trustedNetworks: smtp.trusted_networks.map((entry) => ({
    ...network(entry.network),
    tenantId: entry.tenant_id,
    accountId: entry.account_id ?? null,
  })),
});

/** The NATS mirror: null when no NATS URL is set. */
function mirrorSettings({ nats, fleet, log }: Readonly<Config>) {
  if (nats.url === '') return null;
  return {
    url: nats.url,
    stream: {
      name: nats.stream,
      subjectPrefix: nats.subject_prefix,
      maxAgeMs: nats.max_age_seconds * SECOND,
      maxBytes: nats.max_bytes,
      replicas: nats.replicas,
      duplicateWindowMs: nats.duplicate_window_seconds * SECOND,
    },
    latestBucket: nats.kv_bucket,
    latestKeyNode: fleet.enabled ? fleet.node_id : null,
    maxInFlight: nats.max_in_flight,
    batchDelayMs: nats.batch_delay_ms,
    publisherThread: nats.publisher_thread ? { logLevel: log.level } : null,
    publishTimeoutMs: nats.publish_timeout_seconds * SECOND,
    connectTimeoutMs: nats.connect_timeout_seconds * SECOND,
    commands: nats.commands
      ? { durable: nats.consumer, maxDeliver: nats.max_deliver, ackWaitMs: nats.ack_wait_seconds * SECOND }
      : null,
  };
}

/** Fleet mode: null for a single node, the default. */
function fleetSettings({ fleet, nats, data_dir }: Readonly<Config>) {
  if (!fleet.enabled) return null;
  return {
    nodeId: fleet.node_id,
    url: nats.url,
    bucket: fleet.bucket,
    replicas: fleet.replicas,
    heartbeatMs: fleet.heartbeat_seconds * SECOND,
    nodeTimeoutMs: fleet.node_timeout_seconds * SECOND,
    connectTimeoutMs: nats.connect_timeout_seconds * SECOND,
    dataDir: data_dir,
    limitChunk: fleet.limit_chunk,
    spool: fleet.spool,
    adoptAfterMs: fleet.adopt_after_seconds * SECOND,
    spoolCheckMs: fleet.spool_check_seconds * SECOND,
  };
}

const deliverySettings = ({ dispatch }: Readonly<Config>) => ({
  leaseMs: dispatch.lease_seconds * SECOND,
  claimBatch: dispatch.claim_batch,
  retry: {
    scheduleMs: dispatch.retry_schedule_seconds.map((seconds) => seconds * SECOND),
    jitter: dispatch.retry_jitter,
    maxAgeMs: dispatch.max_age_seconds * SECOND,
  },
  sendTimeoutMs: dispatch.send_timeout_seconds * SECOND,
  attachmentTimeoutMs: dispatch.attachment_timeout_seconds * SECOND,
  attachmentMaxBytes: dispatch.attachment_max_bytes,
  allowPrivateAttachmentUrls: dispatch.allow_private_attachment_urls,
  adaptiveBackoff: dispatch.adaptive_backoff,
  composeThreads: dispatch.compose_threads,
  relayThreads: dispatch.relay_threads,
});

const reportSettings = ({ reports }: Readonly<Config>) => ({
  policy: {
    syncIntervalMs: reports.sync_interval_seconds * SECOND,
    retryInitialMs: reports.retry_initial_seconds * SECOND,
    retryMaxMs: reports.retry_max_seconds * SECOND,
    retryJitter: reports.retry_jitter,
    maxFollowups: reports.max_followup_rounds,
    maxHoldMs: reports.max_hold_seconds * SECOND,
  },
  batchSize: reports.batch_size,
  requestTimeoutMs: reports.request_timeout_seconds * SECOND,
  batchDelayMs: reports.batch_delay_ms,
});

const bounceSettings = (config: Readonly<Config>) => {
  const { bounce } = config;
  return {
    mailboxes: [
      ...(bounce.host === '' ? [] : [mailboxOf('default', null, bounce)]),
      ...bounce.tenant_mailboxes.map((mailbox) => mailboxOf(`tenant:${mailbox.tenant_id}`, mailbox.tenant_id, mailbox)),
    ],
    policy: {
      suppressHardBounces: bounce.suppress_hard_bounces,
      suppressComplaints: bounce.suppress_complaints,
      suppressionTtlMs: bounce.suppression_ttl_seconds === 0 ? null : bounce.suppression_ttl_seconds * SECOND,
    },
    pollIntervalMs: bounce.poll_interval_seconds * SECOND,
    maxMessageBytes: bounce.max_message_bytes,
    parseTimeoutMs: bounce.parse_timeout_seconds * SECOND,
    ...mailboxReading(config),
  };
};

const webhookSettings = ({ webhooks }: Readonly<Config>) => ({
  snsCertificateHost: new RegExp(webhooks.sns_certificate_host),
  snsCaFile: webhooks.sns_ca_file === '' ? null : webhooks.sns_ca_file,
  replayWindowMs: webhooks.replay_window_seconds * SECOND,
  maxBodyBytes: webhooks.max_body_bytes,
});

const pecSettings = (config: Readonly<Config>) => {
  const { pec } = config;
  return {
    acceptanceTimeoutMs: pec.acceptance_timeout_seconds * SECOND,
    pollIntervalMs: pec.poll_interval_seconds * SECOND,
    maxReceiptBytes: pec.max_receipt_bytes,
    parseTimeoutMs: pec.parse_timeout_seconds * SECOND,
    sweepIntervalMs: pec.sweep_interval_seconds * SECOND,
    ...mailboxReading(config),
  };
};

const retentionSettings = ({ retention, pec, smtp }: Readonly<Config>) => ({
  intervalMs: retention.interval_seconds * SECOND,
  reportedMessagesMs: retention.report_retention_seconds * SECOND,
  bodyMs: retention.body_retention_seconds > 0 ? retention.body_retention_seconds * SECOND : null,
  adminEventsMs: retention.outbox_retention_seconds * SECOND,
  /** Null: PEC receipts are kept until their tenant is deleted. */
  pecReceiptsMs: pec.receipt_retention_days > 0 ? pec.receipt_retention_days * DAY : null,
  /** No SMTP transfer outlives its data timeout: an older spool no message took was abandoned. */
  abandonedSpoolMs: 2 * smtp.data_timeout_seconds * SECOND,
});

/** One settings object per room, each section made by the function named for it. */
export function daemonSettings(config: Readonly<Config>) {
  const { http } = config;
  return {
    dataDir: config.data_dir,
    /** The embedded body store's directory, read for what it holds even when another backend is configured. */
    bodiesDirectory: join(config.data_dir, 'bodies'),
    shutdownMs: config.shutdown_timeout_seconds * SECOND,
    maxDatabaseBytes: config.max_database_mb * 1024 * 1024,
    logLevel: config.log.level,
    keys: {
      dataDir: config.data_dir,
      secretKey: config.security.secret_key,
      previousSecretKeys: config.security.previous_secret_keys,
      adminToken: http.admin_token,
      metricsToken: http.metrics_token,
    },
    http: httpSettings(config),
    smtp: smtpSettings(config),
    mirror: mirrorSettings(config),
    fleet: fleetSettings(config),
    delivery: deliverySettings(config),
    /** A message is given up this long after it was queued (the waiting view's `expires_ts`). */
    maxMessageAgeSeconds: config.dispatch.max_age_seconds,
    reports: reportSettings(config),
    bounce: bounceSettings(config),
    webhooks: webhookSettings(config),
    pec: pecSettings(config),
    retention: retentionSettings(config),
    storage: storageSettings(config),
    /** Offloaded attachments: their links' longest and default lifetime. */
    files: { retentionSeconds: config.files.retention_seconds },
    /** The sending-domain checks: the DNS servers they ask (none: the system's) and how often. */
    dns: { servers: [...config.dns.servers], checkIntervalMs: config.dns.check_interval_seconds * SECOND },
    /** The MCP server at /mcp; null: off. */
    mcp: config.mcp.enabled
      ? {
          readOnly: config.mcp.read_only,
          callsPerMinute: config.mcp.calls_per_minute,
          watchIntervalMs: config.mcp.watch_interval_seconds * SECOND,
          maxSessions: config.mcp.max_sessions,
        }
      : null,
  };
}

export type DaemonSettings = ReturnType<typeof daemonSettings>;
