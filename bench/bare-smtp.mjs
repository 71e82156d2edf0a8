// The SMTP floor: what the daemon's SMTP listener and relay transport can do on this
// machine with nothing between them. A process of its own running the daemon's own listener class
// (dist/ingress/smtp/connection.js: smtp-server with its greeting at once and each turn's replies in
// one write), set up as the daemon's trusted-network listener is (no TLS, AUTH optional, no reverse
// lookup), that reads each message to its end and answers 250: nothing parsed, checked, stored or
// committed. With a sink's port as its argument, the messages it answered are handed, gathered per
// turn of the event loop, to a thread of their own that relays them through a nodemailer pool of 20
// connections to that sink (the daemon's relay transport, without Nagle as the daemon's), so the sink's
// count gives the floor's end to end. A daemon that does all the rest before its 250 cannot go faster
// than this on the same cores: these rates bound the daemon's from above.
import { connect } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

const CONNECTIONS = 20;

/** The relay thread: each batch of messages sent over one pooled transport, as the daemon's relay thread does. */
async function relayThread(sinkPort) {
  const { default: nodemailer } = await import('nodemailer');
  const transport = nodemailer.createTransport({
    pool: true,
    host: '127.0.0.1',
    port: sinkPort,
    secure: false,
    ignoreTLS: true,
    maxConnections: CONNECTIONS,
    maxMessages: Infinity,
    logger: false,
    getSocket: (options, callback) => {
      const socket = connect({ host: options.host, port: options.port }, () => callback(null, { connection: socket }));
      socket.setNoDelay(true);
      socket.once('error', (error) => callback(error));
    },
  });
  let failed = 0;
  parentPort.on('message', (batch) => {
    for (const { envelope, raw } of batch)
      transport.sendMail({ envelope, raw: Buffer.from(raw) }, (error) => {
        if (error && failed++ === 0) process.stderr.write(`bare-smtp relay: ${error.message}\n`);
      });
  });
}

async function listener(sinkPort) {
  const root = new URL('..', import.meta.url).pathname;
  const { SubmissionServer } = await import(pathToFileURL(join(root, 'dist/ingress/smtp/connection.js')).href);
  const relay = sinkPort === null ? null : new Worker(new URL(import.meta.url), { workerData: { sinkPort } });
  let batch = [];
  const handOver = () => {
    relay.postMessage(
      batch,
      batch.map((m) => m.raw),
    );
    batch = [];
  };
  const server = new SubmissionServer(
    {
      banner: 'bare',
      authOptional: true,
      hideSTARTTLS: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      disableReverseLookup: true,
      maxClients: 1000,
      logger: false,
      onData(stream, session, callback) {
        const chunks = [];
        stream.on('data', (chunk) => relay !== null && chunks.push(chunk));
        stream.on('end', () => {
          // The envelope first: smtp-server resets the session's once the 250 is given.
          const envelope = {
            from: session.envelope.mailFrom.address,
            to: session.envelope.rcptTo.map((r) => r.address),
          };
          callback(null, 'Ok: accepted');
          if (relay === null) return;
          const raw = Buffer.concat(chunks);
          if (batch.length === 0) setImmediate(handOver);
          batch.push({ envelope, raw: raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength) });
        });
      },
    },
    () => 0,
    'plain',
    undefined,
  );
  server.on('error', () => {});
  server.listen(0, '127.0.0.1', () =>
    process.stdout.write(`${JSON.stringify({ port: server.server.address().port })}\n`),
  );
  process.stdin.resume().on('end', () => process.exit(0));
}

if (isMainThread) await listener(process.argv[2] === undefined ? null : Number(process.argv[2]));
else await relayThread(workerData.sinkPort);
