/**
 * The TCP sockets our pooled transports speak SMTP over: opened by us rather
 * than by nodemailer, with Nagle off and writes of one tick coalesced, and
 * counted (open connections per account, GET /accounts).
 */
import { connect, type Socket } from 'node:net';

type SocketCallback = (error: Error | null, socketOptions?: { connection: Socket }) => void;

/**
 * Writes issued in the same tick leave in one system call: the socket is corked
 * at the first and uncorked on the next tick. nodemailer writes the message and
 * its terminating dot separately; on loopback each write also runs the peer's
 * receive path, so every write saved counts.
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

/**
 * A `getSocket` for nodemailer: a TCP socket with Nagle off, handed over while it
 * connects, so that a refused or timed-out connect reaches nodemailer as an error
 * of the socket. Answering the getSocket callback with an error instead leaked
 * the pool resource in nodemailer 7 (smtp-pool calls back the message but never
 * removes the resource): with the relay down, every slot of the pool was taken
 * by a dead resource and the messages queued behind waited forever, even after
 * the relay came back (test/chaos/outages-relay.test.ts). A connect that hangs
 * is nodemailer's to time out (its greeting timeout runs from the handover).
 */
export function noDelayConnector(counter: { opened(): void; closed(): void }) {
  return (
    options: { host?: string | undefined; port?: number | string | undefined },
    callback: SocketCallback,
  ): void => {
    const socket = connect({ host: options.host, port: Number(options.port ?? 25), noDelay: true });
    coalesceWrites(socket);
    socket.once('connect', () => {
      counter.opened();
      socket.once('close', () => counter.closed());
    });
    callback(null, { connection: socket });
  };
}
