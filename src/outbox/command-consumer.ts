/**
 * Commands over JetStream: a durable pull consumer on
 * `<prefix>.commands.>` with explicit acks, one command at a time.
 *
 *   done or duplicate  -> ack
 *   poison             -> published to `<prefix>.dlq.<tenant_id>` with the reason, then ack
 *   transient failure  -> nak with a delay: JetStream redelivers; at the last
 *                         allowed delivery it goes to the DLQ instead
 */
import { headers as natsHeaders, nanos, type NatsConnection } from '@nats-io/nats-core';
import {
  jetstreamManager,
  AckPolicy,
  DeliverPolicy,
  type Consumer,
  type JetStreamClient,
  type JsMsg,
} from '@nats-io/jetstream';
import type { Logger } from '../core/index.js';
import { parseCommandSubject, type CommandHandler } from '../core/events/index.js';

export interface CommandConsumerConfig {
  stream: string;
  subjectPrefix: string;
  durable: string;
  maxDeliver: number;
  ackWaitMs: number;
  /** Wait before a transient failure is delivered again. */
  retryDelayMs: number;
}

export interface CommandConsumer {
  stop(): Promise<void>;
  /** Commands handled since the start, how many went to the DLQ, and how many wait (as of the last look, every few seconds). */
  counts(): { handled: number; deadLettered: number; waiting: number | null };
}

const encoder = new TextEncoder();
const MAX_DLQ_BODY = 64 * 1024;
const LAG_INTERVAL_MS = 5000;

/** The durable pull consumer on the command subjects, made (or kept) as configured. */
async function commandConsumer(
  nc: NatsConnection,
  js: JetStreamClient,
  config: CommandConsumerConfig,
): Promise<Consumer> {
  const jsm = await jetstreamManager(nc);
  await jsm.consumers.add(config.stream, {
    durable_name: config.durable,
    filter_subject: `${config.subjectPrefix}.commands.>`,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    max_deliver: config.maxDeliver,
    ack_wait: nanos(config.ackWaitMs),
  });
  return js.consumers.get(config.stream, config.durable);
}

/** The consumer's lag, for status: asked of the server now and then, not per command. */
function watchLag(consumer: Consumer): { waiting(): number | null; stop(): void } {
  let waiting: number | null = null;
  const lagTimer = setInterval(() => {
    consumer.info(true).then(
      (info) => {
        waiting = info.num_pending + info.num_ack_pending;
      },
      () => {
        waiting = null;
      },
    );
  }, LAG_INTERVAL_MS);
  lagTimer.unref();
  return { waiting: () => waiting, stop: () => clearInterval(lagTimer) };
}

/** Publishes a command that will not be handled to `<prefix>.dlq.<tenant_id>`, with why and as much of it as fits. */
async function publishDeadLetter(
  js: JetStreamClient,
  config: CommandConsumerConfig,
  message: JsMsg,
  tenantId: string,
  code: string,
  reason: string,
): Promise<void> {
  const h = natsHeaders();
  h.set('Mailproxy-Dlq-Reason', code);
  const body = new TextDecoder().decode(message.data.subarray(0, MAX_DLQ_BODY));
  await js.publish(
    `${config.subjectPrefix}.dlq.${tenantId}`,
    encoder.encode(
      JSON.stringify({
        code,
        reason,
        subject: message.subject,
        stream_seq: message.seq,
        deliveries: message.info.deliveryCount,
        nats_msg_id: message.headers?.get('Nats-Msg-Id') || null,
        body,
        body_truncated: message.data.length > MAX_DLQ_BODY,
      }),
    ),
    { headers: h, msgID: `dlq-${config.stream}-${message.seq}` },
  );
}

/** Handles one delivered command: acks, dead-letters or naks it, and counts what it did. */
function createCommandHandling(
  js: JetStreamClient,
  handle: CommandHandler,
  log: Logger,
  config: CommandConsumerConfig,
) {
  let handled = 0;
  let deadLettered = 0;

  const deadLetter = async (message: JsMsg, tenantId: string, code: string, reason: string): Promise<void> => {
    await publishDeadLetter(js, config, message, tenantId, code, reason);
    deadLettered += 1;
    log.warn({ subject: message.subject, code, reason }, 'command sent to the dead-letter subject');
  };

  const handleMessage = async (message: JsMsg): Promise<void> => {
    const target = parseCommandSubject(config.subjectPrefix, message.subject);
    if (target === null) {
      // Not a command of ours: nothing to act on and no tenant to file it under but the subject's.
      const tenant = message.subject.split('.')[config.subjectPrefix.split('.').length + 1] ?? 'unknown';
      await deadLetter(
        message,
        /^[A-Za-z0-9_-]{1,64}$/.test(tenant) ? tenant : 'unknown',
        'UNKNOWN_COMMAND',
        `no command at ${message.subject}`,
      );
      message.ack();
      return;
    }
    const inboxId = message.headers?.get('Nats-Msg-Id') || `seq:${message.seq}`;
    try {
      const outcome = await handle({
        inboxId,
        subject: message.subject,
        tenantId: target.tenantId,
        command: target.command,
        body: message.data,
      });
      if (outcome.kind === 'poison') await deadLetter(message, target.tenantId, outcome.code, outcome.reason);
      handled += 1;
      message.ack();
    } catch (error) {
      if (message.info.deliveryCount >= config.maxDeliver) {
        await deadLetter(
          message,
          target.tenantId,
          'GAVE_UP',
          `still failing after ${config.maxDeliver} deliveries: ${(error as Error).message}`,
        );
        message.term();
        return;
      }
      log.warn(
        { err: error, subject: message.subject, deliveries: message.info.deliveryCount },
        'command failed for now; it will be delivered again',
      );
      message.nak(config.retryDelayMs);
    }
  };

  return { handleMessage, handled: () => handled, deadLettered: () => deadLettered };
}

export async function startCommandConsumer(
  nc: NatsConnection,
  js: JetStreamClient,
  handle: CommandHandler,
  log: Logger,
  config: CommandConsumerConfig,
): Promise<CommandConsumer> {
  const consumer = await commandConsumer(nc, js, config);
  const messages = await consumer.consume({ max_messages: 64 });
  const handling = createCommandHandling(js, handle, log, config);
  const lag = watchLag(consumer);

  const loop = (async () => {
    for await (const message of messages) {
      try {
        await handling.handleMessage(message);
      } catch (error) {
        // Publishing to the DLQ failed (NATS away): leave the command unacknowledged, it comes again.
        log.error({ err: error, subject: message.subject }, 'command not handled');
        message.nak(config.retryDelayMs);
      }
    }
  })();

  return {
    async stop() {
      lag.stop();
      messages.stop();
      await loop;
    },
    counts: () => ({ handled: handling.handled(), deadLettered: handling.deadLettered(), waiting: lag.waiting() }),
  };
}
