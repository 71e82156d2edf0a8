/**
 * A process of SMTP sessions (`[smtp] session_processes`): smtp-server's
 * parsing, TLS and the DATA stream, with the same session handlers as the
 * in-process listener, whose ports ask the daemon over IPC (session-link.ts).
 * It accepts from the listening sockets the daemon shares with it and never
 * opens the store: the daemon decides and commits, and a 250 still waits for
 * that commit. It exits when the daemon closes it or goes away.
 */
import type { Server, Socket } from 'node:net';
import { randomIds, systemClock, forwardingLogger } from '../../runtime/index.js';
import { sealingKeys } from '../../security/index.js';
import type { SmtpListener } from '../../core/index.js';
import { createListeners, type Listeners } from './server.js';
import { connectSessionLink } from './session-link.js';
import type { ToSession } from './session-protocol.js';

function send(message: unknown): void {
  process.send?.(message);
}

let listeners: Listeners | null = null;
let link: ReturnType<typeof connectSessionLink> | null = null;

/** A connection the daemon's own loop took from the shared socket (closed if this process has not started). */
const handOver = (listener: SmtpListener, socket: Socket): void => {
  if (listeners === null) socket.destroy();
  else listeners.server(listener).server.emit('connection', socket);
};

process.on('message', (message: ToSession, handle?: Server | Socket) => {
  switch (message.t) {
    case 'start': {
      const { settings } = message;
      link = connectSessionLink(send);
      // The daemon writes these lines through its own 'smtp' logger: only which process is added.
      const log = forwardingLogger(settings.logLevel, (record) => link?.tell(record), { process: settings.index });
      listeners = createListeners({
        tls: settings.tls,
        maxConnections: settings.maxConnections,
        commandTimeoutMs: settings.commandTimeoutMs,
        log,
        telemetry: link.telemetry,
        session: link.deps(
          { policy: settings.policy, clock: systemClock, ids: randomIds, log },
          // What this process receives is sealed here; the daemon stores it as it is.
          settings.sealing === undefined ? null : sealingKeys(settings.sealing),
        ),
      });
      return;
    }
    case 'listen': {
      const server = listeners?.server(message.listener).server;
      server?.listen(handle as Server, () => link?.tell({ op: 'listening', listener: message.listener }));
      return;
    }
    case 'socket':
      handOver(message.listener, handle as Socket);
      return;
    case 'answers':
      link?.answered(message.answers, message.draining);
      return;
    case 'reload-tls':
      link?.tell({ op: 'tls-reloaded', ok: listeners?.reloadTls(true) ?? false });
      return;
    case 'close':
      void (listeners?.close(message.deadlineMs) ?? Promise.resolve()).then(() => {
        link?.tell({ op: 'closed' });
        // The farewell leaves before the channel closes (its queue is drained first).
        setImmediate(() => process.disconnect());
      });
      return;
  }
});

// The daemon went away (or closed this process): nothing here can commit a message any more.
process.on('disconnect', () => process.exit(0));
