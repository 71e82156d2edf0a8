/**
 * The connection test of an account's relay: connect, EHLO, STARTTLS as the account's
 * `tls_mode` says, AUTH with its stored credentials, QUIT. Nothing is sent. nodemailer's
 * `verify()` answers only yes or an error, so the conversation is held here with its
 * SMTPConnection (the pooled relay's library and connection options) and its transcript
 * is read by core/account/connection-test.ts into steps.
 */
import type { TLSSocket } from 'node:tls';
import SMTPConnection from 'nodemailer/lib/smtp-connection/index.js';
import {
  type Account,
  connectionTestResult,
  type ConnectionTestResult,
  type TlsReport,
  type TranscriptLine,
} from '../core/account/index.js';
import type { Clock } from '../core/index.js';
import type { RelayReply } from '../core/delivery/index.js';
import { relayConnectionOptions } from './nodemailer-relay.js';
import { failureReply, toSmtpFailure } from './relay-failure.js';

/** A relay that has not finished the test by then has it failed at the step it is in. */
export const DEFAULT_PROBE_TIMEOUT_MS = 15_000;

export interface RelayProbeOptions {
  timeoutMs?: number;
}

type Failure = Extract<RelayReply, { ok: false }>;

/** The TLS of the connection, when it has any (nodemailer swaps its socket for a TLSSocket). */
function tlsOf(connection: SMTPConnection, verified: boolean): TlsReport | null {
  const socket = connection._socket as Partial<TLSSocket> | undefined;
  if (!connection.secure || socket?.getProtocol === undefined) return null;
  const error = socket.authorizationError;
  return {
    version: socket.getProtocol() ?? null,
    cipher: socket.getCipher?.()?.name ?? null,
    // Not trusted: refused when the account verifies certificates, accepted when it turned that off.
    certificate: socket.authorized === true ? 'trusted' : verified ? 'rejected' : 'untrusted',
    certificateError: error === undefined || error === null ? null : String(error),
  };
}

export function createRelayProbe(deps: { clock: Clock }) {
  const { clock } = deps;
  return {
    /** Never throws: every way the test can fail is in the result. */
    probe(account: Account, options: RelayProbeOptions = {}): Promise<ConnectionTestResult> {
      const timeoutMs = options.timeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
      const startedAt = clock.now();
      const lines: TranscriptLine[] = [];
      const record = (entry: { tnx?: string }, message: string): void => {
        if (entry.tnx === 'client' || entry.tnx === 'server')
          lines.push({ at: clock.now(), from: entry.tnx, text: message });
      };
      const { auth, ...reach } = relayConnectionOptions(account);
      const connection = new SMTPConnection({
        ...reach,
        connectionTimeout: timeoutMs,
        greetingTimeout: timeoutMs,
        socketTimeout: timeoutMs,
        // The transcript is the test's evidence; AUTH lines are logged masked by nodemailer itself.
        debug: true,
        transactionLog: true,
        logger: {
          level: () => undefined,
          trace: () => undefined,
          debug: record,
          info: () => undefined,
          warn: () => undefined,
          error: () => undefined,
          fatal: () => undefined,
        },
      });
      return new Promise((resolve) => {
        let tls: TlsReport | null = null;
        let settled = false;
        const finish = (failure: Failure | null): void => {
          if (settled) return;
          settled = true;
          clearTimeout(deadline);
          tls ??= tlsOf(connection, account.tlsRejectUnauthorized);
          if (failure === null) connection.quit();
          // QUIT's 221 is waited for (briefly): it is a step of the test.
          const done = (): void => {
            connection.close();
            resolve(connectionTestResult({ startedAt, endedAt: clock.now(), lines, failure, tls }));
          };
          if (failure !== null) return done();
          const wait = setTimeout(done, Math.min(timeoutMs, 2000));
          connection.once('end', () => {
            clearTimeout(wait);
            done();
          });
        };
        const fail = (error: unknown): void => finish(failureReply(toSmtpFailure(error)));
        const deadline = setTimeout(
          () =>
            finish({
              ok: false,
              stage: 'timeout',
              replyCode: null,
              enhancedStatus: null,
              text: `no answer within ${timeoutMs} ms`,
              errorCode: 'ETIMEDOUT',
              refused: [],
            }),
          timeoutMs,
        );
        connection.on('error', fail);
        connection.connect((error) => {
          if (error) return fail(error);
          tls = tlsOf(connection, account.tlsRejectUnauthorized);
          if (auth === undefined) return finish(null);
          connection.login(auth, (loginError) => (loginError ? fail(loginError) : finish(null)));
        });
      });
    },
  };
}
