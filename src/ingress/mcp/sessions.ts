/**
 * The MCP sessions a daemon holds: a client that initializes gets a session (its server and
 * transport kept, its id in `Mcp-Session-Id`), so it can subscribe to resources and hear of their
 * changes on the stream it opens with GET. A session belongs to the credential that opened it: the
 * id is no credential, and another's id answers as an unknown one. Sessions live on the node that
 * opened them; one idle past `idleMs` with no stream open is closed, and past `max` the least
 * recently used goes first. `tick()` closes the idle and runs every session's watch once, closing
 * a session whose credential was deleted meanwhile.
 */
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { McpSessionServer } from './mcp-server.js';

export interface McpSession {
  id: string;
  /** A digest of the credential that opened it. */
  caller: string;
  served: McpSessionServer;
  transport: WebStandardStreamableHTTPServerTransport;
  lastSeenAt: number;
  /** Event streams open on it (a GET): a client waiting for notifications is not idle. */
  streams: number;
}

export interface McpSessionsOptions {
  idleMs: number;
  max: number;
  now: () => number;
}

export class McpSessions {
  private readonly open = new Map<string, McpSession>();

  constructor(private readonly options: McpSessionsOptions) {}

  get size(): number {
    return this.open.size;
  }

  async add(session: McpSession): Promise<void> {
    while (this.open.size >= this.options.max) {
      const oldest = [...this.open.values()].reduce((a, b) => (b.lastSeenAt < a.lastSeenAt ? b : a));
      await this.close(oldest.id);
    }
    this.open.set(session.id, session);
  }

  /** The session `id` if `caller` opened it (and marks it used); null otherwise. */
  find(id: string, caller: string): McpSession | null {
    const session = this.open.get(id);
    if (session === undefined || session.caller !== caller) return null;
    session.lastSeenAt = this.options.now();
    return session;
  }

  /** Forgets a session its client ended (DELETE); the transport closes itself. */
  forget(id: string): void {
    this.open.delete(id);
  }

  async close(id: string): Promise<void> {
    const session = this.open.get(id);
    if (session === undefined) return;
    this.open.delete(id);
    await session.served.server.close();
  }

  /** Closes the idle sessions, then reads again what the others subscribed to; answers the notifications sent. */
  async tick(): Promise<number> {
    const now = this.options.now();
    for (const session of [...this.open.values()])
      if (session.streams === 0 && now - session.lastSeenAt >= this.options.idleMs) await this.close(session.id);
    let notified = 0;
    for (const session of [...this.open.values()]) {
      const watch = session.served.watch;
      if (watch === null || watch.size === 0) continue;
      notified += await watch.tick();
      // Its credential no longer opens anything: its stream is ended, and the client hears 401 when it asks again.
      if (watch.unauthorized) await this.close(session.id);
    }
    return notified;
  }

  async closeAll(): Promise<void> {
    for (const id of [...this.open.keys()]) await this.close(id);
  }
}

/** `response`'s body, counting `session`'s open streams until it ends or the client goes. */
export function countedStream(session: McpSession, response: Response): Response {
  if (response.body === null || !response.headers.get('content-type')?.startsWith('text/event-stream')) return response;
  const reader = response.body.getReader();
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    session.streams -= 1;
  };
  session.streams += 1;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (done) {
        end();
        controller.close();
      } else controller.enqueue(value);
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, headers: response.headers });
}
