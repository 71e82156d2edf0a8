/**
 * A raw SMTP client over node:net for protocol tests: writes whatever bytes the
 * test wants and reads the server's replies (multi-line replies joined) in order.
 * Knows nothing of the daemon; waits on replies and socket events, never on sleeps.
 */
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';

export interface SmtpReplyLine {
  code: number;
  /** The text of the last line, after the code and separator. */
  text: string;
  /** Every line of the reply, as received (without CRLF). */
  lines: string[];
}

export interface RawSmtp {
  socket: Socket;
  /** Writes and resolves once the bytes were handed to the kernel (or rejects on error). */
  write(data: string | Buffer): Promise<void>;
  /** The next reply; rejects when the socket closed first or after `timeoutMs`. */
  reply(timeoutMs?: number): Promise<SmtpReplyLine>;
  /** The next `n` replies, in order. */
  replies(n: number, timeoutMs?: number): Promise<SmtpReplyLine[]>;
  /** Sends one command line (CRLF added) and returns its reply. */
  command(line: string, timeoutMs?: number): Promise<SmtpReplyLine>;
  /** Every reply until the server closed the connection; rejects after `timeoutMs`. */
  untilClosed(timeoutMs?: number): Promise<SmtpReplyLine[]>;
  closed(): boolean;
  destroy(): void;
}

const DEFAULT_TIMEOUT_MS = 5000;

export async function openRawSmtp(port: number, host = '127.0.0.1'): Promise<RawSmtp> {
  const socket = connect({ port, host });
  socket.setNoDelay(true);
  const queue: SmtpReplyLine[] = [];
  let pendingLines: string[] = [];
  let buffered = '';
  let isClosed = false;
  const waiters = new Set<() => void>();
  const notify = (): void => {
    for (const waiter of [...waiters]) waiter();
  };

  socket.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('latin1');
    for (let end = buffered.indexOf('\n'); end !== -1; end = buffered.indexOf('\n')) {
      const line = buffered.slice(0, end).replace(/\r$/, '');
      buffered = buffered.slice(end + 1);
      pendingLines.push(line);
      // RFC 5321 §4.2.1: "code-" continues a reply, "code " (or the bare code) ends it.
      if (line.length <= 3 || line[3] !== '-') {
        queue.push({ code: Number(line.slice(0, 3)), text: line.slice(4), lines: pendingLines });
        pendingLines = [];
      }
    }
    notify();
  });
  socket.on('error', () => undefined);
  socket.on('close', () => {
    isClosed = true;
    notify();
  });
  await once(socket, 'connect');

  const waitFor = <T>(ready: () => T | undefined, what: string, timeoutMs: number): Promise<T> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        let value: T | undefined;
        try {
          value = ready();
        } catch (error) {
          finish();
          reject(error as Error);
          return;
        }
        if (value === undefined) return;
        finish();
        resolve(value);
      };
      const timer = setTimeout(() => {
        finish();
        reject(
          new Error(
            `raw smtp: timed out after ${timeoutMs} ms waiting for ${what}; replies so far: ${JSON.stringify(queue.map((r) => r.lines.join(' | ')).slice(0, 5))}`,
          ),
        );
      }, timeoutMs);
      const finish = (): void => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });

  const client: RawSmtp = {
    socket,
    write: (data) =>
      new Promise((resolve, reject) => {
        socket.write(data, (error) => (error ? reject(error) : resolve()));
      }),
    reply: (timeoutMs = DEFAULT_TIMEOUT_MS) =>
      waitFor(
        () => {
          const next = queue.shift();
          if (next !== undefined) return next;
          if (isClosed) throw new Error('raw smtp: the connection closed before a reply');
          return undefined;
        },
        'a reply',
        timeoutMs,
      ),
    replies: (n, timeoutMs = DEFAULT_TIMEOUT_MS) =>
      waitFor(
        () => {
          if (queue.length >= n) return queue.splice(0, n);
          if (isClosed) throw new Error(`raw smtp: the connection closed after ${queue.length} of ${n} replies`);
          return undefined;
        },
        `${n} replies`,
        timeoutMs,
      ),
    async command(line, timeoutMs) {
      await client.write(`${line}\r\n`);
      return client.reply(timeoutMs);
    },
    untilClosed: (timeoutMs = DEFAULT_TIMEOUT_MS) =>
      waitFor(() => (isClosed ? queue.splice(0) : undefined), 'the server to close the connection', timeoutMs),
    closed: () => isClosed,
    destroy: () => socket.destroy(),
  };
  return client;
}

/** A reply as one line: `250 2.0.0 OK`. */
export function replyText(reply: SmtpReplyLine): string {
  return `${reply.code} ${reply.text}`;
}

function expectCode(reply: SmtpReplyLine, code: number, step: string): void {
  if (reply.code !== code) throw new Error(`raw smtp: ${step} answered "${replyText(reply)}", expected ${code}`);
}

/** Connects, reads the 220 greeting, says EHLO and, given credentials, authenticates with AUTH PLAIN (235). */
export async function openSession(port: number, auth: { user: string; password: string } | null): Promise<RawSmtp> {
  const client = await openRawSmtp(port);
  expectCode(await client.reply(), 220, 'the greeting');
  expectCode(await client.command('EHLO raw-smtp.test'), 250, 'EHLO');
  if (auth !== null)
    expectCode(await client.command(`AUTH PLAIN ${plainAuth(auth.user, auth.password)}`), 235, 'AUTH PLAIN');
  return client;
}

/** MAIL FROM, each RCPT TO and DATA, one at a time, each accepted (250, 250, 354). */
export async function beginData(client: RawSmtp, mailFrom: string, rcptTo: readonly string[]): Promise<void> {
  expectCode(await client.command(`MAIL FROM:<${mailFrom}>`), 250, 'MAIL FROM');
  for (const rcpt of rcptTo) expectCode(await client.command(`RCPT TO:<${rcpt}>`), 250, `RCPT TO:<${rcpt}>`);
  expectCode(await client.command('DATA'), 354, 'DATA');
}

/** The SASL PLAIN initial response for `user` and `password` (RFC 4616). */
export function plainAuth(user: string, password: string): string {
  return Buffer.from(`\0${user}\0${password}`, 'utf8').toString('base64');
}
