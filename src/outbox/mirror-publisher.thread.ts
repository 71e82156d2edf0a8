/**
 * Worker-thread entry (started from threaded-window-publisher.ts): the mirror's
 * publishes and latest-state writes on a NATS connection of their own
 * (outbox/publisher-thread.ts), so that the PubAcks and their protocol work
 * leave the main thread, which reads the rows and moves the cursor.
 */
import { workerData } from 'node:worker_threads';
import { publisherThread } from './publisher-thread.js';
import type { MirrorThreadData, MirrorThreadTask } from './threaded-window-publisher.js';
import type { WindowOutcome } from './window-publisher.js';
import { serveTasks, threadLogger } from '../runtime/index.js';

const data = workerData as MirrorThreadData;
serveTasks<MirrorThreadTask, WindowOutcome | null>(
  publisherThread(data, threadLogger(data.logLevel, { component: 'mirror', thread: 'publisher' })),
);
