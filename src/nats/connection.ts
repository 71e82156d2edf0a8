/**
 * One NATS connection's life, as the event mirror and the fleet both hold it:
 * made at the start within a bound (or later, whenever a server answers, so
 * that NATS being away never stops the daemon), reconnected by the client
 * forever, its losses and returns told to its owner, drained and closed at
 * the stop. What the owner builds on it (a stream, a bucket) stays the owner's.
 */
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { within } from '../runtime/index.js';

export interface NatsConnectionSettings {
  /** Server URLs, comma-separated. */
  url: string;
  /** The client name the server shows. */
  name: string;
  /** How long the start waits for a first server before it goes on without one. */
  connectTimeoutMs: number;
  /** The client's ping interval; the client's default when absent. */
  pingIntervalMs?: number;
}

/** What the owner hears of the connection's life: reconnecting is the client's, what follows is the owner's. */
export interface NatsConnectionEvents {
  disconnected(server: string): void;
  reconnected(connection: NatsConnection, server: string): void;
}

export class NatsConnectionLifecycle {
  #connection: NatsConnection | null = null;
  #closing = false;

  constructor(
    private readonly settings: NatsConnectionSettings,
    private readonly events: NatsConnectionEvents,
  ) {}

  /**
   * Connects: resolves with the connection when a server answers within `connectTimeoutMs`, else
   * with null, and hands the connection made later to `late` (closed at once when the stop came
   * first). Either connection is followed from then on.
   */
  async open(late: (connection: NatsConnection) => Promise<void>): Promise<NatsConnection | null> {
    const connecting = connect({
      servers: this.settings.url.split(',').map((server) => server.trim()),
      name: this.settings.name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1000,
      waitOnFirstConnect: true,
      ...(this.settings.pingIntervalMs === undefined ? {} : { pingInterval: this.settings.pingIntervalMs }),
      // Otherwise every publish captures a stack trace for its error, in case there is one: a tenth of the main thread (profiled).
      noAsyncTraces: true,
    });
    let first: NatsConnection | null = null;
    await within(
      connecting.then((connection) => (first = connection)),
      this.settings.connectTimeoutMs,
    );
    if (first !== null) return this.#adopt(first);
    void connecting.then(async (connection) => {
      if (this.#closing) return connection.close();
      await late(this.#adopt(connection));
    });
    return null;
  }

  /** The connection once made (null before); it may be reconnecting. */
  current(): NatsConnection | null {
    return this.#connection;
  }

  /** True from the stop on. */
  closing(): boolean {
    return this.#closing;
  }

  /** The stop has begun: a connection that comes from now on is closed at once. */
  beginClose(): void {
    this.#closing = true;
  }

  /** Drains what the client still buffers, for at most `drainMs`, then closes. */
  async close(drainMs: number): Promise<void> {
    this.#closing = true;
    const connection = this.#connection;
    if (connection !== null && !connection.isClosed())
      await within(
        connection.drain().catch(() => undefined),
        drainMs,
      );
    await connection?.close();
  }

  #adopt(connection: NatsConnection): NatsConnection {
    this.#connection = connection;
    void this.#follow(connection);
    return connection;
  }

  async #follow(connection: NatsConnection): Promise<void> {
    for await (const event of connection.status()) {
      if (event.type === 'disconnect') this.events.disconnected(event.server);
      else if (event.type === 'reconnect') this.events.reconnected(connection, event.server);
    }
  }
}
