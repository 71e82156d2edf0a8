/**
 * NodemailerRelay: the Relay port over one pooled nodemailer SMTP transport per
 * account. Every outcome comes back as a RelayReply; what it means is core's call.
 */
import nodemailer, { type Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import type { Account } from '../core/account.js';
import type { Logger } from '../core/logger.js';
import type { Envelope, Relay, RelayReply } from '../core/relay.js';
import { createConnectionTracker, type ConnectionTracker } from './connection-tracker.js';
import { noDelayConnector } from './no-delay-socket.js';
import { failureReply, parseReply, refusalOf, toSmtpFailure, type SmtpFailure } from './relay-failure.js';

export { parseReply } from './relay-failure.js';

export interface NodemailerRelayOptions {
  log: Logger;
  connectionTimeoutMs?: number;
  greetingTimeoutMs?: number;
  socketTimeoutMs?: number;
  /** A transport unused this long is closed with its connections (default 30 s). */
  idleCloseMs?: number;
}

interface PooledTransport {
  tenantId: string;
  accountId: string;
  fingerprint: string;
  transport: Transporter<SMTPPool.SentMessageInfo>;
  inFlight: number;
  connections: ConnectionTracker;
  idleTimer: NodeJS.Timeout | null;
  retired: boolean;
}

/** What nodemailer's report calls a message relayed whole (see send). */
const RAW_REPORT_ID = '<relayed-whole@mailproxy.invalid>';

export function createNodemailerRelay(options: NodemailerRelayOptions): Relay {
  const { log } = options;
  const idleCloseMs = options.idleCloseMs ?? 30_000;
  const pool = new Map<string, PooledTransport>();

  function acquire(account: Account): PooledTransport {
    const key = `${account.tenantId}/${account.id}`;
    const fingerprint = fingerprintOf(account);
    const current = pool.get(key);
    if (current?.fingerprint === fingerprint) return current;
    if (current) {
      retire(current);
      log.info({ tenantId: account.tenantId, accountId: account.id }, 'relay transport replaced');
    }
    const connections = createConnectionTracker(account.maxConnections);
    const created: PooledTransport = {
      tenantId: account.tenantId,
      accountId: account.id,
      fingerprint,
      transport: createTransport(account, options, connections),
      inFlight: 0,
      connections,
      idleTimer: null,
      retired: false,
    };
    created.transport.on('error', (err) => log.warn({ tenantId: account.tenantId, accountId: account.id, err: err.message }, 'relay transport error'));
    pool.set(key, created);
    return created;
  }

  function release(key: string, entry: PooledTransport): void {
    entry.inFlight -= 1;
    if (entry.inFlight > 0) return;
    if (entry.retired) return entry.transport.close();
    entry.idleTimer = setTimeout(() => {
      if (pool.get(key) !== entry || entry.inFlight > 0) return;
      pool.delete(key);
      retire(entry);
      log.debug({ tenantId: entry.tenantId, accountId: entry.accountId }, 'relay transport closed when idle');
    }, idleCloseMs);
    entry.idleTimer.unref();
  }

  return {
    async send(account: Account, envelope: Envelope, raw: Buffer, messageIdHeader?: string): Promise<RelayReply> {
      const key = `${account.tenantId}/${account.id}`;
      const entry = acquire(account);
      clearIdleTimer(entry);
      entry.inFlight += 1;
      const ticket = entry.connections.enqueue();
      try {
        // With a Message-ID given, nodemailer does not draw five random numbers to
        // invent one for its report (randomBytes was 7% of relay CPU, measured). A message
        // relayed whole (an SMTP submission) goes out byte for byte, its own Message-ID
        // included: the one given here only names it in nodemailer's report, which we do not read.
        const info = await entry.transport.sendMail({
          // Its types list strings only; its MimeNode takes `{ address, name }` objects as they are.
          envelope: envelopeObjects(envelope) as unknown as { from: string; to: string[] },
          raw,
          messageId: messageIdHeader || RAW_REPORT_ID,
        });
        return timed(successReply(info), entry.connections.finish(ticket));
      } catch (error) {
        const reply = timed(failureReply(toSmtpFailure(error)), entry.connections.finish(ticket));
        log.debug(
          { tenantId: account.tenantId, accountId: account.id, stage: reply.stage, replyCode: reply.replyCode, errorCode: reply.errorCode },
          'relay send failed',
        );
        return reply;
      } finally {
        release(key, entry);
      }
    },
    forget(tenantId: string, accountId: string): void {
      const key = `${tenantId}/${accountId}`;
      const entry = pool.get(key);
      if (!entry) return;
      pool.delete(key);
      retire(entry);
    },
    connections: () =>
      [...pool.values()].map((entry) => ({
        tenantId: entry.tenantId,
        accountId: entry.accountId,
        open: entry.connections.open(),
        inUse: entry.connections.inUse(),
      })),
    async close(): Promise<void> {
      for (const entry of pool.values()) {
        clearIdleTimer(entry);
        entry.retired = true;
        entry.transport.close();
      }
      pool.clear();
    },
  };
}

/** Every field a transport is built from; a change means a new transport. */
function fingerprintOf(account: Account): string {
  const { updatedAt, host, port, user, password, tlsMode, tlsRejectUnauthorized, maxConnections, maxMessagesPerConnection } = account;
  return JSON.stringify([updatedAt, host, port, user, password, tlsMode, tlsRejectUnauthorized, maxConnections, maxMessagesPerConnection]);
}

/** How an account's relay is reached and logged in to: the pooled transport's and the connection test's (relay-probe.ts). */
export function relayConnectionOptions(account: Account) {
  return {
    host: account.host,
    port: account.port,
    secure: account.tlsMode === 'implicit',
    requireTLS: account.tlsMode === 'starttls',
    ignoreTLS: account.tlsMode === 'none',
    ...(account.user === null ? {} : { auth: { user: account.user, pass: account.password ?? '' } }),
    tls: { rejectUnauthorized: account.tlsRejectUnauthorized, minVersion: 'TLSv1.2' as const },
  };
}

function createTransport(account: Account, options: NodemailerRelayOptions, counter: ConnectionTracker): Transporter<SMTPPool.SentMessageInfo> {
  const transportOptions: SMTPPool.Options & { maxRequeues: number } = {
    pool: true,
    ...relayConnectionOptions(account),
    maxConnections: account.maxConnections,
    maxMessages: account.maxMessagesPerConnection,
    // A message whose connection dropped is reported, not silently resent: the dispatcher decides.
    maxRequeues: 0,
    ...(options.connectionTimeoutMs === undefined ? {} : { connectionTimeout: options.connectionTimeoutMs }),
    ...(options.greetingTimeoutMs === undefined ? {} : { greetingTimeout: options.greetingTimeoutMs }),
    ...(options.socketTimeoutMs === undefined ? {} : { socketTimeout: options.socketTimeoutMs }),
    logger: false,
    // SMTP is a lock-step dialogue of small writes: with Nagle's algorithm each
    // one can wait ~40 ms for the peer's delayed ACK (measured: 47 ms vs 3 ms per
    // message). So we open the TCP connection ourselves, without Nagle, and
    // nodemailer speaks SMTP (and TLS, implicit or STARTTLS) over it.
    getSocket: noDelayConnector(counter),
  };
  return nodemailer.createTransport(transportOptions);
}

/** Closes once its in-flight sends are done; a send already running keeps its connection. */
function retire(entry: PooledTransport): void {
  clearIdleTimer(entry);
  entry.retired = true;
  if (entry.inFlight === 0) entry.transport.close();
}

function clearIdleTimer(entry: PooledTransport): void {
  if (entry.idleTimer !== null) clearTimeout(entry.idleTimer);
  entry.idleTimer = null;
}

function timed<R extends RelayReply>(reply: R, transactionMs: number | undefined): R {
  return transactionMs === undefined ? reply : { ...reply, transactionMs };
}

function successReply(info: SMTPPool.SentMessageInfo): RelayReply {
  const text = (info.response ?? '').trim();
  const { replyCode, enhancedStatus } = parseReply(text);
  const errors = (info.rejectedErrors ?? []) as SmtpFailure[];
  const refused = (info.rejected ?? []).map((recipient) =>
    refusalOf(
      String(recipient),
      errors.find((error) => error.recipient === recipient),
    ),
  );
  return { ok: true, replyCode: replyCode ?? 250, enhancedStatus, text, accepted: (info.accepted ?? []).map(String), refused };
}

/**
 * The envelope as address objects, which nodemailer takes as they are. Given as
 * strings it re-parses them as header text: a quoted local part lost its quotes
 * (`"ann@x"@example.com` was relayed as `ann@x@example.com`, another mailbox and a
 * relay trick) and an IPv6 literal (`ann@[IPv6:::1]`) vanished, leaving a message
 * that was accepted but could never be sent. Found by test/security/open-relay.test.ts.
 */
function envelopeObjects(envelope: Envelope): { from: string | { address: string; name: string }; to: Array<{ address: string; name: string }> } {
  return {
    // The null reverse-path stays the empty string: nodemailer sends it as MAIL FROM:<>.
    from: envelope.mailFrom === '' ? '' : { address: envelope.mailFrom, name: '' },
    to: envelope.rcptTo.map((address) => ({ address, name: '' })),
  };
}
