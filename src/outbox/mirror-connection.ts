/**
 * The mirror's NATS connection: made at start (or later, should NATS not answer
 * in time), reconnected by the client forever, the stream provisioned again
 * after each reconnect, the latest-state bucket and the command consumer
 * attached. NATS being down never stops the daemon: the outbox keeps the events.
 */
import { connect, type JetStreamClient, type KV, type NatsConnection } from 'nats';
import type { Logger } from '../core/logger.js';
import type { MirrorStatus } from '../core/mirror.js';
import { exponentialBackoff } from '../core/retry-policy.js';
import { within } from '../runtime/within.js';
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

export function createMirrorConnection(deps: { config: MirrorConfig; log: Logger; onUsable: () => void }) {
  const { config, log } = deps;
  let connection: NatsConnection | null = null;
  let js: JetStreamClient | null = null;
  let latest: KV | null = null;
  let commands: CommandConsumer | null = null;
  let state: MirrorStatus['state'] = 'connecting';
  let closing = false;
  /** Counts disconnects and reconnects: a re-provisioning retries only while its round is the latest. */
  let rounds = 0;
  /** Set once commands stop: a connection made later starts no consumer. */
  let commandsStopped: Promise<void> | null = null;

  /** The stream, then what hangs on it (the latest-state bucket, the command consumer) where not there yet. */
  const provision = async (nc: NatsConnection): Promise<void> => {
    const outcome = await provisionStream(await nc.jetstreamManager(), config.stream);
    log.info({ stream: config.stream.name, outcome }, 'event stream ready');
    const client = nc.jetstream();
    if (config.latestBucket !== '' && latest === null) latest = await openLatestBucket(client, config.latestBucket, config.stream.replicas);
    if (config.commands !== undefined && commandsStopped === null && commands === null) {
      commands = await startCommandConsumer(nc, client, config.commands.handler, log.child({ component: 'commands' }), {
        ...config.commands.consumer,
        stream: config.stream.name,
        subjectPrefix: config.stream.subjectPrefix,
      });
    }
  };

  /**
   * Provisions the stream again on a connection that came back, until it answers. Right after a
   * server is lost the stream may have no leader for a while (JetStream's election: measured from
   * under a second to over 15 s here), and a reconnect that tried once stayed 'disconnected' for
   * good: wakes are dropped while not connected, so the mirror stopped (found by the NATS-loss
   * fleet test). A newer disconnect, a conflict or the close ends the retries.
   */
  const reprovision = async (nc: NatsConnection, server: string, round: number): Promise<void> => {
    for (let failures = 1; !closing && round === rounds && !nc.isClosed(); failures += 1) {
      try {
        await provision(nc);
        if (round !== rounds) return;
        state = 'connected';
        log.info({ server }, 'event stream reconnected');
        deps.onUsable();
        return;
      } catch (error) {
        if (error instanceof StreamConflict) {
          state = 'conflict';
          log.error({ err: error }, 'event stream not usable after reconnecting');
          return;
        }
        state = 'disconnected';
        const retryInMs = exponentialBackoff(failures, { initialMs: REPROVISION_INITIAL_MS, maxMs: REPROVISION_MAX_MS, jitter: 0 }, 0.5);
        log.warn({ err: error, failures, retryInMs }, 'event stream not usable yet after reconnecting; trying again');
        await new Promise((resolve) => setTimeout(resolve, retryInMs).unref());
      }
    }
  };

  /** Follows the connection's life: reconnects are the client's, re-provisioning and the backlog are ours. */
  const watch = async (nc: NatsConnection): Promise<void> => {
    for await (const event of nc.status()) {
      if (event.type === 'disconnect') {
        rounds += 1;
        if (state === 'connected') log.warn({ server: String(event.data) }, 'event stream disconnected; the outbox keeps the events');
        if (state !== 'conflict') state = 'disconnected';
      } else if (event.type === 'reconnect') {
        rounds += 1;
        // Not awaited: the status events that follow (another disconnect) must be seen while it retries.
        void reprovision(nc, String(event.data), rounds);
      }
    }
  };

  const attach = async (nc: NatsConnection): Promise<void> => {
    connection = nc;
    js = nc.jetstream();
    void watch(nc);
    await provision(nc);
    state = 'connected';
    deps.onUsable();
  };

  /**
   * A first attach that failed for a reason other than a conflicting stream (JetStream answering
   * 503 while its servers elect a leader, or with no quorum at all): the daemon goes on without
   * the mirror, as when NATS is away, and the attach is tried again until it answers. It used to
   * refuse the start (a fleet node restarted during a cluster's recovery exited 1).
   */
  const attachLater = (nc: NatsConnection, error: unknown): void => {
    log.warn({ err: error }, 'event stream not usable yet; going on without it and trying again');
    state = 'disconnected';
    rounds += 1;
    void reprovision(nc, 'start', rounds);
  };

  return {
    /** Connects and provisions the stream; throws StreamConflict. Goes on without NATS when it cannot be reached in time. */
    async open(): Promise<void> {
      const connecting = connect({
        servers: config.url.split(',').map((server) => server.trim()),
        name: 'mailproxy',
        maxReconnectAttempts: -1,
        reconnectTimeWait: 1000,
        waitOnFirstConnect: true,
        pingInterval: 10_000,
        // Otherwise every publish captures a stack trace for its error, in case there is one: a tenth of the main thread (profiled).
        noAsyncTraces: true,
      });
      let timer: NodeJS.Timeout | undefined;
      const first = await Promise.race([
        connecting,
        new Promise<null>((resolve) => {
          timer = setTimeout(() => resolve(null), config.connectTimeoutMs);
        }),
      ]);
      clearTimeout(timer);
      if (first !== null) {
        // A conflicting stream found at start refuses the start: the operator sees it at once.
        await attach(first).catch(async (error: unknown) => {
          if (!(error instanceof StreamConflict)) return attachLater(first, error);
          await first.close();
          throw error;
        });
        return;
      }
      log.warn({ url: config.url }, 'event stream not reachable yet; going on without it and publishing once it is');
      state = 'disconnected';
      void connecting.then(async (nc) => {
        if (closing) return nc.close();
        await attach(nc).catch((error: unknown) => {
          if (!(error instanceof StreamConflict)) return attachLater(nc, error);
          state = 'conflict';
          log.error({ err: error }, 'event stream not usable');
        });
      });
    },
    state: (): MirrorStatus['state'] => state,
    /** Where to publish: null until connected, and when the stream conflicts. */
    client: (): JetStreamClient | null => (state === 'conflict' ? null : js),
    /** The connection the client publishes on (null as the client is). */
    connection: (): NatsConnection | null => (state === 'conflict' || js === null ? null : connection),
    latest: (): KV | null => latest,
    commands: (): CommandConsumer | null => commands,
    /** Stops taking commands (intake), leaving the event stream up. Idempotent. */
    stopCommands: (): Promise<void> => (commandsStopped ??= commands?.stop() ?? Promise.resolve()),
    /**
     * Draining flushes what the client still buffers; closing also fails a window still
     * waiting for its PubAcks, so that the wait for it is short (it is published again next start).
     */
    async close(until: number): Promise<void> {
      closing = true;
      const drainMs = Math.min(DRAIN_MS, Math.max(MIN_DRAIN_MS, until - Date.now()));
      if (connection !== null && !connection.isClosed())
        await within(
          connection.drain().catch(() => undefined),
          drainMs,
        );
      await connection?.close();
    },
  };
}
