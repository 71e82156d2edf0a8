/**
 * The daemon with a bounce mailbox on a real Dovecot, as the mailbox tests
 * start it: the configuration that has IDLE (not the poll) bring each bounce,
 * and a message sent through the scenario's sink, answered as the sink got it.
 */
import { expect } from 'vitest';
import { bounceToml, type DovecotPeer } from '../peers/dovecot.js';
import { message } from './queue-fixture.js';
import type { ReportScenario } from './report-fixture.js';

/** IDLE, not the poll, must bring each bounce: the poll interval is far beyond any wait. */
export const idleBounceToml = (peer: DovecotPeer, extra = ''): string => `
${bounceToml(peer)}processed_folder = "Processed"
unmatched_folder = "Unmatched"
poll_interval_seconds = 3600
reconnect_initial_seconds = 0.1
reconnect_max_seconds = 0.5
${extra}
`;

/** Sends `id` to `to` through the sink and answers the raw message the sink received. */
export async function sentThroughSink(
  s: ReportScenario,
  key: string,
  id: string,
  to: string | string[],
): Promise<Buffer> {
  const response = await s.fx.post(key, [message(id, { to })]);
  expect(response.status).toBe(200);
  await s.fx.settle();
  const copy = s.sink.messages.find((received) => received.raw.toString('utf8').includes(`X-Genro-Mail-ID: ${id}`));
  if (copy === undefined) throw new Error(`the sink did not receive ${id}`);
  return copy.raw;
}
