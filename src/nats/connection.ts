/**
 * One NATS connection's life, as the event mirror and the fleet hold it (both
 * at once on a fleet node's main thread): made at the first owner's start
 * within a bound (or later, whenever a server answers, so that NATS being away
 * never stops the daemon), reconnected by the client forever, its losses and
 * returns told to every owner holding it, drained and closed once the last
 * owner lets go. What an owner builds on it (a stream, a bucket) stays the owner's.
 */
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { within } from '../runtime/index.js';

export interface NatsConnectionSettings {
  /** Server URLs, comma-separated. */
  url: string;
  /** The client name the server shows. */
  name: string;
  /** How long an owner's start waits for a first server before it goes on without one. */
  connectTimeoutMs: number;
  /** The client's ping interval; the client's default when absent. */
  pingIntervalMs?: number;
}

/** What an owner hears of the connection's life: reconnecting is the client's, what follows is the owner's. */
export interface NatsConnectionEvents {
  disconnected(server: string): void;
  reconnected(connection: NatsConnection, server: string): void;
}

/** One owner's hold on the connection. */
export interface NatsConnectionHold {
  /**
   * Connects (or takes the connection another owner made): resolves with it when a server answers
   * within `connectTimeoutMs`, else with null, and hands the connection made later to `late`
   * (not when this owner's stop came first). From then on this owner hears its events.
   */
  open(late: (connection: NatsConnection) => Promise<void>): Promise<NatsConnection | null>;
  /** The connection once made and opened by this owner (null before); it may be reconnecting. */
  current(): NatsConnection | null;
  /** True from this owner's stop on. */
  closing(): boolean;
  /** This owner's stop has begun: it is handed no connection from now on. */
  beginClose(): void;
  /**
   * Lets go. The last owner drains what the client still buffers, for at most `drainMs` (0: not
   * at all), then closes; an owner that leaves others holding it only flushes what it sent.
   */
  close(drainMs: number): Promise<void>;
}

interface Holder {
  events: NatsConnectionEvents;
  late: ((connection: NatsConnection) => Promise<void>) | null;
  opened: boolean;
  closing: boolean;
  closed: boolean;
}

export class NatsConnectionLifecycle {
  #connecting: Promise<NatsConnection> | null = null;
  #connection: NatsConnection | null = null;
  #followingLate = false;
  readonly #holders: Holder[] = [];

  constructor(private readonly settings: NatsConnectionSettings) {}

  /** A hold for one owner, made before either starts: each owner opens, hears and lets go on its own. */
  hold(events: NatsConnectionEvents): NatsConnectionHold {
    const holder: Holder = { events, late: null, opened: false, closing: false, closed: false };
    this.#holders.push(holder);
    return {
      open: (late) => this.#open(holder, late),
      current: () => (holder.opened ? this.#connection : null),
      closing: () => holder.closing,
      beginClose: () => {
        holder.closing = true;
        holder.late = null;
      },
      close: (drainMs) => this.#close(holder, drainMs),
    };
  }

  async #open(holder: Holder, late: (connection: NatsConnection) => Promise<void>): Promise<NatsConnection | null> {
    holder.opened = true;
    if (this.#connection !== null) return this.#connection;
    const connecting = (this.#connecting ??= this.#dial());
    let first: NatsConnection | null = null;
    await within(
      connecting.then((connection) => (first = connection)),
      this.settings.connectTimeoutMs,
    );
    if (first !== null) return this.#adopt(first);
    if (!holder.closing) holder.late = late;
    // Followed even for an owner already stopping: a connection made once all have stopped is closed.
    if (!this.#followingLate) {
      this.#followingLate = true;
      void connecting.then((connection) => this.#arrivedLate(connection));
    }
    return null;
  }

  #dial(): Promise<NatsConnection> {
    return connect({
      servers: this.settings.url.split(',').map((server) => server.trim()),
      name: this.settings.name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1000,
      waitOnFirstConnect: true,
      ...(this.settings.pingIntervalMs === undefined ? {} : { pingInterval: this.settings.pingIntervalMs }),
      // Otherwise every publish captures a stack trace for its error, in case there is one: a tenth of the main thread (profiled).
      noAsyncTraces: true,
    });
  }

  /** A connection made after an owner stopped waiting: to each owner still waiting for it, or closed when all have stopped. */
  async #arrivedLate(connection: NatsConnection): Promise<void> {
    const opened = this.#holders.filter((holder) => holder.opened);
    if (this.#connection !== connection && opened.every((holder) => holder.closing)) return connection.close();
    this.#adopt(connection);
    await Promise.all(
      opened.map((holder) => {
        const late = holder.late;
        holder.late = null;
        return late === null || holder.closing ? undefined : late(connection);
      }),
    );
  }

  async #close(holder: Holder, drainMs: number): Promise<void> {
    holder.closing = true;
    holder.closed = true;
    holder.late = null;
    const connection = this.#connection;
    const usable = connection !== null && !connection.isClosed();
    if (this.#holders.some((other) => other.opened && !other.closed)) {
      // The others go on using it: what this owner published goes out, nothing is unsubscribed.
      if (usable && drainMs > 0)
        await within(
          connection.flush().catch(() => undefined),
          drainMs,
        );
      return;
    }
    if (usable && drainMs > 0)
      await within(
        connection.drain().catch(() => undefined),
        drainMs,
      );
    await connection?.close();
  }

  #adopt(connection: NatsConnection): NatsConnection {
    if (this.#connection === connection) return connection;
    this.#connection = connection;
    void this.#follow(connection);
    return connection;
  }

  /**
   * Every owner that opened and has not let go hears each loss and return. One loop serves every
   * owner, so an owner's handler that throws is kept from ending it for the others.
   */
  async #follow(connection: NatsConnection): Promise<void> {
    for await (const event of connection.status()) {
      const holding = this.#holders.filter((holder) => holder.opened && !holder.closed);
      for (const holder of holding)
        try {
          if (event.type === 'disconnect') holder.events.disconnected(event.server);
          else if (event.type === 'reconnect') holder.events.reconnected(connection, event.server);
        } catch {
          // The owner's own failure; what it does on these events is its own to log.
        }
    }
  }
}
