/** The mirror's settings, as the composition gives them (config/settings.ts reads them from `[nats]`). */
import type { CommandHandler } from '../core/events/index.js';
import type { CommandConsumerConfig } from './command-consumer.js';
import type { StreamSettings } from './stream-provisioning.js';

export interface MirrorConfig {
  url: string;
  stream: StreamSettings;
  /** KV bucket of each message's latest state; empty: none. */
  latestBucket: string;
  /** A fleet node's id, in every latest-state key (its pks are its own); null on a single node. */
  latestKeyNode?: string | null;
  maxInFlight: number;
  /** How long a wake-up waits for more rows to join the window. */
  batchDelayMs: number;
  publishTimeoutMs: number;
  /** How long the start waits for a first connection before going on without one. */
  connectTimeoutMs: number;
  retryInitialMs: number;
  retryMaxMs: number;
  /**
   * Publishes and latest-state writes in a thread of their own, on a connection of its own
   * (mirror-publisher.thread.ts), with its log level; absent or null: on the main thread.
   */
  publisherThread?: { logLevel: string } | null;
  /** Commands over JetStream, when on. */
  commands?: { handler: CommandHandler; consumer: Omit<CommandConsumerConfig, 'stream' | 'subjectPrefix'> };
}
