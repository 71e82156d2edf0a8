/**
 * The fleet's JetStream publisher without nats.js's request machinery, against
 * a real nats-server: each publish settles with its own stream sequence, a
 * subject no stream takes and a stream's refusal reject (the latter as nats.js's
 * own JetStreamApiError), and a server that
 * never answers times out.
 */
import { connect } from '@nats-io/transport-node';
import { headers, type NatsConnection } from '@nats-io/nats-core';
import { JetStreamApiError, jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isWrongLastSequence } from '../../src/nats/index.js';
import { createAckPublisher } from '../../src/outbox/ack-publisher.js';
import { startNatsServer, type NatsPeer } from '../peers/nats-server.js';

let nats: NatsPeer;
let nc: NatsConnection;

beforeAll(async () => {
  nats = await startNatsServer();
  nc = await connect({ servers: nats.url });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'ACKS', subjects: ['acks.>'], max_msg_size: 64 });
});

afterAll(async () => {
  await nc?.close();
  await nats?.destroy();
});

describe('ack publisher', () => {
  it('answers each message its own stream sequence, many in flight at once', async () => {
    const acks = createAckPublisher(nc, 2000);
    try {
      const seqs = await Promise.all(
        Array.from({ length: 200 }, (_, index) =>
          acks.publish(`acks.${index % 7}`, new TextEncoder().encode(String(index))),
        ),
      );
      expect(new Set(seqs).size).toBe(200);
      const stored = await (await jetstreamManager(nc)).streams.getMessage('ACKS', { seq: seqs[57] as number });
      expect(new TextDecoder().decode(stored?.data)).toBe('57');
    } finally {
      acks.close();
    }
  });

  it('rejects a subject no stream takes, and a message the stream refuses, with the reason', async () => {
    const acks = createAckPublisher(nc, 2000);
    try {
      await expect(acks.publish('nowhere.at.all', new Uint8Array([1]))).rejects.toThrow(
        /no acknowledgement from JetStream \(status 503\)/,
      );
      await expect(acks.publish('acks.big', new Uint8Array(1000))).rejects.toThrow(/maximum/i);
    } finally {
      acks.close();
    }
  });

  it("refuses a stale expected sequence with the error nats.js's own publish gives, so one check reads both", async () => {
    const acks = createAckPublisher(nc, 2000);
    try {
      await acks.publish('acks.cas', new Uint8Array([1]));
      const h = headers();
      h.set('Nats-Expected-Last-Subject-Sequence', '0');
      const refused = await acks.publish('acks.cas', new Uint8Array([2]), h).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(JetStreamApiError);
      expect(isWrongLastSequence(refused)).toBe(true);
      expect((refused as Error).message).toMatch(/wrong last sequence/);
    } finally {
      acks.close();
    }
  });

  it('times out a publish nobody answers, and rejects what waits when closed', async () => {
    // A plain subscriber on the subject takes the message and never replies.
    const silent = nc.subscribe('silent.one');
    const acks = createAckPublisher(nc, 300);
    try {
      await expect(acks.publish('silent.one', new Uint8Array([1]))).rejects.toThrow('TIMEOUT');
      const pending = acks.publish('silent.one', new Uint8Array([2]));
      acks.close();
      await expect(pending).rejects.toThrow('closed');
    } finally {
      silent.unsubscribe();
    }
  });
});
