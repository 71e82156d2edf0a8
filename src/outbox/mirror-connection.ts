/**
 * The mirror's NATS connection: made at start (or later, should NATS not answer
 * in time), reconnected by the client forever, the stream provisioned again
 * after each reconnect, the latest-state bucket and the command consumer
 * attached. NATS being down never stops the daemon: the outbox keeps the events.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { jetstreamManager, jetstream, type JetStreamClient } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { Logger } from '../core/index.js';
import type { MirrorStatus } from '../core/events/index.js';
import { exponentialBackoff } from '../core/delivery/index.js';
import { NatsConnectionLifecycle, type NatsConnectionHold } from '../nats/index.js';
import { startCommandConsumer, type CommandConsumer } from './command-consumer.js';
import { openLatestBucket } from './latest-kv.js';
import type { MirrorConfig } from './mirror-config.js';
import { provisionStream, StreamConflict } from './stream-provisioning.js';

/** How long a stop lets the client flush and close before the connection is simply closed. */
const DRAIN_MS = 2000;
const MIN_DRAIN_MS = 100;
/** Re-provisioning after a reconnect: retried from this wait, doubling up to the max, until the stream answers. */
const REPROVISION_INITIAL_MS = 250;
const REPROVISION_MAX_MS = 5000;

/** Pings every 10 s rather than the client's 2 minutes: a server gone quiet is noticed within seconds. */
const PING_INTERVAL_MS = 10_000;

interface MirrorConnectionDeps {
  config: MirrorConfig;
  log: Logger;
  onUsable: () => void;
  /** The connection the mirror shares with another owner (a fleet node's); absent: one of its own. */
  nats?: NatsConnectionLifecycle | undefined;
}

/** The connection the mirror makes for itself when it shares none: named `mailproxy`, as the server lists it. */
const ownConnection = (config: MirrorConfig): NatsConnectionLifecycle =>
  new NatsConnectionLifecycle({
    url: config.url,
    name: 'mailproxy',
    connectTimeoutMs: config.connectTimeoutMs,
    pingIntervalMs: PING_INTERVAL_MS,
  });

export function createMirrorConnection(deps: MirrorConnectionDeps): MirrorConnection {
  return new MirrorConnection(deps);
}

/** The mirror's side of the connection: what it provisions on it, and what /status says of it. */
export class MirrorConnection {
  readonly #nats: NatsConnectionHold;
  #js: JetStreamClient | null = null;
  #latest: KV | null = null;
  #commands: CommandConsumer | null = null;
  #state: MirrorStatus['state'] = 'connecting';
  /** Counts disconnects and reconnects: a re-provisioning retries only while its round is the latest. */
  #rounds = 0;
  /** Set once commands stop: a connection made later starts no consumer. */
  #commandsStopped: Promise<void> | null = null;

  constructor(private readonly deps: MirrorConnectionDeps) {
    const { config } = deps;
    this.#nats = (deps.nats ?? ownConnection(config)).hold({
      // Reconnects are the client's; re-provisioning and the backlog are ours.
      disconnected: (server) => {
        this.#rounds += 1;
        if (this.#state === 'connected')
          deps.log.warn({ server }, 'event stream disconnected; the outbox keeps the events');
        if (this.#state !== 'conflict') this.#state = 'disconnected';
      },
      reconnected: (nc, server) => {
        this.#rounds += 1;
        // Not awaited: the status events that follow (another disconnect) must be seen while it retries.
        void this.#reprovision(nc, server, this.#rounds);
      },
    });
  }

