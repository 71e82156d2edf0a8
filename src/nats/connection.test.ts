import type { NatsConnection } from '@nats-io/nats-core';
import { afterEach, describe, expect, it } from 'vitest';
import { startNatsServer, type NatsPeer } from '../../test/peers/nats-server.js';
import { NatsConnectionLifecycle, type NatsConnectionEvents, type NatsConnectionHold } from './connection.js';

const peers: NatsPeer[] = [];
const holds: NatsConnectionHold[] = [];

afterEach(async () => {
  await Promise.all(holds.splice(0).map((hold) => hold.close(100)));
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

async function peer(options: { monitoring?: boolean } = {}): Promise<NatsPeer> {
  const started = await startNatsServer(options);
  peers.push(started);
  return started;
}

function lifecycle(url: string, events: NatsConnectionEvents, connectTimeoutMs = 5000): NatsConnectionHold {
  return holdOn(new NatsConnectionLifecycle({ url, name: 'lifecycle-test', connectTimeoutMs }), events);
}

function holdOn(shared: NatsConnectionLifecycle, events: NatsConnectionEvents): NatsConnectionHold {
  const made = shared.hold(events);
  holds.push(made);
  return made;
}

/** The clients the server lists now, by name. */
async function clientNames(server: NatsPeer): Promise<string[]> {
  const connz = (await (await fetch(`${server.monitorUrl}/connz`)).json()) as { connections?: { name?: string }[] };
  return (connz.connections ?? []).map((connection) => connection.name ?? '');
}

/** The clients the server has seen close, by name (it keeps the most recent ones). */
async function closedClientNames(server: NatsPeer): Promise<string[]> {
  const connz = (await (await fetch(`${server.monitorUrl}/connz?state=closed`)).json()) as {
    connections?: { name?: string }[];
  };
  return (connz.connections ?? []).map((connection) => connection.name ?? '');
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
    const server = await peer({ monitoring: true });
    await server.stop();
    const link = lifecycle(server.url, recorder().events, 200);
    let late = false;
    expect(await link.open(async () => void (late = true))).toBeNull();
    link.beginClose();
    expect(link.closing()).toBe(true);
    await server.start();
    // The client redials within a second once the server is back; the server then lists it as closed.
    await expect.poll(() => closedClientNames(server), { timeout: 10_000 }).toContain('lifecycle-test');
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

  describe('held by two owners', () => {
    it('is one connection: both hear a lost server and its return, the first to let go leaves it to the other', async () => {
      const server = await peer({ monitoring: true });
      const shared = new NatsConnectionLifecycle({ url: server.url, name: 'shared-test', connectTimeoutMs: 5000 });
      const mirror = recorder();
      const fleet = recorder();
      const first = holdOn(shared, fleet.events);
      const second = holdOn(shared, mirror.events);
      const connection = await first.open(async () => undefined);
      expect(connection).not.toBeNull();
      expect(second.current()).toBeNull();
      expect(await second.open(async () => undefined)).toBe(connection);
      expect(await clientNames(server)).toEqual(['shared-test']);
      await server.stop();
      await server.start();
      await expect.poll(() => fleet.seen, { timeout: 10_000 }).toEqual(['disconnected', 'reconnected']);
      await expect.poll(() => mirror.seen, { timeout: 10_000 }).toEqual(['disconnected', 'reconnected']);
      await second.close(1000);
      expect(connection?.isClosed()).toBe(false);
      expect(first.current()).toBe(connection);
      await first.close(1000);
      expect(connection?.isClosed()).toBe(true);
    });

    it('keeps telling one owner when the other’s handler throws', async () => {
      const server = await peer();
      const shared = new NatsConnectionLifecycle({ url: server.url, name: 'shared-test', connectTimeoutMs: 5000 });
      const failing: NatsConnectionEvents = {
        disconnected: () => {
          throw new Error('an owner’s handler failed');
        },
        reconnected: () => {
          throw new Error('an owner’s handler failed');
        },
      };
      const other = recorder();
      const first = holdOn(shared, failing);
      const second = holdOn(shared, other.events);
      await first.open(async () => undefined);
      await second.open(async () => undefined);
      await server.stop();
      await server.start();
      await expect.poll(() => other.seen, { timeout: 10_000 }).toEqual(['disconnected', 'reconnected']);
      await server.stop();
      await server.start();
      await expect
        .poll(() => other.seen, { timeout: 10_000 })
        .toEqual(['disconnected', 'reconnected', 'disconnected', 'reconnected']);
    });

    it('hands a connection made late to each owner waiting for it, and at once to one that opens after', async () => {
      const server = await peer();
      await server.stop();
      const shared = new NatsConnectionLifecycle({ url: server.url, name: 'shared-test', connectTimeoutMs: 200 });
      const first = holdOn(shared, recorder().events);
      const second = holdOn(shared, recorder().events);
      const third = holdOn(shared, recorder().events);
      const late: (NatsConnection | null)[] = [null, null];
      expect(await first.open(async (connection) => void (late[0] = connection))).toBeNull();
      expect(await second.open(async (connection) => void (late[1] = connection))).toBeNull();
      await server.start();
      await expect.poll(() => late[0], { timeout: 10_000 }).not.toBeNull();
      expect(late[1]).toBe(late[0]);
      expect(await third.open(async () => undefined)).toBe(late[0]);
    });

    it('hands no late connection to an owner that stopped, and keeps it for the one still waiting', async () => {
      const server = await peer();
      await server.stop();
      const shared = new NatsConnectionLifecycle({ url: server.url, name: 'shared-test', connectTimeoutMs: 200 });
      const stopping = holdOn(shared, recorder().events);
      const waiting = holdOn(shared, recorder().events);
      let toStopping = false;
      let toWaiting: NatsConnection | null = null;
      expect(await stopping.open(async () => void (toStopping = true))).toBeNull();
      expect(await waiting.open(async (connection) => void (toWaiting = connection))).toBeNull();
      stopping.beginClose();
      await server.start();
      await expect.poll(() => toWaiting, { timeout: 10_000 }).not.toBeNull();
      expect(toStopping).toBe(false);
      expect(toWaiting!.isClosed()).toBe(false);
    });
  });
});
