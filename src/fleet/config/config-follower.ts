/**
 * Every node follows the shared configuration bucket and applies each change
 * to its own SQLite as it comes (a KV watch, resumed from the last revision the
 * node applied, so a node that was down catches up at its start). A watch can
 * go quiet for good when the nats server holding its consumer dies: a check
 * every `checkMs` compares the bucket's last revision with what the watch
 * delivered, and starts a new watch when it has stayed behind that long.
 */
import type { QueuedIterator } from '@nats-io/nats-core';
import type { KV, KvEntry } from '@nats-io/kv';
import { isAppError, type Clock, type Logger } from '../../core/index.js';
import type { ConfigEntry, ConfigRows } from '../../core/fleet/index.js';
import { createPeriodicLoop, type Service, within } from '../../runtime/index.js';
import { configEntryOf, openConfigBucket } from './config-bucket.js';
import type { FleetLink } from '../link/fleet-service.js';

/** A check's requests (the bucket's state, a new watch) give up after this long; the next check asks again. */
const CHECK_TIMEOUT_MS = 1000;

export interface ConfigFollowerSettings {
  bucket: string;
  replicas: number;
  /** How often the watch is checked against the bucket (and a lost one replaced). */
  checkMs: number;
  /** How long a start waits to catch up with the bucket before it goes on (and catches up meanwhile). */
  catchUpMs: number;
}

export interface ConfigFollower extends Service {
  /** The bucket once this node has opened it; null before (configuration writes wait for it, bounded). */
  bucket(): KV | null;
  /** Whether this node has joined the fleet and reaches its cluster now. */
  reachable(): boolean;
  /** One check now (tests; the loop checks on its own). */
  tick(): Promise<void>;
}

/** The KV watch over the bucket: applies each entry, remembers the last revision, and answers who waits for one. */
function createConfigWatch(deps: {
  rows: ConfigRows;
  applied(entry: ConfigEntry): void;
  log: Logger;
  stopped(): boolean;
}) {
  const { rows, log } = deps;
  let watch: QueuedIterator<KvEntry> | null = null;
  /** The last revision the watch delivered (or the store had applied at the start). */
  let seen = 0;
  const waiters: Array<{ revision: number; resolve: () => void }> = [];

  const handle = (entry: KvEntry): void => {
    const config = configEntryOf(entry);
    try {
      if (config !== null && rows.apply(config)) {
        deps.applied(config);
        log.info(
          { key: entry.key, revision: entry.revision, origin: config.value.origin },
          'shared configuration applied',
        );
      }
    } catch (error) {
      // The store cannot write now (full, locked): the watch ends here and the next check resumes from this entry.
      if (isAppError(error) && error.transient) throw error;
      // Anything else would fail again: logged and passed over; the object's next change brings it whole.
      log.error(
        { err: error, key: entry.key, revision: entry.revision },
        'could not apply a shared configuration change',
      );
    }
    seen = Math.max(seen, entry.revision);
    for (let index = waiters.length - 1; index >= 0; index -= 1) {
      const waiter = waiters[index] as { revision: number; resolve: () => void };
      if (waiter.revision > seen) continue;
      waiters.splice(index, 1);
      waiter.resolve();
    }
  };

  const consume = async (iterator: QueuedIterator<KvEntry>): Promise<void> => {
    try {
      for await (const entry of iterator) handle(entry);
    } catch (error) {
      if (!deps.stopped()) log.warn({ err: error }, 'shared configuration watch ended; the next check starts another');
    } finally {
      if (watch === iterator) {
        watch = null;
        iterator.stop();
      }
    }
  };

  return {
    seen: () => seen,
    /** Where a start resumes: the last revision the store applied. */
    resumeAt(revision: number): void {
      seen = revision;
    },
    running: () => watch !== null,
    async restart(bucket: KV): Promise<void> {
      watch?.stop();
      watch = null;
      const iterator = await bucket.watch({ key: '>', ...(seen > 0 ? { resumeFromRevision: seen + 1 } : {}) });
      watch = iterator;
      void consume(iterator);
    },
    reached: (revision: number): Promise<void> =>
      revision <= seen ? Promise.resolve() : new Promise((resolve) => waiters.push({ revision, resolve })),
    stop(): void {
      watch?.stop();
      watch = null;
    },
  };
}