  /** Connects and provisions the stream; throws StreamConflict. Goes on without NATS when it cannot be reached in time. */
  async open(): Promise<void> {
    const first = await this.#nats.open(async (nc) => {
      await this.#attach(nc).catch((error: unknown) => {
        if (!(error instanceof StreamConflict)) return this.#attachLater(nc, error);
        this.#state = 'conflict';
        this.deps.log.error({ err: error }, 'event stream not usable');
      });
    });
    if (first !== null) {
      // A conflicting stream found at start refuses the start: the operator sees it at once.
      await this.#attach(first).catch(async (error: unknown) => {
        if (!(error instanceof StreamConflict)) return this.#attachLater(first, error);
        // Closed unless another owner (the fleet) still holds it: the daemon's refused start closes it then.
        await this.#nats.close(0);
        throw error;
      });
      return;
    }
    this.deps.log.warn(
      { url: this.deps.config.url },
      'event stream not reachable yet; going on without it and publishing once it is',
    );
    this.#state = 'disconnected';
  }

  state(): MirrorStatus['state'] {
    return this.#state;
  }

  /** Where to publish: null until connected, and when the stream conflicts. */
  client(): JetStreamClient | null {
    return this.#state === 'conflict' ? null : this.#js;
  }

  /** The connection the client publishes on (null as the client is). */
  connection(): NatsConnection | null {
    return this.#state === 'conflict' || this.#js === null ? null : this.#nats.current();
  }

  latest(): KV | null {
    return this.#latest;
  }

  commands(): CommandConsumer | null {
    return this.#commands;
  }

  /** Stops taking commands (intake), leaving the event stream up. Idempotent. */
  stopCommands(): Promise<void> {
    return (this.#commandsStopped ??= this.#commands?.stop() ?? Promise.resolve());
  }

  /**
   * Draining flushes what the client still buffers; closing also fails a window still
   * waiting for its PubAcks, so that the wait for it is short (it is published again next start).
   */
  async close(until: number): Promise<void> {
    await this.#nats.close(Math.min(DRAIN_MS, Math.max(MIN_DRAIN_MS, until - Date.now())));
  }

  /** The stream, then what hangs on it (the latest-state bucket, the command consumer) where not there yet. */
  async #provision(nc: NatsConnection): Promise<void> {
    const { config, log } = this.deps;
    const outcome = await provisionStream(await jetstreamManager(nc), config.stream);
    log.info({ stream: config.stream.name, outcome }, 'event stream ready');
    const client = jetstream(nc);
    if (config.latestBucket !== '' && this.#latest === null)
      this.#latest = await openLatestBucket(client, config.latestBucket, config.stream.replicas);
    if (config.commands !== undefined && this.#commandsStopped === null && this.#commands === null) {
      this.#commands = await startCommandConsumer(
        nc,
        client,
        config.commands.handler,
        log.child({ component: 'commands' }),
        {
          ...config.commands.consumer,
          stream: config.stream.name,
          subjectPrefix: config.stream.subjectPrefix,
        },
      );
    }
  }

  /**
   * Provisions the stream again on a connection that came back, until it answers. Right after a
   * server is lost the stream may have no leader for a while (JetStream's election can take many
   * seconds), and a reconnect that tried once stayed 'disconnected' for good: wakes are dropped
   * while not connected, so the mirror stopped. A newer disconnect, a conflict or the close ends
   * the retries.
   */
  async #reprovision(nc: NatsConnection, server: string, round: number): Promise<void> {
    const { log } = this.deps;
    for (let failures = 1; !this.#nats.closing() && round === this.#rounds && !nc.isClosed(); failures += 1) {
      try {
        await this.#provision(nc);
        if (round !== this.#rounds) return;
        this.#state = 'connected';
        log.info({ server }, 'event stream reconnected');
        this.deps.onUsable();
        return;
      } catch (error) {
        if (error instanceof StreamConflict) {
          this.#state = 'conflict';
          log.error({ err: error }, 'event stream not usable after reconnecting');
          return;
        }
        this.#state = 'disconnected';
        const retryInMs = exponentialBackoff(
          failures,
          { initialMs: REPROVISION_INITIAL_MS, maxMs: REPROVISION_MAX_MS, jitter: 0 },
          0.5,
        );
        log.warn({ err: error, failures, retryInMs }, 'event stream not usable yet after reconnecting; trying again');
        await new Promise((resolve) => setTimeout(resolve, retryInMs).unref());
      }
    }
  }

  async #attach(nc: NatsConnection): Promise<void> {
    this.#js = jetstream(nc);
    await this.#provision(nc);
    this.#state = 'connected';
    this.deps.onUsable();
  }

  /**
   * A first attach that failed for a reason other than a conflicting stream (JetStream answering
   * 503 while its servers elect a leader, or with no quorum at all): the daemon goes on without
   * the mirror, as when NATS is away, and the attach is tried again until it answers, rather than
   * refusing the start.
   */
  #attachLater(nc: NatsConnection, error: unknown): void {
    this.deps.log.warn({ err: error }, 'event stream not usable yet; going on without it and trying again');
    this.#state = 'disconnected';
    this.#rounds += 1;
    void this.#reprovision(nc, 'start', this.#rounds);
  }
}
