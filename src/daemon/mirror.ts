/**
 * The JetStream event mirror for the daemon: on with `[nats] url`, woken by
 * every outbox row the store writes. Off, every row counts as published.
 */
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { CommandHandler } from '../core/inbound.js';
import type { MirrorStatus } from '../core/mirror.js';
import type { Config } from '../config/index.js';
import { createNatsMirror } from '../outbox/nats-mirror.js';
import type { SqliteStore } from '../store/index.js';

export interface DaemonMirror {
  start(): Promise<void>;
  status(): MirrorStatus;
  /** For tests: publish what is pending now. */
  tick(): Promise<void>;
  /** Stops taking JetStream commands: intake, closed with HTTP and SMTP. */
  stopCommands(): Promise<void>;
  /** Publishes the backlog for up to `graceMs`, then drains and closes the connection. */
  stop(graceMs?: number): Promise<void>;
}

export function createMirror(config: Readonly<Config>, store: SqliteStore, deps: { clock: Clock; log: Logger; commands: CommandHandler }): DaemonMirror {
  const { nats } = config;
  if (nats.url === '') {
    return {
      start: async () => store.mirror.turnOff(),
      status: () => ({ enabled: false, state: 'off', stream: null, backlog: 0, oldest_unpublished_ts: null, oldest_unpublished_age_seconds: null, published_total: 0, last_published_ts: null, last_error: null, last_error_ts: null, commands: null }),
      tick: async () => {},
      stopCommands: async () => {},
      stop: async () => {},
    };
  }
  const mirror = createNatsMirror({
    store: store.mirror,
    clock: deps.clock,
    log: deps.log.child({ component: 'mirror' }),
    config: {
      url: nats.url,
      stream: {
        name: nats.stream,
        subjectPrefix: nats.subject_prefix,
        maxAgeMs: nats.max_age_seconds * 1000,
        maxBytes: nats.max_bytes,
        replicas: nats.replicas,
        duplicateWindowMs: nats.duplicate_window_seconds * 1000,
      },
      latestBucket: nats.kv_bucket,
      maxInFlight: nats.max_in_flight,
      batchDelayMs: nats.batch_delay_ms,
      publishTimeoutMs: nats.publish_timeout_seconds * 1000,
      connectTimeoutMs: nats.connect_timeout_seconds * 1000,
      retryInitialMs: 500,
      retryMaxMs: 30_000,
      ...(nats.commands ? {
        commands: {
          handler: deps.commands,
          consumer: { durable: nats.consumer, maxDeliver: nats.max_deliver, ackWaitMs: nats.ack_wait_seconds * 1000, retryDelayMs: 2000 },
        },
      } : {}),
    },
  });
  store.onEvent(() => mirror.wake());
  return mirror;
}
