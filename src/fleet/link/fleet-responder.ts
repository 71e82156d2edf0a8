/**
 * Answers other nodes' requests (NATS request/reply) on subjects named for this
 * node, once it has joined the fleet. A handler gets the request's JSON and
 * answers JSON; a handler that throws answers `{ok:false}` with the error's code.
 */
import type { Subscription } from '@nats-io/nats-core';
import type { Logger } from '../../core/index.js';
import type { Service } from '../../runtime/index.js';
import type { FleetLink } from './fleet-service.js';

export type RequestHandler = (request: unknown) => Promise<object> | object;

export function createFleetResponder(link: FleetLink, handlers: Record<string, RequestHandler>, log: Logger): Service {
  const subscriptions: Subscription[] = [];
  let stopped = false;

  const serve = (subscription: Subscription, handler: RequestHandler): void => {
    void (async () => {
      for await (const message of subscription) {
        let answer: object;
        try {
          answer = await handler(message.json<unknown>());
        } catch (error) {
          const code = (error as { code?: unknown }).code;
          log.warn({ err: error, subject: message.subject }, 'fleet request failed');
          answer = {
            ok: false,
            code: typeof code === 'string' ? code : 'INTERNAL',
            message: error instanceof Error ? error.message : 'failed',
          };
        }
        message.respond(JSON.stringify(answer));
      }
    })();
  };

  return {
    name: 'fleet-responder',
    start() {
      // Not awaited: the cluster may come later; the node starts alone meanwhile.
      void link.joined().then((nc) => {
        if (stopped) return;
        for (const [subject, handler] of Object.entries(handlers)) {
          const subscription = nc.subscribe(subject);
          subscriptions.push(subscription);
          serve(subscription, handler);
        }
      });
    },
    stop() {
      stopped = true;
      for (const subscription of subscriptions.splice(0)) subscription.unsubscribe();
    },
  };
}
