/**
 * A real client application's sync endpoint (node:http on 127.0.0.1, port 0):
 * records every report it is posted and answers as the test scripts it, per
 * path (one peer can stand for many tenants), including never answering.
 */
import { EventEmitter } from 'node:events';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ReceivedReport {
  path: string;
  headers: IncomingHttpHeaders;
  /** The body exactly as it arrived (what a signature covers). */
  raw: string;
  items: Array<Record<string, unknown>>;
  receivedAt: number;
}

/** How to answer one report: a status and a JSON body, or never (the request hangs). */
export type ClientAnswer = { status: number; body?: unknown } | 'hang';

export interface ReportClient {
  /** e.g. http://127.0.0.1:PORT; a tenant's client_base_url is this plus a path of the test's choice. */
  base: string;
  reports: ReceivedReport[];
  /** Replaces the answer for reports whose path starts with `prefix` (default: every path). */
  answer(script: (report: ReceivedReport) => ClientAnswer, prefix?: string): void;
  /** Every item received on paths starting with `prefix`, in arrival order. */
  items(prefix?: string): Array<Record<string, unknown>>;
  waitFor(what: string, done: (client: ReportClient) => boolean, timeoutMs?: number): Promise<void>;
  /** Requests being held open by a 'hang' answer. */
  hanging(): number;
  stop(): Promise<void>;
}

export const OK: ClientAnswer = { status: 200, body: { ok: true } };

/** `port`: listen there (an endpoint back where it was stopped); default a random one. */
export async function startReportClient(options: { port?: number } = {}): Promise<ReportClient> {
  const events = new EventEmitter();
  events.setMaxListeners(100);
  const scripts: Array<{ prefix: string; script: (report: ReceivedReport) => ClientAnswer }> = [];
  const held = new Set<ServerResponse>();
  const sockets = new Set<Socket>();

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let items: Array<Record<string, unknown>> = [];
      try {
        items = (JSON.parse(raw) as { delivery_report: Array<Record<string, unknown>> }).delivery_report;
      } catch {
        items = [];
      }
      const report: ReceivedReport = {
        path: request.url ?? '/',
        headers: request.headers,
        raw,
        items,
        receivedAt: Date.now(),
      };
      client.reports.push(report);
      const script = [...scripts].reverse().find((entry) => report.path.startsWith(entry.prefix))?.script;
      const answer = script === undefined ? OK : script(report);
      if (answer === 'hang') {
        held.add(response);
        response.on('close', () => held.delete(response));
      } else {
        response.writeHead(answer.status, { 'content-type': 'application/json' });
        response.end(
          answer.body === undefined ? '' : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body),
        );
      }
      events.emit('change');
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const client: ReportClient = {
    base: `http://127.0.0.1:${port}`,
    reports: [],
    answer(script, prefix = '') {
      scripts.push({ prefix, script });
    },
    items: (prefix = '') =>
      client.reports.filter((report) => report.path.startsWith(prefix)).flatMap((report) => report.items),
    waitFor(what, done, timeoutMs = 5000) {
      if (done(client)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (!done(client)) return;
          clearTimeout(timer);
          events.off('change', check);
          resolve();
        };
        const timer = setTimeout(() => {
          events.off('change', check);
          reject(new Error(`report client: timed out waiting for ${what} (${client.reports.length} reports so far)`));
        }, timeoutMs);
        events.on('change', check);
      });
    },
    hanging: () => held.size,
    async stop() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return client;
}
