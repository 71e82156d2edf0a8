// Reads a whole JetStream stream with an ordered consumer and prints, as one JSON line, how
// long each event took from its commit (`occurred_at` in the body) to being stored in the
// stream (the server's timestamp, when it sent the PubAck): count, p50, p99, max in ms.
// Usage: node bench/stream-lag.mjs <nats-url> <stream>
import { connect } from '@nats-io/transport-node';
import { jetstreamManager, jetstream } from '@nats-io/jetstream';

const [url, stream] = process.argv.slice(2);
const nc = await connect({ servers: url });
const js = jetstream(nc);
const jsm = await jetstreamManager(nc);
const { state } = await jsm.streams.info(stream);
const consumer = await js.consumers.get(stream);
const lags = [];
const messages = await consumer.consume();
for await (const message of messages) {
  const body = message.json();
  // nats.js types it as a bigint; Number() reads it either way.
  lags.push(Number(message.info.timestampNanos) / 1e6 - Date.parse(body.occurred_at));
  if (message.seq >= state.last_seq) break;
}
await nc.close();
lags.sort((a, b) => a - b);
const at = (p) => lags[Math.min(lags.length - 1, Math.floor(lags.length * p))] ?? null;
process.stdout.write(
  `${JSON.stringify({ count: lags.length, p50: at(0.5), p99: at(0.99), max: lags[lags.length - 1] ?? null })}\n`,
);
process.exit(0);
