/**
 * The SMTP listeners: a plain one (STARTTLS when a certificate is configured)
 * and an optional implicit-TLS one, sharing one set of session handlers. TLS
 * material is read again on reload without closing a listener; stopping lets
 * messages in the middle of DATA finish and answers everyone else 421.
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { SMTPServerOptions } from 'smtp-server';
import type { Logger, SmtpListener, SmtpTelemetry } from '../../core/index.js';
import { SubmissionServer } from './connection.js';
import { replies, type SmtpReply } from './replies.js';
import { createSessionHandlers, type SessionHandlers, type SmtpSessionDeps } from './session.js';

export interface Endpoint {
  host: string;
  port: number;
}

export interface SmtpIngressOptions {
  listen: Endpoint | null;
  tlsListen: Endpoint | null;
  tls: { certFile: string; keyFile: string } | null;
  maxConnections: number;
  commandTimeoutMs: number;
  session: SmtpSessionDeps;
  log: Logger;
  /** Told of connections and refusals (metrics). */
  telemetry?: SmtpTelemetry | undefined;
}

export interface SmtpIngress {
  plain: Endpoint | null;
  implicitTls: Endpoint | null;
  /** Reads the certificate and key again; keeps the current ones when they cannot be read. */
  reloadTls(): boolean;
  close(deadlineMs: number): Promise<void>;
  /** The session processes configured and running now; absent when the sessions run on the main thread. */
  processes?: () => { configured: number; running: number };
}

type TlsMaterial = { cert: Buffer; key: Buffer };

export function readTls(files: { certFile: string; keyFile: string }): TlsMaterial {
  return { cert: readFileSync(files.certFile), key: readFileSync(files.keyFile) };
}

/** smtp-server's options for one listener: the session handlers decide, smtp-server speaks the protocol. */
function listenerSettings(
  options: Pick<SmtpIngressOptions, 'session' | 'maxConnections' | 'commandTimeoutMs'>,
  sessions: SessionHandlers,
  tls: TlsMaterial | null,
  secure: boolean,
): SMTPServerOptions {
  return {
    ...sessions.handlers,
    name: options.session.policy.hostname,
    banner: 'mailproxy',
    secure,
    size: options.session.policy.maxMessageBytes,
    authMethods: ['PLAIN', 'LOGIN'],
    // Both enforced per connection by the session handlers: trusted networks
    // submit without AUTH, and loopback clients may AUTH without TLS.
    authOptional: true,
    allowInsecureAuth: true,
    hideSTARTTLS: tls === null,
    disabledCommands: tls === null ? ['STARTTLS'] : [],
    hideENHANCEDSTATUSCODES: false,
    hidePIPELINING: false,
    hide8BITMIME: false,
    hideSMTPUTF8: false,
    disableReverseLookup: true,
    maxClients: options.maxConnections,
    socketTimeout: options.commandTimeoutMs,
    logger: false,
    ...(tls === null ? {} : { ...tls, minVersion: 'TLSv1.2' as const }),
  };
}

const listen = (server: SubmissionServer, endpoint: Endpoint): Promise<Endpoint> =>
  new Promise((resolve, reject) => {
    server.server.once('error', reject);
    server.server.listen(endpoint.port, endpoint.host, () => {
      server.server.off('error', reject);
      const address = server.server.address() as AddressInfo;
      resolve({ host: address.address, port: address.port });
    });
  });

/** Writes `reply` to the session's client, on whichever listener it is. */
function sendTo(servers: readonly SubmissionServer[], sessionId: string, reply: SmtpReply): void {
  for (const server of servers) {
    for (const connection of server.connections) {
      if (connection.id === sessionId) connection.send(reply.responseCode, reply.message);
    }
  }
}

/** Answers 421 to every session not in DATA, then closes the listeners once those finish or the deadline passes. */
async function closeListeners(
  servers: readonly SubmissionServer[],
  sessions: SessionHandlers,
  deadlineMs: number,
): Promise<void> {
  const deadlineAt = Date.now() + deadlineMs;
  sessions.beginClosing();
  const busy = sessions.busySessions();
  const farewell = replies.shuttingDown();
  for (const server of servers) {
    for (const connection of server.connections) {
      if (!busy.has(connection.id)) connection.send(farewell.responseCode, farewell.message);
    }
  }
  await Promise.all(
    servers.map(
      (server) =>
        new Promise<void>((resolve) => {
          // Past the deadline smtp-server answers what is left 421 and closes it.
          server.options.closeTimeout = Math.max(1, deadlineMs);
          server.close(() => resolve());
        }),
    ),
  );
  // Connections handed over rather than accepted (connection.ts, drained()) get the same deadline.
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(servers.map((server) => server.drained())),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, deadlineAt - Date.now())))),
  ]);
  clearTimeout(timer);
  for (const server of servers) {
    for (const connection of server.connections) {
      connection.send(farewell.responseCode, farewell.message);
      connection.close();
    }
  }
}

/** Reads the certificate and key again into every listener; keeps the current ones when they cannot be read. */
function reloadTls(
  options: Pick<SmtpIngressOptions, 'tls' | 'log'>,
  servers: readonly SubmissionServer[],
  quiet: boolean,
): boolean {
  if (options.tls === null) return false;
  try {
    const material = readTls(options.tls);
    for (const server of servers) server.updateSecureContext({ ...material, minVersion: 'TLSv1.2' });
    if (!quiet) options.log.info({ cert: options.tls.certFile }, 'smtp tls certificate reloaded');
    return true;
  } catch (error) {
    options.log.error(
      { err: error, cert: options.tls.certFile },
      'smtp tls certificate not reloaded: keeping the current one',
    );
    return false;
  }
}

/** The listeners' servers, each made when first asked for, not yet listening. */
export interface Listeners {
  server(listener: SmtpListener): SubmissionServer;
  /** `quiet`: the success is not logged (a session process's daemon logs it once for all). */
  reloadTls(quiet?: boolean): boolean;
  close(deadlineMs: number): Promise<void>;
}

export function createListeners(options: Omit<SmtpIngressOptions, 'listen' | 'tlsListen'>): Listeners {
  const { log } = options;
  const sessions = createSessionHandlers(options.session);
  const tls = options.tls === null ? null : readTls(options.tls);
  const servers = new Map<SmtpListener, SubmissionServer>();
  sessions.bindCloser((sessionId, reply) => sendTo([...servers.values()], sessionId, reply));
  return {
    server(listener) {
      const made = servers.get(listener);
      if (made !== undefined) return made;
      const secure = listener === 'implicit-tls';
      const server = new SubmissionServer(
        listenerSettings(options, sessions, tls, secure),
        sessions.greetingDelayMs,
        listener,
        options.telemetry,
      );
      server.on('error', (error: Error) => log.warn({ err: error }, 'smtp connection error'));
      servers.set(listener, server);
      return server;
    },
    reloadTls: (quiet = false) => reloadTls(options, [...servers.values()], quiet),
    close: (deadlineMs) => closeListeners([...servers.values()], sessions, deadlineMs),
  };
}

export async function startSmtpIngress(options: SmtpIngressOptions): Promise<SmtpIngress> {
  const listeners = createListeners(options);
  try {
    const plain = options.listen === null ? null : await listen(listeners.server('plain'), options.listen);
    const implicitTls =
      options.tlsListen === null ? null : await listen(listeners.server('implicit-tls'), options.tlsListen);
    return { plain, implicitTls, reloadTls: () => listeners.reloadTls(), close: listeners.close };
  } catch (error) {
    await listeners.close(0);
    throw error;
  }
}
