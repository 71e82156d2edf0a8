import type { NatsConnection } from '@nats-io/nats-core';
import { afterEach, describe, expect, it } from 'vitest';
import { startNatsServer, type NatsPeer } from '../../test/peers/nats-server.js';
import { NatsConnectionLifecycle, type NatsConnectionEvents } from './connection.js';

const peers: NatsPeer[] = [];
const lifecycles: NatsConnectionLifecycle[] = [];

afterEach(async () => {
  await Promise.all(lifecycles.splice(0).map((lifecycle) => lifecycle.close(100)));
  await Promise.all(peers.splice(0).map((peer) => peer.destroy()));
});

function recorder() {
  const seen: string[] = [];
  const events: NatsConnectionEvents = {
    disconnected: () => void seen.push('disconnected'),
    reconnected: () => void seen.push('reconnected'),
  };
  return { seen, events };
}

async function peer(): Promise<NatsPeer> {
  const started = await startNatsServer();
  peers.push(started);
  return started;
}

function lifecycle(url: string, events: NatsConnectionEvents, connectTimeoutMs = 5000): NatsConnectionLifecycle {
  const made = new NatsConnectionLifecycle({ url, name: 'lifecycle-test', connectTimeoutMs }, events);
  lifecycles.push(made);
  return made;
}

describe('NATS connection lifecycle', () => {
  it('connects within the bound and tells its owner of a lost server and of its return', async () => {
    const server = await peer();
    const { seen, events } = recorder();
    const link = lifecycle(server.url, events);
    const first = await link.open(async () => undefined);
    expect(first).not.toBeNull();
    expect(link.current()).toBe(first);
    await server.stop();
    await expect.poll(() => seen, { timeout: 10_000 }).toContain('disconnected');
    await server.start();
    await expect.poll(() => seen, { timeout: 10_000 }).toEqual(['disconnected', 'reconnected']);
  });

  it('goes on without a server that does not answer in time, and hands over the connection made once it does', async () => {
    const server = await peer();
    await server.stop();
    const link = lifecycle(server.url, recorder().events, 200);
    let late: NatsConnection | null = null;
    expect(await link.open(async (connection) => void (late = connection))).toBeNull();
    expect(link.current()).toBeNull();
    await server.start();
    await expect.poll(() => late, { timeout: 10_000 }).not.toBeNull();
    expect(link.current()).toBe(late);
  });

  it('closes at once a connection made after the stop began', async () => {
    const server = await peer();
    await server.stop();
    const link = lifecycle(server.url, recorder().events, 200);
    let late = false;
    expect(await link.open(async () => void (late = true))).toBeNull();
    link.beginClose();
    expect(link.closing()).toBe(true);
    await server.start();
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(late).toBe(false);
    expect(link.current()).toBeNull();
  });

  it('drains and closes the connection at the stop', async () => {
    const server = await peer();
    const link = lifecycle(server.url, recorder().events);
    const first = await link.open(async () => undefined);
    await link.close(1000);
    expect(first?.isClosed()).toBe(true);
  });
});
