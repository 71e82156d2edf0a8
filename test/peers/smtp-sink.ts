/**
 * A real, scriptable upstream SMTP server (smtp-server on 127.0.0.1, port 0) for
 * tests: records what it receives, answers RCPT and DATA as scripted, can hang.
 */
import { EventEmitter, once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { selfSigned } from './self-signed.js';
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';

export interface SinkEnvelope {
  mailFrom: string;
  rcptTo: string[];
}

export interface SinkMessage extends SinkEnvelope {
  raw: Buffer;
  receivedAt: number;
  /** Received over TLS (implicit, or after STARTTLS). */
  secure: boolean;
}

/** A scripted reply; `null` accepts. */
export type SinkReply = { code: number; message: string } | null;

export interface SmtpSinkOptions {
  /** Require AUTH (PLAIN/LOGIN) with these credentials; otherwise AUTH is not offered. */
  auth?: { user: string; pass: string };
  /** Default 'none': STARTTLS not offered. */
  tls?: 'starttls' | 'implicit' | 'none';
  onRcpt?: (address: string, session: SMTPServerSession) => SinkReply;
  onData?: (raw: Buffer, envelope: SinkEnvelope) => SinkReply;
  /** The text of the 250 that accepts a message (`Ok <id>`, as a provider's relay names its id); default smtp-server's. */
  acceptText?: (raw: Buffer, envelope: SinkEnvelope) => string;
  /** Read the whole message, then never answer (client timeouts, crash in the middle). */
  hangAfterData?: boolean;
  /** Answer DATA this long after the message arrived (sends in flight); read per message, so a test may change it. */
  answerDelayMs?: number;
  /**
   * False: smtp-server adds no enhanced status code of its own, so a refusal reads exactly as the
   * test words it (a provider's `421 4.7.0 Try again later`, not `421 4.4.2 4.7.0 ...`). Default true.
   */
  enhancedStatusCodes?: boolean;
  /** smtp-server's maxClients: extra connections are refused with 421. */
  maxConnections?: number;
  /** Listen on this port (a relay back on the port it was stopped on); default a random one. */
  port?: number;
  /** Listen on this loopback address; default 127.0.0.1. */
  host?: string;
}

export interface SmtpSink {
  port: number;
  /** Messages accepted with 250, in arrival order. */
  messages: SinkMessage[];
  waitForMessages(n: number, timeoutMs?: number): Promise<void>;
  /** With `hangAfterData`: messages received in full and never answered. */
  unanswered: SinkMessage[];
  waitForUnanswered(n: number, timeoutMs?: number): Promise<void>;
  /** With `answerDelayMs`: messages received in full whose answer is being held back right now. */
  answering: number;
  waitForAnswering(n: number, timeoutMs?: number): Promise<void>;
  /** TCP connections open right now. */
  connections: () => number;
  /** Resolves once exactly `n` TCP connections are open (0: every client has gone). */
  waitForConnections(n: number, timeoutMs?: number): Promise<void>;
  maxConcurrentSeen: number;
  stop(): Promise<void>;
}

let certificate: Promise<{ key: Buffer; cert: Buffer }> | null = null;

/** One self-signed localhost certificate per test process, made by the openssl CLI. */
function selfSignedCertificate(): Promise<{ key: Buffer; cert: Buffer }> {
  certificate ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'smtp-sink-cert-'));
    try {
      const { key, cert } = await selfSigned(dir, 'sink', 'localhost');
      return { key, cert };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  })();
  return certificate;
}

function replyError(reply: { code: number; message: string }): Error {
  return Object.assign(new Error(reply.message), { responseCode: reply.code });
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks);
}

function envelopeOf(session: SMTPServerSession): SinkEnvelope {
  const from = session.envelope.mailFrom;
  return { mailFrom: from === false ? '' : from.address, rcptTo: session.envelope.rcptTo.map((rcpt) => rcpt.address) };
}

async function serverOptions(options: SmtpSinkOptions): Promise<SMTPServerOptions> {
  const tls = options.tls ?? 'none';
  const disabledCommands = [...(options.auth ? [] : ['AUTH']), ...(tls === 'none' ? ['STARTTLS'] : [])];
  return {
    logger: false,
    secure: tls === 'implicit',
    ...(tls === 'none' ? {} : await selfSignedCertificate()),
    disabledCommands,
    authOptional: !options.auth,
    allowInsecureAuth: tls === 'none',
    hideENHANCEDSTATUSCODES: options.enhancedStatusCodes === false,
    ...(options.maxConnections === undefined ? {} : { maxClients: options.maxConnections }),
  };
}

