/**
 * The relay's transports: one pooled nodemailer SMTP transport per account,
 * made again when the account's settings change, closed when idle, and closed
 * only once the sends running on it are done.
 */
import nodemailer, { type Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import { streamWholeMessages } from './whole-message-stream.js';
import type { Account } from '../core/account/index.js';
import type { Logger } from '../core/index.js';
import { createConnectionTracker, type ConnectionTracker } from './connection-tracker.js';
import { noDelayConnector } from './no-delay-socket.js';

export interface TransportPoolOptions {
  log: Logger;
  connectionTimeoutMs?: number;
  greetingTimeoutMs?: number;
  socketTimeoutMs?: number;
  /** A transport unused this long is closed with its connections (default 30 s). */
  idleCloseMs?: number;
}

export interface PooledTransport {
  tenantId: string;
  accountId: string;
  fingerprint: string;
  transport: Transporter<SMTPPool.SentMessageInfo>;
  inFlight: number;
  connections: ConnectionTracker;
  idleTimer: NodeJS.Timeout | null;
  retired: boolean;
}

const keyOf = (tenantId: string, accountId: string): string => `${tenantId}/${accountId}`;

export function createTransportPool(options: TransportPoolOptions) {
  const { log } = options;
  const idleCloseMs = options.idleCloseMs ?? 30_000;
  const pool = new Map<string, PooledTransport>();

  function acquire(account: Account): PooledTransport {
    const key = keyOf(account.tenantId, account.id);
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
    created.transport.on('error', (err) =>
      log.warn({ tenantId: account.tenantId, accountId: account.id, err: err.message }, 'relay transport error'),
    );
    pool.set(key, created);
    return created;
  }

  return {
    /** The account's transport for one send, counted in flight until `checkIn`. */
    checkOut(account: Account): PooledTransport {
      const entry = acquire(account);
      clearIdleTimer(entry);
      entry.inFlight += 1;
      return entry;
    },
    /** A send is done: a retired transport closes with its last send, an idle one after `idleCloseMs`. */
    checkIn(entry: PooledTransport): void {
      const key = keyOf(entry.tenantId, entry.accountId);
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
    },
    forget(tenantId: string, accountId: string): void {
      const key = keyOf(tenantId, accountId);
      const entry = pool.get(key);
      if (!entry) return;
      pool.delete(key);
      retire(entry);
    },
    entries: (): PooledTransport[] => [...pool.values()],
    close(): void {
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
const TRANSPORT_FIELDS = [
  'updatedAt',
  'host',
  'port',
  'user',
  'password',
  'tlsMode',
  'tlsRejectUnauthorized',
  'maxConnections',
  'maxMessagesPerConnection',
] as const satisfies ReadonlyArray<keyof Account>;

function fingerprintOf(account: Account): string {
  return JSON.stringify(TRANSPORT_FIELDS.map((field) => account[field]));
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

function createTransport(
  account: Account,
  options: TransportPoolOptions,
  counter: ConnectionTracker,
): Transporter<SMTPPool.SentMessageInfo> {
  const transportOptions: SMTPPool.Options = {
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
    // one can wait for the peer's delayed ACK. So we open the TCP connection
    // ourselves, without Nagle, and
    // nodemailer speaks SMTP (and TLS, implicit or STARTTLS) over it.
    getSocket: noDelayConnector(counter),
  };
  return streamWholeMessages(nodemailer.createTransport(transportOptions));
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
