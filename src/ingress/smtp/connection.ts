/**
 * smtp-server, adjusted in two places through its public classes:
 *
 * - The greeting. SMTPConnection waits a fixed 100 ms before greeting, to catch
 *   clients that talk first. That caps an application which opens a connection
 *   per message at ten messages a second per connection, and it buys nothing
 *   against a client we trust or one that must authenticate anyway. Here the
 *   pause is the operator's `greeting_delay_ms`, applied only to clients outside
 *   loopback and the trusted networks (README "SMTP submission").
 * - Enhanced status codes. smtp-server derives them from the reply code (every
 *   550 becomes 5.1.1, every accepted message 2.6.0); a reply whose text starts
 *   with its own status (replies.ts) is written with that one instead.
 *
 * - Replies written in one turn (the answers to a pipelined MAIL, RCPT and
 *   DATA) leave in one socket write, not one each.
 * - Telemetry: each connection counted by listener, each 4yz/5yz reply by its
 *   code and enhanced status, whoever wrote it (our handlers or smtp-server).
 *
 * All override methods of smtp-server 3.x; the tests of this room fail if an
 * upgrade changes them (greeting time, exact enhanced codes).
 */
import type { Socket } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { SMTPConnection } from 'smtp-server/lib/smtp-connection.js';
import type { SmtpListener, SmtpTelemetry } from '../../core/index.js';
import { splitEnhanced } from './replies.js';

export class SubmissionServer extends SMTPServer {
  constructor(
    options: SMTPServerOptions,
    /** Milliseconds to wait before greeting a client at this address. */
    readonly greetingDelayMs: (remoteAddress: string) => number,
    readonly listener: SmtpListener,
    readonly telemetry: SmtpTelemetry | undefined,
  ) {
    super(options);
  }

  override connect(socket: Socket, socketOptions?: ConstructorParameters<typeof SMTPConnection>[2]): void {
    this.telemetry?.connected(this.listener);
    const connection = new SubmissionConnection(this, socket, socketOptions);
    this.connections.add(connection);
    connection.on('error', (error: Error) => this._onError(error));
    connection.on('connect', (data) => this._onClientConnect(data));
    connection.init();
    // After smtp-server's own 'close' listener (added by init), which forgets the connection.
    socket.once('close', () => setImmediate(() => this.settleDrained()));
  }

  private drainedWaiters: Array<() => void> = [];

  /**
   * Resolves once no connection is open. smtp-server's close() waits only for those its
   * net.Server accepted: a connection handed to it (a session process is given those the
   * daemon took) is not counted there.
   */
  drained(): Promise<void> {
    if (this.connections.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainedWaiters.push(resolve));
  }

  private settleDrained(): void {
    if (this.connections.size > 0) return;
    const waiters = this.drainedWaiters;
    this.drainedWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

class SubmissionConnection extends SMTPConnection {
  /** The enhanced status of the reply being written, when its text carried one. */
  private explicitStatus: string | null = null;
  private corked = false;

  override init(): void {
    this._setListeners(() => {
      const server = this._server as SubmissionServer;
      const { maxClients } = server.options;
      if (maxClients !== undefined && maxClients > 0 && server.connections.size > maxClients) {
        this.send(421, `${this.name} Too many connected clients, try again in a moment`, false);
        return;
      }
      const delay = server.greetingDelayMs(this.remoteAddress);
      if (delay === 0) {
        this.connectionReady();
        return;
      }
      setTimeout(() => this.connectionReady(), delay).unref();
    });
  }

  override send(code: number, data?: string | string[] | null, context?: string | false): void {
    this.gatherTurn();
    const split = typeof data === 'string' ? splitEnhanced(data) : null;
    if (code >= 400)
      (this._server as SubmissionServer).telemetry?.rejected(
        code,
        split?.status ?? super._getEnhancedStatusCode(code, context),
      );
    if (split === null) {
      super.send(code, data, context);
      return;
    }
    this.explicitStatus = split.status;
    try {
      super.send(code, split.rest, context);
    } finally {
      this.explicitStatus = null;
    }
  }

  /** Holds this turn's writes back until the turn ends (end() flushes too). */
  private gatherTurn(): void {
    const socket = this._socket;
    if (this.corked || socket.destroyed) return;
    this.corked = true;
    socket.cork();
    process.nextTick(() => {
      this.corked = false;
      socket.uncork();
    });
  }

  override _getEnhancedStatusCode(code: number, context?: string | false): string {
    if (this.explicitStatus === null) return super._getEnhancedStatusCode(code, context);
    return context === false || !this._useEnhancedStatusCodes() ? '' : this.explicitStatus;
  }
}
