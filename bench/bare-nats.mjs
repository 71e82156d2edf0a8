// A bare nats.js client as the mirror's yardstick: `count` acknowledged publishes of
// `bytes` each to a stream of its own on the same nats-server, at most `inFlight` awaiting their
// PubAck at once (the mirror's default max_in_flight), each with its own Nats-Msg-Id as the
// mirror's events carry. argv: url count bytes inFlight. Prints {"rate": publishes/s}.
import { connect } from '@nats-io/transport-node';
import { headers } from '@nats-io/nats-core';
import { jetstreamManager, jetstream } from '@nats-io/jetstream';

const [url, countText, bytesText, inFlightText] = process.argv.slice(2);
const count = Number(countText);
const payload = new Uint8Array(Number(bytesText)).fill(120);
const nc = await connect({ servers: url });
const jsm = await jetstreamManager(nc);
await jsm.streams.add({ name: 'BARE', subjects: ['bare.>'], storage: 'file', duplicate_window: 120_000_000_000 });
const js = jetstream(nc);
const startedAt = performance.now();
let next = 0;
async function lane() {
  while (next < count) {
    const id = next;
    next += 1;
    const h = headers();
    h.set('Nats-Msg-Id', `bare-${id}`);
    await js.publish(`bare.events.${id % 16}`, payload, { headers: h });
  }
}
await Promise.all(Array.from({ length: Number(inFlightText) }, lane));
const seconds = (performance.now() - startedAt) / 1000;
await jsm.streams.delete('BARE');
await nc.close();
process.stdout.write(`${JSON.stringify({ rate: count / seconds })}\n`);
