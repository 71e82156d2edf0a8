/**
 * HTTP intake as the daemon runs it: the API (and the console in front of it)
 * on one listener, started after the work behind it and stopped first with
 * the rest of intake: a request in the middle may finish within the wait.
 */
import type { Logger } from '../../core/index.js';
import type { Service } from '../../runtime/index.js';
import { startHttpServer, type HttpServer } from './server.js';

export interface HttpService {
  /** Where it listens, once started. */
  address(): { host: string; port: number };
  service: Service;
}

export function createHttpService(
  listen: { host: string; port: number },
  /** With `close`, ended before the listener: what holds streams open (the MCP sessions). */
  app: Parameters<typeof startHttpServer>[0] & { close?: () => Promise<void> },
  log: Logger,
): HttpService {
  let server: HttpServer | null = null;
  return {
    address: () => {
      if (server === null) throw new Error('the http service has not started');
      return server.address;
    },
    service: {
      name: 'http',
      start: async () => {
        server = await startHttpServer(app, listen);
        log.info({ host: server.address.host, port: server.address.port }, 'http listening');
      },
      stop: async (budget) => {
        await app.close?.();
        await server?.close(budget.waitLeft());
      },
    },
  };
}
