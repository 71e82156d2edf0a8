/**
 * The JetStream event mirror as the daemon runs it: on when a NATS URL is set,
 * woken by every outbox row the store writes. Off, every row counts as
 * published. Two services: the command consumer stops with intake, the
 * publisher after the work in flight (its last events go out within the time left).
 */
import type { Clock, Logger } from '../core/index.js';
import type { CommandHandler, MirrorStatus, MirrorStore } from '../core/events/index.js';
import type { NatsConnectionLifecycle } from '../nats/index.js';
import type { Service } from '../runtime/index.js';
import { createNatsMirror, type Mirror, type MirrorConfig } from './nats-mirror.js';

const RETRY_INITIAL_MS = 500;
const RETRY_MAX_MS = 30_000;
/** A command that failed for a transient reason is delivered again after this. */
const COMMAND_RETRY_DELAY_MS = 2000;

export interface MirrorSettings extends Omit<MirrorConfig, 'retryInitialMs' | 'retryMaxMs' | 'commands'> {
  commands: { durable: string; maxDeliver: number; ackWaitMs: number } | null;
}

/** The mirror as the daemon and its tests see it (when off, every method is a no-op). */
export type DaemonMirror = Omit<Mirror, 'wake'>;

export interface MirrorService {
  mirror: DaemonMirror;
  /** Refuses the start on a stream that conflicts, before anything is accepted. */
  publishing: Service;
  commands: Service;
}

const OFF: MirrorStatus = {
  enabled: false,
  state: 'off',
  stream: null,
  backlog: 0,
  oldest_unpublished_ts: null,
  oldest_unpublished_age_seconds: null,
  published_total: 0,
  last_published_ts: null,
  last_error: null,
  last_error_ts: null,
  commands: null,
};

export function createMirrorService(
  settings: MirrorSettings | null,
  deps: {
    store: MirrorStore;
    onEvent(listener: () => void): void;
    commands: CommandHandler;
    clock: Clock;
    log: Logger;
    /** The main thread's connection when the mirror shares it (a fleet node's); null: the mirror makes its own. */
    nats: NatsConnectionLifecycle | null;
  },
): MirrorService {
  const mirror: Mirror =
    settings === null
      ? {
          start: async () => deps.store.turnOff(),
          wake: () => {},
          status: () => OFF,
          tick: async () => {},
          stopCommands: async () => {},
          stop: async () => {},
        }
      : createNatsMirror({
          store: deps.store,
          clock: deps.clock,
          log: deps.log.child({ component: 'mirror' }),
          nats: deps.nats ?? undefined,
          config: {
            url: settings.url,
            stream: settings.stream,
            latestBucket: settings.latestBucket,
            latestKeyNode: settings.latestKeyNode ?? null,
            maxInFlight: settings.maxInFlight,
            batchDelayMs: settings.batchDelayMs,
            publisherThread: settings.publisherThread ?? null,
            publishTimeoutMs: settings.publishTimeoutMs,
            connectTimeoutMs: settings.connectTimeoutMs,
            retryInitialMs: RETRY_INITIAL_MS,
            retryMaxMs: RETRY_MAX_MS,
            ...(settings.commands === null
              ? {}
              : {
                  commands: {
                    handler: deps.commands,
                    consumer: { ...settings.commands, retryDelayMs: COMMAND_RETRY_DELAY_MS },
                  },
                }),
          },
        });
  if (settings !== null) deps.onEvent(() => mirror.wake());
  return {
    mirror,
    publishing: { name: 'mirror', start: () => mirror.start(), stop: (budget) => mirror.stop(budget.left() / 2) },
    commands: { name: 'mirror-commands', stop: () => mirror.stopCommands() },
  };
}
