import { headers, type NatsConnection } from '@nats-io/nats-core';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNatsServerWithClient } from '../../test/peers/nats-server.js';
import { isNoResponders, isNotFound, isStreamNotFound, isWrongLastSequence } from './nats-errors.js';

let peer: Awaited<ReturnType<typeof startNatsServerWithClient>>;
let nc: NatsConnection;

beforeAll(async () => {
  peer = await startNatsServerWithClient();
  nc = peer.nc;
});

afterAll(() => peer.close());

/** What the promise rejects with; fails the test when it resolves. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('resolved where a rejection was expected');
    },
    (error: unknown) => error,
  );
}

const classify = (error: unknown) => ({
  wrongLast: isWrongLastSequence(error),
  streamNotFound: isStreamNotFound(error),
  notFound: isNotFound(error),
  noResponders: isNoResponders(error),
});
const none = { wrongLast: false, streamNotFound: false, notFound: false, noResponders: false };

describe('NATS error classes, as the server answers them', () => {
  it('reads a KV compare-and-set that lost, by update and by create, as a wrong last sequence', async () => {
    const kv = await new Kvm(nc).create('errors_cas', { history: 1 });
    const first = await kv.create('key', 'one');
    await kv.update('key', 'two', first);
    const stale = await rejection(kv.update('key', 'three', first));
    expect(classify(stale)).toEqual({ ...none, wrongLast: true });
    const again = await rejection(kv.create('key', 'four'));
    expect(classify(again)).toEqual({ ...none, wrongLast: true });
  });

  it('reads a publish whose expected last subject sequence moved as a wrong last sequence', async () => {
    await (await jetstreamManager(nc)).streams.add({ name: 'ERRORS_SEQ', subjects: ['errors.seq.>'] });
    const js = jetstream(nc);
    await js.publish('errors.seq.a', 'one');
    const h = headers();
    h.set('Nats-Expected-Last-Subject-Sequence', '0');
    expect(classify(await rejection(js.publish('errors.seq.a', 'two', { headers: h })))).toMatchObject({
      wrongLast: true,
    });
  });

  it('reads an absent stream as not found, and a message not there as no error at all', async () => {
    const jsm = await jetstreamManager(nc);
    const missing = await rejection(jsm.streams.info('ERRORS_NONE'));
    expect(classify(missing)).toEqual({ ...none, streamNotFound: true, notFound: true });
    expect(classify(await rejection(jsm.streams.getMessage('ERRORS_NONE', { last_by_subj: 'x' })))).toMatchObject({
      notFound: true,
    });
    await jsm.streams.add({ name: 'ERRORS_EMPTY', subjects: ['errors.empty.>'] });
    expect(await jsm.streams.getMessage('ERRORS_EMPTY', { last_by_subj: 'errors.empty.a' })).toBeNull();
  });

  it('reads a request no server subscribes to as no responders, through the wrappers nats.js puts around it', async () => {
    expect(classify(await rejection(nc.request('errors.nobody', 'hello', { timeout: 2000 })))).toEqual({
      ...none,
      noResponders: true,
    });
    // A JetStream publish to a subject no stream takes: nats.js wraps it as JetStream not being enabled.
    expect(classify(await rejection(jetstream(nc).publish('errors.nostream', 'hello')))).toEqual({
      ...none,
      noResponders: true,
    });
  });

  it('reads anything else as none of them', () => {
    expect(classify(new Error('wrong last sequence'))).toEqual(none);
    expect(classify(null)).toEqual(none);
    expect(classify(Object.assign(new Error('TIMEOUT'), { code: '503' }))).toEqual(none);
  });
});
