/**
 * The nodes' word on their relays (core/delivery/relay-signals.ts), carried over the cluster:
 * published on one plain NATS subject (at most once: a lost signal costs a node only its own
 * finding out, by its own sends) once this node has joined, and heard from every other node.
 * Pushback, a relay gone silent and one answering again are rare: no stream, no bucket.
 */
import type { Subscription } from '@nats-io/nats-core';
import { z } from 'zod';
import type { RelaySignal, RelaySignals } from '../../core/delivery/index.js';
import type { Logger } from '../../core/index.js';
import { jsonCodec } from '../../nats/index.js';
import type { Service } from '../../runtime/index.js';
import type { FleetLink } from '../link/fleet-service.js';

/** Outside the event stream's `mailproxy.>`, like the fleet's other subjects. */
export const RELAY_SIGNAL_SUBJECT = 'mailproxy_fleet_relays';

const account = { tenantId: z.string(), accountId: z.string() };
const signalSchema: z.ZodType<RelaySignal> = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('pushback'), ...account, at: z.number(), hintMs: z.number().nullable() }),
  z.object({ kind: z.literal('unreachable'), ...account, since: z.number() }),
  z.object({ kind: z.literal('answering'), ...account, at: z.number() }),
]);
const wireCodec = jsonCodec(z.object({ node: z.string(), signal: signalSchema }), 'relay signal');

export function createRelaySignals(link: FleetLink, log: Logger): RelaySignals & { service: Service } {
  const listeners: Array<(signal: RelaySignal) => void> = [];
  let subscription: Subscription | null = null;
  let stopped = false;

  const listen = (sub: Subscription): void => {
    void (async () => {
      for await (const message of sub) {
        const decoded = wireCodec.read(message.data);
        if (!decoded.ok) {
          log.warn({ err: decoded.error }, 'relay signal not understood: ignored');
          continue;
        }
        if (decoded.value.node === link.nodeId) continue; // its own, already acted on
        for (const listener of listeners) listener(decoded.value.signal);
      }
    })();
  };

  return {
    tell(signal) {
      const nc = link.connection();
      if (nc === null) return; // cut off: the others find out by their own sends
      try {
        nc.publish(RELAY_SIGNAL_SUBJECT, wireCodec.encode({ node: link.nodeId, signal }));
      } catch (error) {
        log.warn({ err: error }, 'relay signal not sent: the other nodes find out by their own sends');
      }
    },
    hear(listener) {
      listeners.push(listener);
    },
    service: {
      name: 'fleet-relay-signals',
      start() {
        // Not awaited: the cluster may come later; the node relays alone meanwhile.
        void link.joined().then((nc) => {
          if (stopped) return;
          subscription = nc.subscribe(RELAY_SIGNAL_SUBJECT);
          listen(subscription);
        });
      },
      stop() {
        stopped = true;
        subscription?.unsubscribe();
        subscription = null;
      },
    },
  };
}
