/**
 * Fleet membership on real peers: a three-server NATS cluster with JetStream on
 * loopback and three `mailproxy serve` processes, each with its own data
 * directory. Every node sees the others in /status; a node killed is named
 * missing, one stopped cleanly is named stopped; a node id cannot be taken by
 * a second directory; a nats server SIGKILLed does not cut the nodes off.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveUntilListening, spawnDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { api } from '../helpers/test-daemon.js';
import { startNatsCluster, type NatsCluster } from '../peers/nats-cluster.js';

const TOKEN = 'fleet-test-admin-token-0123456789abcdef';
const dirs: string[] = [];
const running: DaemonProcess[] = [];
let cluster: NatsCluster;

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mailproxy-fleet-'));
  dirs.push(dir);
  return dir;
}

const fleetEnv = (nodeId: string): Record<string, string> => ({
  MAILPROXY_HTTP_LISTEN: '127.0.0.1:0',
  MAILPROXY_HTTP_ADMIN_TOKEN: TOKEN,
  MAILPROXY_NATS_URL: cluster.urls,
  MAILPROXY_NATS_REPLICAS: '3',
  MAILPROXY_FLEET_ENABLED: 'true',
  MAILPROXY_FLEET_NODE_ID: nodeId,
  MAILPROXY_FLEET_HEARTBEAT_SECONDS: '0.25',
  MAILPROXY_FLEET_NODE_TIMEOUT_SECONDS: '1.5',
});

interface FleetNode {
  node_id: string;
  liveness: string;
}

async function fleetOf(url: string): Promise<{ connected: boolean; nodes: FleetNode[]; missing: string[] }> {
  const response = await api(url, 'GET', '/status', { token: TOKEN });
  expect(response.status).toBe(200);
  return response.body.fleet;
}

/**
 * Polls a node's /status until its view of the fleet satisfies `check` (heartbeats are periodic).
 * Generous: a nats server killed under the bucket's stream leader stalls KV writes until JetStream
 * elects another, measured here from under a second to over 15 s on a loaded 2-core machine.
 */
async function untilFleet(url: string, check: (fleet: Awaited<ReturnType<typeof fleetOf>>) => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 40_000;
  for (;;) {
    if (check(await fleetOf(url))) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(await fleetOf(url))}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const livenessOf = (fleet: { nodes: FleetNode[] }): Record<string, string> => Object.fromEntries(fleet.nodes.map((node) => [node.node_id, node.liveness]));

const nodes: Array<{ id: string; cwd: string; url: string; daemon: DaemonProcess }> = [];

beforeAll(async () => {
  cluster = await startNatsCluster();
  for (const id of ['n1', 'n2', 'n3']) {
    const cwd = tempDir();
    const { daemon, url } = await serveUntilListening(cwd, fleetEnv(id), running);
    nodes.push({ id, cwd, url, daemon });
  }
}, 60_000);

afterAll(async () => {
  for (const daemon of running) if (daemon.child.exitCode === null) daemon.child.kill('SIGKILL');
  await cluster?.destroy();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('fleet membership', () => {
  it('every node sees the three nodes alive, in /status and /ready', async () => {
    for (const node of nodes) {
      await untilFleet(node.url, (fleet) => fleet.nodes.filter((seen) => seen.liveness === 'alive').length === 3, `${node.id} to see three live nodes`);
    }
    const ready = await api(nodes[0]!.url, 'GET', '/ready');
    expect(ready.status).toBe(200);
    expect(ready.body.details.fleet).toMatchObject({ node_id: 'n1', connected: true, alive: 3, missing: [] });
    // The data directory keeps its node id.
    expect(JSON.parse(readFileSync(join(nodes[1]!.cwd, 'data', 'fleet-node.json'), 'utf8'))).toMatchObject({ node_id: 'n2' });
  }, 60_000);

  it('refuses a second data directory under a live node id, and a data directory under another id', async () => {
    const intruder = spawnDaemon(['serve'], { cwd: tempDir(), env: fleetEnv('n1') });
    running.push(intruder);
    expect((await intruder.exited).code).toBe(1);
    expect(intruder.stderr.join('')).toContain('fleet node id "n1" is held by another running node');

    const renamed = spawnDaemon(['serve'], { cwd: nodes[1]!.cwd, env: { ...fleetEnv('n9'), MAILPROXY_DATA_DIR: join(nodes[1]!.cwd, 'data-copy') } });
    running.push(renamed);
    // A fresh directory under a new id is fine; the one that is n2's is not (below, once n2 stops).
    await renamed.waitForLog((entry) => entry.msg === 'ready');
    expect(renamed.entries.map((entry) => entry.msg)).toContain('joined the fleet');
    renamed.child.kill('SIGTERM');
    await renamed.exited;
  }, 60_000);

  it('keeps every node in the fleet when one nats server of three is SIGKILLed', async () => {
    const killedAt = Date.now();
    await cluster.servers[0]!.kill();
    // Each node's client moves to a surviving server; once the bucket has a new leader (seconds,
    // JetStream's election), every node's heartbeats land again: each node sees all three written since the kill.
    const sinceKill = (fleet: { nodes: Array<FleetNode & { seen_ms_ago: number }> }): boolean =>
      ['n1', 'n2', 'n3'].every((id) => fleet.nodes.some((node) => node.node_id === id && node.seen_ms_ago < Date.now() - killedAt));
    for (const node of nodes)
      await untilFleet(node.url, (fleet) => fleet.connected && sinceKill(fleet as never), `${node.id} to see heartbeats after the kill`);
    cluster.servers[0]!.start();
    await cluster.ready();
  }, 90_000);

  it('names a killed node missing and a cleanly stopped node stopped', async () => {
    const [first, second, third] = nodes as [(typeof nodes)[0], (typeof nodes)[0], (typeof nodes)[0]];
    third.daemon.child.kill('SIGKILL');
    await untilFleet(first.url, (fleet) => fleet.missing.includes('n3'), 'n1 to name n3 missing');

    second.daemon.child.kill('SIGTERM');
    expect((await second.daemon.exited).code).toBe(0);
    const expected = { n1: 'alive', n2: 'stopped', n3: 'missing', n9: 'stopped' };
    await untilFleet(first.url, (fleet) => JSON.stringify(livenessOf(fleet)) === JSON.stringify(expected), `n1 to see ${JSON.stringify(expected)}`);

    // n2's directory is n2's: started as another node it refuses, with the id to use.
    const renamed = spawnDaemon(['serve'], { cwd: second.cwd, env: fleetEnv('n7') });
    running.push(renamed);
    expect((await renamed.exited).code).toBe(1);
    expect(renamed.stderr.join('')).toContain('this data directory is fleet node "n2", not "n7"');

    // A killed node comes back under its own id at once: the live claim is its own directory's.
    const { url } = await serveUntilListening(third.cwd, fleetEnv('n3'), running);
    await untilFleet(url, (fleet) => livenessOf(fleet).n3 === 'alive', 'n3 to be back');
  }, 90_000);
});