/** Runs `opened` until it succeeds once, one run at a time; a run that fails is tried again at the next call. */
function onceOpened(opened: (() => Promise<unknown>) | undefined, log: Logger): () => void {
  let state: 'due' | 'running' | 'done' = opened === undefined ? 'done' : 'due';
  return () => {
    if (state !== 'due' || opened === undefined) return;
    state = 'running';
    opened().then(
      () => (state = 'done'),
      (error: unknown) => {
        state = 'due';
        log.warn({ err: error }, 'could not clean up the shared configuration bucket yet; retrying');
      },
    );
  };
}

export interface ConfigFollowerDeps {
  link: FleetLink;
  rows: ConfigRows;
  applied(entry: ConfigEntry): void;
  /** Once per process, after the bucket is first open and followed (a clean-up of the bucket); tried again at the next check when it fails. */
  opened?: () => Promise<unknown>;
  clock: Clock;
  log: Logger;
}

export function createConfigFollower(settings: ConfigFollowerSettings, deps: ConfigFollowerDeps): ConfigFollower {
  const { rows, log, clock, link } = deps;
  /** The bucket as the checks read it: short API timeouts, so that a request lost in a leader election does not hold the next check back. */
  let kv: KV | null = null;
  /** The bucket as configuration writes use it: JetStream's own timeouts, as a write waits for its replicas. */
  let writer: KV | null = null;
  let behindSince: number | null = null;
  let stopped = false;
  const runOpened = onceOpened(deps.opened, log);
  const watch = createConfigWatch({ rows, applied: deps.applied, log, stopped: () => stopped });
  const startWatch = async (bucket: KV): Promise<void> => {
    await watch.restart(bucket);
    behindSince = null;
  };

  /** Opens the bucket and the watch when needed; replaces a watch that stayed behind. Answers the bucket's last revision. */
  const check = async (): Promise<number | null> => {
    const nc = link.connection();
    // Cut off: nothing to check (and no failed check logged every interval); the watch resumes once the cluster answers.
    if (nc === null || !link.connected() || stopped) return null;
    if (writer === null) writer = await openConfigBucket(nc, settings.bucket, settings.replicas);
    kv ??= await openConfigBucket(nc, settings.bucket, settings.replicas, CHECK_TIMEOUT_MS);
    const last = (await kv.status()).streamInfo.state.last_seq;
    const seen = watch.seen();
    if (!watch.running()) await startWatch(kv);
    else if (last > seen) {
      behindSince ??= clock.now();
      if (clock.now() - behindSince >= settings.checkMs) {
        log.warn({ seen, last }, 'shared configuration watch fell behind; starting another');
        await startWatch(kv);
      }
    } else behindSince = null;
    runOpened();
    return last;
  };

  const loop = createPeriodicLoop({
    name: 'shared-config',
    intervalMs: settings.checkMs,
    log,
    clock,
    run: async () => void (await check()),
  });

  return {
    name: 'shared-config',
    bucket: () => (link.connected() ? writer : null),
    reachable: () => link.connection() !== null && link.connected(),
    async start() {
      watch.resumeAt(rows.lastRevision());
      // Joined at the start: catch up before taking requests (bounded; the rest comes while serving).
      if (link.connection() !== null) {
        const caughtUp = check().then(async (last) => (last === null ? undefined : watch.reached(last)));
        caughtUp.catch((error: unknown) =>
          log.warn({ err: error }, 'could not catch up with the shared configuration yet; retrying'),
        );
        await within(
          caughtUp.catch(() => undefined),
          settings.catchUpMs,
        );
        log.info({ revision: watch.seen() }, 'shared configuration followed');
      }
      loop.start();
    },
    async stop() {
      stopped = true;
      await loop.stop();
      watch.stop();
    },
    tick: () => loop.tick(),
  };
}
