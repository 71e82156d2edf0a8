/**
 * The JetStream manager for requests on a stream or bucket already made. nats.js asks the server
 * for the account's JetStream info each time a manager is made, to fail early where JetStream is
 * off; the spool makes one at every purge, read and listing, and the fleet at every heartbeat, all
 * after provisioning proved JetStream there: a round trip each for nothing. Provisioning keeps the
 * check (fleet-stream.ts, the mirror's).
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';

export function managerOf(nc: NatsConnection, timeoutMs?: number): Promise<JetStreamManager> {
  return jetstreamManager(nc, { checkAPI: false, ...(timeoutMs === undefined ? {} : { timeout: timeoutMs }) });
}
