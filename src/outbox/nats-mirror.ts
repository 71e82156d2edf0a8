/**
 * The JetStream mirror: publishes outbox rows in order, a window of them in
 * flight at once, and moves the cursor past a row only after its PubAck
 * (outbox-publisher.ts), over a connection that NATS being down never stops
 * (mirror-connection.ts). It runs on the wakeable loop: woken by new outbox
 * rows, by the connection becoming usable, and by a timer after a failure.
 */
import { ageSeconds, epochSeconds as ts, type Clock, type Logger } from '../core/index.js';
import type { MirrorStatus, MirrorStore } from '../core/events/index.js';
import { createWakeableLoop, type StepReport, within } from '../runtime/index.js';
import type { NatsConnectionLifecycle } from '../nats/index.js';
import type { MirrorConfig } from './mirror-config.js';
import { createMirrorConnection, type MirrorConnection } from './mirror-connection.js';
import { createOutboxPublisher } from './outbox-publisher.js';
import { createThreadedWindowPublisher } from './threaded-window-publisher.js';
import { createWindowPublisher, type WindowPublisher } from './window-publisher.js';

export type { MirrorConfig } from './mirror-config.js';

/** The least a stop gives the publisher's own connection to drain. */
const MIN_CLOSE_MS = 100;

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

export function createNatsMirror(deps: {
  store: MirrorStore;
  clock: Clock;
  log: Logger;
  config: MirrorConfig;
  /** The main thread's connection when another owner shares it (a fleet node's); absent: the mirror makes its own. */
  nats?: NatsConnectionLifecycle | undefined;
}): Mirror {
  const { store, clock, log, config } = deps;
  const publisher = createOutboxPublisher({
    store,
    clock,
    log,
    config: { ...config, subjectPrefix: config.stream.subjectPrefix },
  });
  const link = createMirrorConnection({ config, log, onUsable: () => void loop.tick(), nats: deps.nats });
  const windowSettings = {
    latestBucket: config.latestBucket,
    latestKeyNode: config.latestKeyNode ?? null,
    publishTimeoutMs: config.publishTimeoutMs,
  };
  // The wire side of each window: in the mirror's own thread (its own connection), or on this
  // thread's connection. Made at the first window, so that a mirror that never connects starts no thread.
  let wire: WindowPublisher | null = null;
  const thread = config.publisherThread ?? null;
  const wireOf = (): WindowPublisher =>
    (wire ??=
      thread === null
        ? createWindowPublisher(windowSettings, () => {
            const nc = link.connection();
            return nc === null ? null : { nc, latest: link.latest() };
          })
        : createThreadedWindowPublisher({ url: config.url, settings: windowSettings, logLevel: thread.logLevel }, log));
  const step = async (): Promise<StepReport> => {
    if (link.connection() === null || loop.isStopped()) return { nextWakeAt: null };
    return publisher.drain(wireOf(), loop.isStopped);
  };
  // Woken as rows are written, inside their transaction: the window is read in a later turn,
  // after the commit, and `batchDelayMs` later so that a window carries many rows (each window
  // costs a read and a cursor write, whatever its size).
  const loop = createWakeableLoop({
    name: 'mirror',
    step,
    recover: (_error, now) => ({ nextWakeAt: now + config.retryInitialMs }),
    clock,
    log,
    wakeDelayMs: config.batchDelayMs,
  });

  return {
    async start() {
      store.turnOn();
      loop.start(null);
      await link.open();
    },
    wake: () => (link.state() === 'connected' ? loop.wake() : undefined),
    tick: async () => {
      await loop.tick();
    },
    status: () => mirrorStatus(store, link, publisher, config, clock.now()),
    stopCommands: () => link.stopCommands(),
    async stop(graceMs = 0) {
      const until = Date.now() + graceMs;
      await link.stopCommands();
      if (link.state() === 'connected' && graceMs > 0) await within(loop.tick(), graceMs);
      const halted = loop.stop();
      // Each connection drains (what it buffers goes out, PubAcks on their way come in) before a window still waiting fails.
      await link.close(until);
      await wire?.close(Math.max(MIN_CLOSE_MS, until - Date.now()));
      await halted;
    },
  };
}

/** What GET /status says of the mirror: its link, its backlog and what it published. */
function mirrorStatus(
  store: MirrorStore,
  link: MirrorConnection,
  publisher: Pick<ReturnType<typeof createOutboxPublisher>, 'publishedTotal'>,
  config: MirrorConfig,
  now: number,
): MirrorStatus {
  const record = store.record();
  const backlog = store.backlog();
  const commands = link.commands()?.counts() ?? null;
  return {
    enabled: true,
    state: link.state(),
    stream: config.stream.name,
    backlog: backlog.count,
    oldest_unpublished_ts: ts(backlog.oldestAt),
    oldest_unpublished_age_seconds: ageSeconds(backlog.oldestAt, now),
    published_total: publisher.publishedTotal(),
    last_published_ts: ts(record.lastPublishedAt),
    last_error: record.lastError,
    last_error_ts: ts(record.lastErrorAt),
    commands:
      commands === null
        ? null
        : { handled: commands.handled, dead_lettered: commands.deadLettered, waiting: commands.waiting },
  };
}
