/**
 * Fleet membership on real peers: a three-server NATS cluster with JetStream on
 * loopback and three `mailproxy serve` processes, each with its own data
 * directory. Every node sees the others in /status and holds one connection
 * on its main thread (the membership's and the mirror's); a node killed is named
 * missing, one stopped cleanly is named stopped; a node id cannot be taken by
 * a second directory; a nats server SIGKILLed does not cut the nodes off, and
 * a bucket without quorum is logged once when it fails and once when it recovers.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnDaemon, type LogEntry } from '../helpers/daemon-process.js';
import {
  FLEET_TOKEN,
  startFleet,
  untilFleet,
  type FleetStatus,
  type FleetTestNode,
  type TestFleet,
} from '../helpers/fleet.js';
import { api } from '../helpers/test-daemon.js';

let fleet: TestFleet;

const livenessOf = (seen: FleetStatus): Record<string, string> =>
  Object.fromEntries(seen.nodes.map((node) => [node.node_id, node.liveness]));

beforeAll(async () => {
  fleet = await startFleet(['n1', 'n2', 'n3']);
}, 90_000);

afterAll(async () => {
  await fleet?.destroy();
});

describe('fleet membership', () => {
  it('every node sees the three nodes alive, in /status and /ready', async () => {
    for (const node of fleet.nodes) {
      await untilFleet(node.url, (seen) => seen.alive === 3, `${node.id} to see three live nodes`);
    }
    const ready = await api(fleet.nodes[0]!.url, 'GET', '/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.details.fleet).toMatchObject({ node_id: 'n1', connected: true, alive: 3, missing: [] });
    // The data directory keeps its node id.
    expect(JSON.parse(readFileSync(join(fleet.nodes[1]!.cwd, 'data', 'fleet-node.json'), 'utf8'))).toMatchObject({
      node_id: 'n2',
    });
  }, 60_000);

  it('holds one connection per node on the main thread, shared by the membership and the event mirror', async () => {
    // Every client of the cluster, by name, whichever server it landed on.
    const names = (
      await Promise.all(
        fleet.cluster.servers.map(async (server) => {
          const connz = (await (await fetch(`http://127.0.0.1:${server.monitor}/connz?limit=1024`)).json()) as {
            connections?: { name?: string }[];
          };
          return (connz.connections ?? []).map((connection) => connection.name ?? '');
        }),
      )
    ).flat();
    for (const node of fleet.nodes)
      expect(names.filter((name) => name === `mailproxy-fleet-${node.id}`)).toHaveLength(1);
    // The mirror's own connection (named `mailproxy` on a single node) is not dialled; its publisher thread's may be.
    expect(names.filter((name) => name !== 'mailproxy-publisher').sort()).toEqual(
      fleet.nodes.map((node) => `mailproxy-fleet-${node.id}`).sort(),
    );
    // The mirror works over it: its stream was provisioned and it says it is connected.
    for (const node of fleet.nodes) {
      const status = await api(node.url, 'GET', '/status', { token: FLEET_TOKEN });
      expect(status.body.mirror).toMatchObject({ enabled: true, state: 'connected' });
    }
  }, 30_000);

  it('refuses a second data directory under a live node id, and a data directory under another id', async () => {
    const intruder = spawnDaemon(['serve'], { cwd: fleet.tempDir(), env: fleet.env('n1') });
    fleet.running.push(intruder);
    expect((await intruder.exited).code).toBe(1);
    expect(intruder.stderr.join('')).toContain('fleet node id "n1" is held by another running node');

    const renamed = spawnDaemon(['serve'], {
      cwd: fleet.nodes[1]!.cwd,
      env: { ...fleet.env('n9'), MAILPROXY_DATA_DIR: join(fleet.nodes[1]!.cwd, 'data-copy') },
    });
    fleet.running.push(renamed);
    // A fresh directory under a new id is fine; the one that is n2's is not (below, once n2 stops).
    await renamed.waitForLog((entry) => entry.msg === 'ready');
    expect(renamed.entries.map((entry) => entry.msg)).toContain('joined the fleet');
    renamed.child.kill('SIGTERM');
    await renamed.exited;
  }, 60_000);

  it('keeps every node in the fleet when one nats server of three is SIGKILLed', async () => {
    const killedAt = Date.now();
    await fleet.cluster.servers[0]!.kill();
    // Each node's client moves to a surviving server; once the bucket has a new leader (seconds,
    // JetStream's election), every node's heartbeats land again: each node sees all three written since the kill.
    const sinceKill = (seen: FleetStatus): boolean =>
      ['n1', 'n2', 'n3'].every((id) =>
        seen.nodes.some((node) => node.node_id === id && node.seen_ms_ago < Date.now() - killedAt),
      );
    for (const node of fleet.nodes)
      await untilFleet(
        node.url,
        (seen) => seen.connected && sinceKill(seen),
        `${node.id} to see heartbeats after the kill`,
      );
    fleet.cluster.servers[0]!.start();
    await fleet.cluster.ready();
  }, 90_000);

  it('logs a failing heartbeat once with its error, and its recovery with how long, while the bucket has no quorum', async () => {
    // Marked once no node is in a run of failures from before (the server restarted above): each run here starts with its warning.
    const failingNow = (node: FleetTestNode): boolean =>
      node.daemon.entries
        .filter((entry) => ['fleet heartbeat failing', 'fleet heartbeat recovered'].includes(entry.msg))
        .at(-1)?.msg === 'fleet heartbeat failing';
    const deadline = Date.now() + 30_000;
    while (fleet.nodes.some(failingNow)) {
      if (Date.now() > deadline) throw new Error('a node still failing its heartbeats from before');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const marks = new Map(fleet.nodes.map((node) => [node.id, node.daemon.entries.length]));
    const since = (node: FleetTestNode): LogEntry[] => node.daemon.entries.slice(marks.get(node.id));
    const heartbeatLogs = (node: FleetTestNode): LogEntry[] =>
      since(node).filter((entry) => ['fleet heartbeat failing', 'fleet heartbeat recovered'].includes(entry.msg));
    const first = fleet.nodes[0]!;
    // Two servers of three gone: the R3 bucket has no quorum, and every beat fails until they are back.
    await Promise.all([fleet.cluster.servers[0]!.kill(), fleet.cluster.servers[1]!.kill()]);
    const ownSeenMsAgo = (seen: FleetStatus): number =>
      seen.nodes.find((node) => node.node_id === 'n1')?.seen_ms_ago ?? 0;
    // Long enough for several failed beats even when each one waits out a JetStream request timeout (5 s).
    await untilFleet(first.url, (seen) => ownSeenMsAgo(seen) > 12_000, 'n1 to have failed heartbeats for 12 s', 60_000);
    // Still failing: one warning so far, whatever the number of beats that failed.
    expect(heartbeatLogs(first)).toEqual([
      expect.objectContaining({ level: 'warn', msg: 'fleet heartbeat failing', err: expect.anything() }),
    ]);
    expect(since(first).filter((entry) => entry.loop === 'fleet-heartbeat')).toEqual([]);
    for (const server of fleet.cluster.servers) server.start();
    await fleet.cluster.ready();
    await first.daemon.waitForLog((entry) => entry.msg === 'fleet heartbeat recovered' && since(first).includes(entry));
    for (const node of fleet.nodes)
      await untilFleet(
        node.url,
        (seen) => seen.connected && seen.alive === 3,
        `${node.id} to see three live nodes again`,
      );

    for (const node of fleet.nodes) {
      // The loop's own log of a failed run ('loop step failed', once a beat) is not written for the heartbeat.
      expect(since(node).filter((entry) => entry.loop === 'fleet-heartbeat')).toEqual([]);
      // Each run of failures is one warning with the error, then one recovery saying how long it lasted.
      const logs = heartbeatLogs(node);
      logs.forEach((entry, index) => {
        if (index % 2 === 0)
          expect(entry).toMatchObject({ level: 'warn', msg: 'fleet heartbeat failing', err: expect.anything() });
        else
          expect(entry).toMatchObject({
            level: 'info',
            msg: 'fleet heartbeat recovered',
            failingForMs: expect.any(Number),
          });
      });
      expect(logs.length % 2).toBe(0);
    }
    const n1 = heartbeatLogs(first);
    expect(n1.length).toBeGreaterThanOrEqual(2);
    expect(Math.max(...n1.map((entry) => Number(entry.failingForMs ?? 0)))).toBeGreaterThan(5000);
  }, 120_000);

  it('names a killed node missing and a cleanly stopped node stopped', async () => {
    const [first, second, third] = fleet.nodes as [TestFleet['nodes'][0], TestFleet['nodes'][0], TestFleet['nodes'][0]];
    third.daemon.child.kill('SIGKILL');
    await untilFleet(first.url, (seen) => seen.missing.includes('n3'), 'n1 to name n3 missing');

    second.daemon.child.kill('SIGTERM');
    expect((await second.daemon.exited).code).toBe(0);
    const expected = { n1: 'alive', n2: 'stopped', n3: 'missing', n9: 'stopped' };
    await untilFleet(
      first.url,
      (seen) => JSON.stringify(livenessOf(seen)) === JSON.stringify(expected),
      `n1 to see ${JSON.stringify(expected)}`,
    );

    // n2's directory is n2's: started as another node it refuses, with the id to use.
    const renamed = spawnDaemon(['serve'], { cwd: second.cwd, env: fleet.env('n7') });
    fleet.running.push(renamed);
    expect((await renamed.exited).code).toBe(1);
    expect(renamed.stderr.join('')).toContain('this data directory is fleet node "n2", not "n7"');

    // A killed node comes back under its own id at once: the live claim is its own directory's.
    const { url } = await fleet.startNode('n3', { cwd: third.cwd });
    await untilFleet(url, (seen) => livenessOf(seen).n3 === 'alive', 'n3 to be back');
  }, 90_000);
});
