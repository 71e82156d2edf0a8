// A discarding SMTP sink in its own process: counts messages, reports on stdin request.
// Usage: node bench/sink.mjs  -> prints {"port":N}; then prints {"received":N,"firstAt","lastAt"} on each "stats" line read.
import { SMTPServer } from 'smtp-server';

let received = 0;
let firstAt = 0;
let lastAt = 0;
const server = new SMTPServer({
  logger: false,
  authOptional: true,
  disabledCommands: ['AUTH', 'STARTTLS'],
  maxClients: 1000,
  onData(stream, _session, callback) {
    stream.on('data', () => {});
    stream.on('end', () => {
      received += 1;
      lastAt = Date.now();
      if (firstAt === 0) firstAt = lastAt;
      callback();
    });
  },
});
server.server.on('connection', (socket) => socket.setNoDelay(true));
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.server.address().port })}\n`);
});
process.stdin.setEncoding('utf8').on('data', (text) => {
  for (const line of text.split('\n')) {
    if (line.trim() === 'stats') process.stdout.write(`${JSON.stringify({ received, firstAt, lastAt })}\n`);
  }
});
process.stdin.on('end', () => server.close(() => process.exit(0)));
