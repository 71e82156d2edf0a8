import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNatsServerWithClient } from '../../test/peers/nats-server.js';
import { bucketKeys } from './kv-keys.js';

let peer: Awaited<ReturnType<typeof startNatsServerWithClient>>;
let nc: NatsConnection;

beforeAll(async () => {
  peer = await startNatsServerWithClient();
  nc = peer.nc;
});
afterAll(() => peer.close());

describe('a bucket’s keys from its stream’s subjects', () => {
  it('lists the keys under a filter, deleted ones included, and leaves no consumer behind', async () => {
    const kv = await new Kvm(nc).create('keys_test', { history: 1 });
    await kv.put('nodes.n1', 'a');
    await kv.put('nodes.n2', 'b');
    await kv.put('spools.n1.x', 'c');
    await kv.delete('nodes.n2');

    const keys = bucketKeys(nc, 'keys_test');
    expect((await keys('nodes.>')).sort()).toEqual(['nodes.n1', 'nodes.n2']);
    expect(await keys('spools.>')).toEqual(['spools.n1.x']);
    expect(await keys('none.>')).toEqual([]);
    expect((await kv.get('nodes.n2'))?.operation).toBe('DEL');

    const info = await (await jetstreamManager(nc)).streams.info('KV_keys_test');
    expect(info.state.consumer_count).toBe(0);
  });
});
