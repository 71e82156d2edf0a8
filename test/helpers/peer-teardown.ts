/** Stops what a test started, in order, skipping what it never got to start. */
import type { NatsPeer } from '../peers/nats-server.js';
import type { SmtpSink } from '../peers/smtp-sink.js';
import type { QueueFixture } from './queue-fixture.js';

export async function tearDownPeers(started: {
  fx?: QueueFixture | undefined;
  sink?: SmtpSink | undefined;
  nats?: NatsPeer | undefined;
}): Promise<void> {
  await started.fx?.stop();
  started.fx?.t.cleanup();
  await started.sink?.stop();
  await started.nats?.destroy();
}
