/**
 * The TCP sockets our pooled transports speak SMTP over: opened by us rather
 * than by nodemailer, with Nagle off and writes of one tick coalesced, and
 * counted (open connections per account, GET /accounts).
 */
import { connect, type Socket } from 'node:net';

export const DEFAULT_CONNECTION_TIMEOUT_MS = 120_000;

type SocketCallback = (error: Error | null, socketOptions?: { connection: Socket }) => void;

/**
 * Writes issued in the same tick leave in one system call: the socket is corked
 * at the first and uncorked on the next tick. nodemailer writes the message and
 * its terminating dot separately; on loopback each write also runs the peer's
 * receive path, so every write saved is measurable (bench/README.md).
 */
function coalesceWrites(socket: Socket): void {
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  const uncork = (): void => socket.uncork();
  socket.write = ((...args: unknown[]) => {
    if (socket.writableCorked === 0) {
      socket.cork();
      process.nextTick(uncork);
    }
    return write(...args);
  }) as Socket['write'];
}

/** A `getSocket` for nodemailer: a connected TCP socket with Nagle off, or the connect error as nodemailer would see it. */
export function noDelayConnector(timeoutMs: number, counter: { opened(): void; closed(): void }) {
  return (options: { host?: string; port?: number }, callback: SocketCallback): void => {
    const socket = connect({ host: options.host, port: options.port ?? 25, noDelay: true });
    const fail = (error: Error): void => {
      socket.destroy();
      callback(error);
    };
    socket.setTimeout(timeoutMs, () => fail(Object.assign(new Error('Connection timeout'), { code: 'ETIMEDOUT' })));
    socket.once('error', fail);
    coalesceWrites(socket);
    socket.once('connect', () => {
      counter.opened();
      socket.once('close', () => counter.closed());
      socket.setTimeout(0);
      socket.off('error', fail);
      callback(null, { connection: socket });
    });
  };
}