export async function startSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const events = new EventEmitter();
  const sockets = new Set<Socket>();
  const sink: SmtpSink = {
    port: 0,
    messages: [],
    connections: () => sockets.size,
    maxConcurrentSeen: 0,
    waitForMessages: (n, timeoutMs = 5000) =>
      waitFor(() => sink.messages.length >= n, events, timeoutMs, `${n} messages`),
    unanswered: [],
    answering: 0,
    waitForAnswering: (n, timeoutMs = 5000) =>
      waitFor(() => sink.answering >= n, events, timeoutMs, `${n} messages being answered`),
    waitForUnanswered: (n, timeoutMs = 5000) =>
      waitFor(() => sink.unanswered.length >= n, events, timeoutMs, `${n} unanswered messages`),
    waitForConnections: (n, timeoutMs = 5000) =>
      waitFor(() => sockets.size === n, events, timeoutMs, `${n} open connections`),
    stop: () => stopServer(server),
  };

  const server = new SMTPServer({
    ...(await serverOptions(options)),
    onAuth(auth, _session, callback) {
      const valid = options.auth && auth.username === options.auth.user && auth.password === options.auth.pass;
      if (valid) callback(null, { user: auth.username });
      else callback(replyError({ code: 535, message: 'Authentication credentials invalid' }));
    },
    onRcptTo(address, session, callback) {
      const reply = options.onRcpt?.(address.address, session) ?? null;
      callback(reply ? replyError(reply) : undefined);
    },
    onData(stream, session, callback) {
      void readAll(stream).then(
        (raw) => {
          const envelope = envelopeOf(session);
          const reply = options.hangAfterData ? null : (options.onData?.(raw, envelope) ?? null);
          if (reply) return callback(replyError(reply));
          const accept = (): void => {
            (options.hangAfterData ? sink.unanswered : sink.messages).push({
              ...envelope,
              raw,
              receivedAt: Date.now(),
              secure: session.secure,
            });
            events.emit('change');
            if (!options.hangAfterData) callback(null, options.acceptText?.(raw, envelope));
          };
          if ((options.answerDelayMs ?? 0) > 0 && !options.hangAfterData) {
            sink.answering += 1;
            events.emit('change');
            setTimeout(() => {
              sink.answering -= 1;
              accept();
            }, options.answerDelayMs);
          } else accept();
        },
        () => undefined,
      );
    },
  });

  server.server.on('connection', (socket: Socket) => {
    // Nagle off, as a real MTA answering a lock-step dialogue would want.
    socket.setNoDelay(true);
    sockets.add(socket);
    sink.maxConcurrentSeen = Math.max(sink.maxConcurrentSeen, sockets.size);
    events.emit('change');
    socket.once('close', () => {
      sockets.delete(socket);
      events.emit('change');
    });
  });
  server.on('error', () => undefined);
  server.listen(options.port ?? 0, options.host ?? '127.0.0.1');
  await Promise.race([
    once(server.server, 'listening'),
    once(server.server, 'error').then(([error]) => {
      throw new Error(
        `smtp sink: cannot listen on ${options.host ?? '127.0.0.1'}:${options.port ?? 0}: ${(error as Error).message}`,
      );
    }),
  ]);
  sink.port = (server.server.address() as AddressInfo).port;
  return sink;
}

function waitFor(done: () => boolean, events: EventEmitter, timeoutMs: number, what: string): Promise<void> {
  if (done()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (!done()) return;
      clearTimeout(timer);
      events.off('change', check);
      resolve();
    };
    const timer = setTimeout(() => {
      events.off('change', check);
      reject(new Error(`smtp sink: timed out waiting for ${what}`));
    }, timeoutMs);
    events.on('change', check);
  });
}

/** Stops listening and ends every open session, so stop() does not wait for clients. */
async function stopServer(server: SMTPServer): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  for (const connection of [...server.connections]) (connection as { close(): void }).close();
  await closed;
}
