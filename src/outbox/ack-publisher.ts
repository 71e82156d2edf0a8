/**
 * JetStream publishes without nats.js's request machinery: each message is a
 * core publish whose reply subject is one token under a single inbox
 * subscription, and the PubAck (or the stream's error) settles it. nats.js's
 * `js.publish` builds a headers object, a timer and, once it completes, an
 * Error with a stack trace per message (RequestOne.cancel), `noAsyncTraces`
 * or not: at the mirror's and the fleet spool's rates that was a large share
 * of a node's main thread. Deadlines are swept twice a second rather than
 * timed one by one.
 */
import { createInbox, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/nats-core';
import { JetStreamApiError } from '@nats-io/jetstream';
import { pubAckCodec } from './wire-schemas.js';

const SWEEP_MS = 500;

interface Waiting {
  resolve: (seq: number) => void;
  reject: (error: Error) => void;
  deadline: number;
}

export interface AckPublisher {
  /**
   * Publishes to a stream's subject (with JetStream's headers: Nats-Msg-Id, an expected last
   * sequence); resolves with the stream sequence once the stream acknowledges it.
   */
  publish(subject: string, data: Uint8Array, headers?: MsgHdrs): Promise<number>;
  close(): void;
}

export function createAckPublisher(nc: NatsConnection, timeoutMs: number): AckPublisher {
  const prefix = `${createInbox()}.`;
  const waiting = new Map<string, Waiting>();
  let next = 0;

  const settle = (token: string, data: Uint8Array, status: string | undefined): void => {
    const entry = waiting.get(token);
    if (entry === undefined) return;
    waiting.delete(token);
    // An empty reply is a status: 503 when no stream listens on the subject (or none has a leader yet).
    if (data.length === 0)
      return entry.reject(new Error(`no acknowledgement from JetStream (status ${status ?? 'none'})`));
    const read = pubAckCodec.read(data);
    if (!read.ok) return entry.reject(read.error);
    const ack = read.value;
    // The error nats.js's own publish rejects with, so that one check reads both (a lost compare-and-set).
    if (ack.error !== undefined)
      entry.reject(
        new JetStreamApiError({
          code: ack.error.code ?? 0,
          err_code: ack.error.err_code ?? 0,
          description: ack.error.description ?? 'JetStream refused the message',
        }),
      );
    else if (typeof ack.seq === 'number') entry.resolve(ack.seq);
    else entry.reject(new Error('a JetStream acknowledgement without a sequence'));
  };

  const subscription: Subscription = nc.subscribe(`${prefix}*`, {
    callback: (error, message) => {
      if (error !== null) return;
      settle(message.subject.slice(prefix.length), message.data, message.headers?.code?.toString());
    },
  });

  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [token, entry] of waiting) {
      if (entry.deadline > now) continue;
      waiting.delete(token);
      entry.reject(Object.assign(new Error('TIMEOUT'), { code: 'TIMEOUT' }));
    }
  }, SWEEP_MS);
  sweep.unref();

  return {
    publish(subject, data, headers) {
      next += 1;
      const token = next.toString(36);
      return new Promise((resolve, reject) => {
        waiting.set(token, { resolve, reject, deadline: Date.now() + timeoutMs });
        try {
          nc.publish(
            subject,
            data,
            headers === undefined ? { reply: `${prefix}${token}` } : { reply: `${prefix}${token}`, headers },
          );
        } catch (error) {
          waiting.delete(token);
          reject(error as Error);
        }
      });
    },
    close() {
      clearInterval(sweep);
      subscription.unsubscribe();
      for (const entry of waiting.values()) entry.reject(new Error('closed'));
      waiting.clear();
    },
  };
}
