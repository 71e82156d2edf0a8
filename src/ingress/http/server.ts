/**
 * Serves the hono app on a node:http server. `close()` stops accepting, lets
 * in-flight requests finish until the deadline, closing each connection once
 * its last response is out, then drops what is left.
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';

export interface HttpServer {
  address: { host: string; port: number };
  close(deadlineMs: number): Promise<void>;
}

/** `app`: the API's hono app, or any fetch handler in front of it (the console's, see ingress/console/front.ts). */
export async function startHttpServer(
  app: { fetch: (request: Request, env?: unknown) => Response | Promise<Response> },
  listen: { host: string; port: number },
): Promise<HttpServer> {
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const started = serve({ fetch: app.fetch, hostname: listen.host, port: listen.port }, () => resolve(started));
    started.once('error', reject);
  });
  // Slow-loris protection: a client must send its headers promptly.
  if ('headersTimeout' in server) {
    server.headersTimeout = 15_000;
    server.requestTimeout = 60_000;
  }
  const address = server.address() as AddressInfo;
  let closing: Promise<void> | null = null;
  // server.close() leaves a keep-alive connection open after its last response until the
  // client's keep-alive timeout (seconds): while closing, each one goes as soon as it is idle.
  server.on('request', (_request, response) => {
    response.once('finish', () => {
      if (closing !== null && 'closeIdleConnections' in server) setImmediate(() => server.closeIdleConnections());
    });
  });

  return {
    address: { host: address.address, port: address.port },
    close(deadlineMs) {
      closing ??= new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          if ('closeAllConnections' in server) server.closeAllConnections();
        }, deadlineMs);
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        if ('closeIdleConnections' in server) server.closeIdleConnections();
      });
      return closing;
    },
  };
}
