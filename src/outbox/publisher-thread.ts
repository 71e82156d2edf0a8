/**
 * The inside of the mirror's publisher thread (mirror-publisher.thread.ts is
 * its entry): a NATS connection of its own, made at the first window and kept
 * reconnecting for good, as the main thread's is, and the windows published
 * over it (window-publisher.ts). The main thread's connection provisions the
 * stream and the bucket and takes commands; it sends windows only once it has.
 */
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { Kvm, type KV } from '@nats-io/kv';
import { type Logger, errorText } from '../core/index.js';
import { deadline, within } from '../runtime/index.js';
import type { MirrorThreadData, MirrorThreadTask } from './threaded-window-publisher.js';
import { createWindowPublisher, type WindowOutcome } from './window-publisher.js';

const REDIAL_MS = 250;

type Link = { nc: NatsConnection; latest: KV | null };

/** The thread's own NATS connection: dialled at the first window, then kept reconnecting for good. */
function publisherConnection(data: MirrorThreadData, log: Logger) {
  const { url, settings } = data;
  let link: Link | null = null;
  let connecting: Promise<void> | null = null;
  let closed = false;
  /**
   * Whether the connection is up, and who waits for it to be. A publish made while the client
   * reconnects is buffered, and the buffer is dropped at its next dial: a window sent then waited
   * out its whole publish timeout. The main thread's connection may be back before this one
   * (each redials on its own clock), so a window waits for this one instead.
   */
  let up = false;
  const waiting: Array<() => void> = [];
  const follow = async (nc: NatsConnection): Promise<void> => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') up = false;
      else if (status.type === 'reconnect') {
        up = true;
        for (const resolve of waiting.splice(0)) resolve();
      }
    }
  };
  const isUp = (): Promise<void> => (up ? Promise.resolve() : new Promise((resolve) => waiting.push(resolve)));

  const open = (): Promise<void> =>
    (connecting ??= (async () => {
      const nc = await connect({
        servers: url.split(',').map((server) => server.trim()),
        name: 'mailproxy-publisher',
        maxReconnectAttempts: -1,
        // Redials four times as often as the main thread's connection, which paces the windows: back
        // from an outage, this one is usually back first, instead of up to a second after.
        reconnectTimeWait: REDIAL_MS,
        waitOnFirstConnect: true,
        pingInterval: 10_000,
        noAsyncTraces: true,
      });
      if (closed) return void (await nc.close());
      up = true;
      void follow(nc);
      // Bound, not created: the main thread provisioned the bucket before it sent a window.
      const latest = settings.latestBucket === '' ? null : await new Kvm(nc).open(settings.latestBucket);
      link = { nc, latest };
      log.info({}, 'mirror publisher connected');
    })().catch((error: unknown) => {
      connecting = null;
      throw error;
    }));

  return {
    current: (): Link | null => link,
    /** Dialled (the first time) and up. */
    ready: (): Promise<void> => (link === null ? open() : Promise.resolve()).then(isUp),
    /** Drains within `withinMs` (what the client buffers sent, the PubAcks taken on their way), `settles`, then closes. */
    async close(withinMs: number, settle: () => Promise<void>): Promise<void> {
      closed = true;
      const nc = link?.nc;
      if (nc !== undefined && !nc.isClosed())
        await within(
          nc.drain().catch(() => undefined),
          withinMs,
        );
      await settle();
      link = null;
      await nc?.close();
    },
  };
}

/** Answers the thread's tasks: a window's outcome, or null once closed. */
export function publisherThread(
  data: MirrorThreadData,
  log: Logger,
): (task: MirrorThreadTask) => Promise<WindowOutcome | null> {
  const { settings } = data;
  const connection = publisherConnection(data, log);
  const windows = createWindowPublisher(settings, connection.current);
  let turns: Promise<unknown> = Promise.resolve();

  return async (task) => {
    if (task.kind === 'window') {
      // Not connected yet, or reconnecting: the window fails within the publish timeout, as one whose PubAcks do not come.
      // Windows take turns at this wait, so each one's events are issued after the one before's (the stream's order).
      const turn = turns.then(() =>
        deadline(connection.ready(), settings.publishTimeoutMs, 'the mirror publisher connecting to NATS').then(
          () => null,
          errorText,
        ),
      );
      turns = turn;
      const failure = await turn;
      if (failure !== null) return { acknowledged: 0, error: failure };
      return windows.publish(task.window);
    }
    // What still waits once drained fails.
    await connection.close(task.withinMs, () => windows.close(0));
    return null;
  };
}
