/**
 * Answers other nodes' requests (NATS request/reply) on subjects named for this
 * node, once it has joined the fleet. Each route reads its request and writes
 * its answer through its wire codec; a request that is not one, or a handler
 * that throws, is answered `{ok:false}` with the error's code.
 */
import type { Subscription } from '@nats-io/nats-core';
import type { Logger } from '../../core/index.js';
import type { JsonCodec } from '../../nats/index.js';
import type { Service } from '../../runtime/index.js';
import type { FleetLink } from './fleet-service.js';
import { requestFailureCodec } from './link-wire-schemas.js';

/** A request this node answers: the request's bytes in, the answer's bytes out; throws to answer a failure. */
export interface RequestRoute {
  answer(request: Uint8Array): Promise<Uint8Array>;
}

/** A route typed at both ends: a request that `request` does not read is refused with its WireError. */
export function requestRoute<Q, A>(
  request: JsonCodec<Q>,
  answer: JsonCodec<A>,
  handle: (request: Q) => Promise<A> | A,
): RequestRoute {
  return { answer: async (data) => answer.encode(await handle(request.decode(data))) };
}

export function createFleetResponder(link: FleetLink, routes: Record<string, RequestRoute>, log: Logger): Service {
  const subscriptions: Subscription[] = [];
  let stopped = false;

  const serve = (subscription: Subscription, route: RequestRoute): void => {
    void (async () => {
      for await (const message of subscription) {
        let answer: Uint8Array;
        try {
          answer = await route.answer(message.data);
        } catch (error) {
          const code = (error as { code?: unknown }).code;
          log.warn({ err: error, subject: message.subject }, 'fleet request failed');
          answer = requestFailureCodec.encode({
            ok: false,
            code: typeof code === 'string' ? code : 'INTERNAL',
            message: error instanceof Error ? error.message : 'failed',
          });
        }
        message.respond(answer);
      }
    })();
  };

  return {
    name: 'fleet-responder',
    start() {
      // Not awaited: the cluster may come later; the node starts alone meanwhile.
      void link.joined().then((nc) => {
        if (stopped) return;
        for (const [subject, route] of Object.entries(routes)) {
          const subscription = nc.subscribe(subject);
          subscriptions.push(subscription);
          serve(subscription, route);
        }
      });
    },
    stop() {
      stopped = true;
      for (const subscription of subscriptions.splice(0)) subscription.unsubscribe();
    },
  };
}
