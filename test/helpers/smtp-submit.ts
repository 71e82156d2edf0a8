/**
 * A submitting client for tests: nodemailer's SMTP connection (not ours), one
 * step at a time, with promises. Failures carry the server's reply in
 * `response` (e.g. "535 5.7.8 Authentication credentials invalid").
 */
import SMTPConnection from 'nodemailer/lib/smtp-connection/index.js';

export interface SubmitSession {
  login(user: string, pass: string, method?: 'PLAIN' | 'LOGIN'): Promise<void>;
  send(envelope: { from: string; to: string[] }, raw: string | Buffer): Promise<SMTPConnection.SentMessageInfo>;
  close(): void;
}

export interface SubmitOptions {
  host?: string;
  /** Upgrade with STARTTLS (self-signed certificates accepted). */
  starttls?: boolean;
  /** Implicit TLS. */
  secure?: boolean;
  /** The client's own address (e.g. another loopback address). */
  localAddress?: string;
}

/** The reply text of a failed step, e.g. "530 5.7.0 Authentication required". */
export function replyOf(error: unknown): string {
  return String((error as { response?: string }).response ?? (error as Error).message);
}

export async function openSubmission(port: number, options: SubmitOptions = {}): Promise<SubmitSession> {
  const connection = new SMTPConnection({
    host: options.host ?? '127.0.0.1',
    port,
    secure: options.secure ?? false,
    ignoreTLS: options.starttls !== true,
    requireTLS: options.starttls === true,
    tls: { rejectUnauthorized: false },
    ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }),
    connectionTimeout: 5000,
    greetingTimeout: 5000,
    socketTimeout: 30_000,
  });
  connection.on('error', () => undefined);
  // A server killed before its greeting closes the socket without an error: nodemailer then
  // only emits 'end' (and its greeting timer dies with the connection), so 'end' rejects too.
  await new Promise<void>((resolve, reject) => {
    const ended = () => reject(new Error('the connection ended before the greeting'));
    connection.once('error', reject);
    connection.once('end', ended);
    connection.connect(() => {
      connection.off('error', reject);
      connection.off('end', ended);
      resolve();
    });
  });
  /**
   * One step's answer, or a rejection once the connection ends without it: a server killed
   * mid-step closes the socket without an answer, and nodemailer never calls the step back.
   */
  const step = <T>(run: (done: (error: Error | null, value: T) => void) => void): Promise<T> =>
    new Promise((resolve, reject) => {
      const ended = () => reject(new Error('the connection ended before the answer'));
      connection.once('end', ended);
      run((error, value) => {
        connection.off('end', ended);
        if (error) reject(error);
        else resolve(value);
      });
    });
  return {
    login: (user, pass, method) =>
      step<void>((done) =>
        connection.login({ user, pass, ...(method === undefined ? {} : { method }) }, (error) =>
          done(error ?? null, undefined),
        ),
      ),
    send: (envelope, raw) =>
      step<SMTPConnection.SentMessageInfo>((done) =>
        // A copy each time: nodemailer writes a send's outcome onto the envelope it is given
        // (a refused MAIL FROM as `mailError`), and a later send of the same object read it as its own.
        connection.send({ from: envelope.from, to: [...envelope.to] }, raw, (error, info) => done(error ?? null, info)),
      ),
    close: () => connection.quit(),
  };
}
