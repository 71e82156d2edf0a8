/**
 * The JetStream mirror: publishes outbox rows in order, a window of them in
 * flight at once, and moves the cursor past a row only after its PubAck
 * (outbox-publisher.ts), over a connection that NATS being down never stops
 * (mirror-connection.ts). It runs on the wakeable loop: woken by new outbox
 * rows, by the connection becoming usable, and by a timer after a failure.
 */
import { ageSeconds, epochSeconds as ts, type Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { MirrorStatus, MirrorStore } from '../core/mirror.js';
import { createWakeableLoop, type StepReport } from '../runtime/wakeable-loop.js';
import { within } from '../runtime/within.js';
import type { MirrorConfig } from './mirror-config.js';
import { createMirrorConnection } from './mirror-connection.js';
import { createOutboxPublisher } from './outbox-publisher.js';

export type { MirrorConfig } from './mirror-config.js';

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

export function createNatsMirror(deps: { store: MirrorStore; clock: Clock; log: Logger; config: MirrorConfig }): Mirror {
  const { store, clock, log, config } = deps;
  const publisher = createOutboxPublisher({ store, clock, log, config: { ...config, subjectPrefix: config.stream.subjectPrefix } });
  const link = createMirrorConnection({ config, log, onUsable: () => void loop.tick() });
  const step = async (): Promise<StepReport> => {
    const nc = link.connection();
    if (nc === null || loop.isStopped()) return { nextWakeAt: null };
    return publisher.drain(nc, link.latest(), loop.isStopped);
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
    status() {
      const record = store.record();
      const backlog = store.backlog();
      const commands = link.commands()?.counts() ?? null;
      return {
        enabled: true,
        state: link.state(),
        stream: config.stream.name,
        backlog: backlog.count,
        oldest_unpublished_ts: ts(backlog.oldestAt),
        oldest_unpublished_age_seconds: ageSeconds(backlog.oldestAt, clock.now()),
        published_total: publisher.publishedTotal(),
        last_published_ts: ts(record.lastPublishedAt),
        last_error: record.lastError,
        last_error_ts: ts(record.lastErrorAt),
        commands: commands === null ? null : { handled: commands.handled, dead_lettered: commands.deadLettered, waiting: commands.waiting },
      };
    },
    stopCommands: link.stopCommands,
    async stop(graceMs = 0) {
      const until = Date.now() + graceMs;
      await link.stopCommands();
      if (link.state() === 'connected' && graceMs > 0) await within(loop.tick(), graceMs);
      const halted = loop.stop();
      await link.close(until);
      await halted;
    },
  };
}
