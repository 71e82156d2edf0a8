/**
 * The JetStream mirror: publishes outbox rows in order, a window of them in
 * flight at once (async publishes pipelined on one connection, not one round
 * trip each), and moves the cursor past a row only after its PubAck. A row
 * published again (after a failed window or a crash) carries the same
 * Nats-Msg-Id, and the stream's duplicate window stores it once.
 *
 * NATS being down never stops the daemon: the connection retries forever, the
 * outbox grows meanwhile, and the backlog drains when NATS is back.
 */
import { connect, type JetStreamClient, type KV, type NatsConnection } from 'nats';
import { affectsLatest, type LatestEvent } from '../core/latest-state.js';
import { ageSeconds, epochSeconds as ts, type Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { exponentialBackoff } from '../core/retry-policy.js';
import { eventBody, eventSubject } from '../core/contracts/event.js';
import type { MirrorStatus, MirrorStore, OutboxRow } from '../core/mirror.js';
import type { CommandHandler } from '../core/inbound.js';
import { startCommandConsumer, type CommandConsumer, type CommandConsumerConfig } from './command-consumer.js';
import { LatestCache, openLatestBucket, writeLatestAll } from './latest-kv.js';
import { provisionStream, StreamConflict, type StreamSettings } from './stream-provisioning.js';

export interface MirrorConfig {
  url: string;
  stream: StreamSettings;
  /** KV bucket of each message's latest state; empty: none. */
  latestBucket: string;
  maxInFlight: number;
  /** How long a wake-up waits for more rows to join the window. */
  batchDelayMs: number;
  publishTimeoutMs: number;
  /** How long the start waits for a first connection before going on without one. */
  connectTimeoutMs: number;
  retryInitialMs: number;
  retryMaxMs: number;
  /** Commands over JetStream, when on. */
  commands?: { handler: CommandHandler; consumer: Omit<CommandConsumerConfig, 'stream' | 'subjectPrefix'> };
}

export interface Mirror {
  /** Connects and provisions the stream; throws StreamConflict. Goes on without NATS when it cannot be reached in time. */
  start(): Promise<void>;
  /** New outbox rows were written. */
  wake(): void;
  /** Publishes what is pending now; resolves when the backlog is empty or a publish failed. For tests. */
  tick(): Promise<void>;
  status(): MirrorStatus;
  /** Stops taking commands (intake), leaving the event stream up. Idempotent. */
  stopCommands(): Promise<void>;
  /**
   * Publishes the backlog for up to `graceMs` (what is left stays in the
   * outbox for the next start), then drains the connection and closes it.
   */
  stop(graceMs?: number): Promise<void>;
}

const encoder = new TextEncoder();
/** How long a stop lets the client flush and close before the connection is simply closed. */
const DRAIN_MS = 2000;
const MIN_DRAIN_MS = 100;

/** Waits for `work`, or for `ms`, whichever comes first. */
async function within(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

export function createNatsMirror(deps: { store: MirrorStore; clock: Clock; log: Logger; config: MirrorConfig }): Mirror {
  const { store, clock, log, config } = deps;
  let connection: NatsConnection | null = null;
  let js: JetStreamClient | null = null;
  let latest: KV | null = null;
  let commands: CommandConsumer | null = null;
  const latestCache = new LatestCache();
  let state: MirrorStatus['state'] = 'connecting';
  let publishedTotal = 0;
  let failures = 0;
  let draining: Promise<void> | null = null;
  let again = false;
  let retryTimer: NodeJS.Timeout | null = null;
  let stopping = false;
  let wakeScheduled = false;
  /** Set once commands stop: a connection made later starts no consumer. */
  let commandsStopped: Promise<void> | null = null;

  const latestEvents = (rows: readonly OutboxRow[]): LatestEvent[] =>
    rows.flatMap((row) => (row.messagePk !== null && affectsLatest(row.eventType)
      ? [{ seq: row.seq, eventType: row.eventType, tenantId: row.tenantId, messageId: row.messageId, messagePk: row.messagePk, occurredAt: row.occurredAt }]
      : []));

  /**
   * One window: publish up to maxInFlight rows, bring their messages' latest
   * state up to date, and advance past the acknowledged prefix.
   */
  const publishWindow = async (client: JetStreamClient): Promise<number> => {
    const rows = store.pending(config.maxInFlight);
    if (rows.length === 0) return 0;
    // The latest states are written alongside the events, not after them; the cursor waits for both.
    // A window whose KV writes fail is published again: the stream drops the repeats, the merge ignores them.
    // Settled at once, not when awaited: a KV write that failed while the publishes were still in
    // flight was an unhandled rejection, and the daemon exited on a NATS timeout (found by the soak).
    const kvWrites = (latest === null ? Promise.resolve() : writeLatestAll(latest, latestEvents(rows), latestCache))
      .then(() => null, (error: unknown) => ({ error }));
    const results = await Promise.allSettled(rows.map((row) =>
      client.publish(eventSubject(config.stream.subjectPrefix, row), encoder.encode(eventBody(row)), { msgID: row.id, timeout: config.publishTimeoutMs })));
    const kvFailure = await kvWrites;
    if (kvFailure !== null) throw kvFailure.error;
    const firstFailure = results.findIndex((result) => result.status === 'rejected');
    const acknowledged = firstFailure < 0 ? rows.length : firstFailure;
    const last = rows[acknowledged - 1];
    if (last !== undefined) {
      store.advance(last.seq, clock.now());
      publishedTotal += acknowledged;
    }
    if (firstFailure >= 0) throw (results[firstFailure] as PromiseRejectedResult).reason;
    return rows.length;
  };

  const drain = async (): Promise<void> => {
    do {
      again = false;
      const client = js;
      if (client === null || state === 'conflict' || stopping) return;
      try {
        while ((await publishWindow(client)) === config.maxInFlight && !stopping);
        failures = 0;
      } catch (error) {
        failures += 1;
        const message = (error as Error).message;
        store.failed(message, clock.now());
        const wait = exponentialBackoff(failures, { initialMs: config.retryInitialMs, maxMs: config.retryMaxMs, jitter: 0 }, 0.5);
        log.warn({ err: error, failures, retryInMs: wait }, 'publishing to the event stream failed; retrying');
        retryTimer ??= setTimeout(() => {
          retryTimer = null;
          void tick();
        }, wait);
        retryTimer.unref();
        return;
      }
    } while (again);
  };

  function tick(): Promise<void> {
    if (draining !== null) {
      again = true;
      return draining;
    }
    draining = drain().finally(() => {
      draining = null;
    });
    return draining;
  }

  const provision = async (nc: NatsConnection): Promise<void> => {
    const outcome = await provisionStream(await nc.jetstreamManager(), config.stream);
    log.info({ stream: config.stream.name, outcome }, 'event stream ready');
  };

  /** Follows the connection's life: reconnects are the client's, re-provisioning and the backlog are ours. */
  const watch = async (nc: NatsConnection): Promise<void> => {
    for await (const event of nc.status()) {
      if (event.type === 'disconnect') {
        if (state === 'connected') log.warn({ server: String(event.data) }, 'event stream disconnected; the outbox keeps the events');
        if (state !== 'conflict') state = 'disconnected';
      } else if (event.type === 'reconnect') {
        try {
          await provision(nc);
          state = 'connected';
          log.info({ server: String(event.data) }, 'event stream reconnected');
          void tick();
        } catch (error) {
          state = error instanceof StreamConflict ? 'conflict' : 'disconnected';
          log.error({ err: error }, 'event stream not usable after reconnecting');
        }
      }
    }
  };

  const attach = async (nc: NatsConnection): Promise<void> => {
    connection = nc;
    js = nc.jetstream();
    void watch(nc);
    await provision(nc);
    if (config.latestBucket !== '') latest = await openLatestBucket(js, config.latestBucket, config.stream.replicas);
    if (config.commands !== undefined && commandsStopped === null) {
      commands = await startCommandConsumer(nc, js, config.commands.handler, log.child({ component: 'commands' }), {
        ...config.commands.consumer, stream: config.stream.name, subjectPrefix: config.stream.subjectPrefix,
      });
    }
    state = 'connected';
    void tick();
  };

  const stopCommands = (): Promise<void> => (commandsStopped ??= commands?.stop() ?? Promise.resolve());

  return {
    async start() {
      store.turnOn();
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
      const first = await Promise.race([connecting, new Promise<null>((resolve) => { timer = setTimeout(() => resolve(null), config.connectTimeoutMs); })]);
      clearTimeout(timer);
      if (first !== null) {
        // A conflicting stream found at start refuses the start: the operator sees it at once.
        await attach(first).catch(async (error: unknown) => {
          await first.close();
          throw error;
        });
        return;
      }
      log.warn({ url: config.url }, 'event stream not reachable yet; going on without it and publishing once it is');
      state = 'disconnected';
      void connecting.then(async (nc) => {
        if (stopping) return nc.close();
        await attach(nc).catch((error: unknown) => {
          state = error instanceof StreamConflict ? 'conflict' : 'disconnected';
          log.error({ err: error }, 'event stream not usable');
        });
      });
    },
    // Called as rows are written, inside their transaction: the window is read in a later turn,
    // after the commit, and `batchDelayMs` later so that a window carries many rows (each window
    // costs a read and a cursor write, whatever its size).
    wake() {
      if (wakeScheduled || state !== 'connected') return;
      wakeScheduled = true;
      setTimeout(() => {
        wakeScheduled = false;
        void tick();
      }, config.batchDelayMs).unref();
    },
    tick,
    status() {
      const record = store.record();
      const backlog = store.backlog();
      const now = clock.now();
      return {
        enabled: true,
        state,
        stream: config.stream.name,
        backlog: backlog.count,
        oldest_unpublished_ts: ts(backlog.oldestAt),
        oldest_unpublished_age_seconds: ageSeconds(backlog.oldestAt, now),
        published_total: publishedTotal,
        last_published_ts: ts(record.lastPublishedAt),
        last_error: record.lastError,
        last_error_ts: ts(record.lastErrorAt),
        commands: commands === null ? null : { handled: commands.counts().handled, dead_lettered: commands.counts().deadLettered, waiting: commands.counts().waiting },
      };
    },
    stopCommands,
    async stop(graceMs = 0) {
      const until = Date.now() + graceMs;
      await stopCommands();
      if (state === 'connected' && graceMs > 0) await within(tick(), graceMs);
      stopping = true;
      if (retryTimer !== null) clearTimeout(retryTimer);
      // Draining flushes what the client still buffers; closing also fails a window still
      // waiting for its PubAcks, so that the wait below is short (the window is published again next start).
      const drainMs = Math.min(DRAIN_MS, Math.max(MIN_DRAIN_MS, until - Date.now()));
      if (connection !== null && !connection.isClosed()) await within(connection.drain().catch(() => undefined), drainMs);
      await connection?.close();
      await draining;
    },
  };
}
