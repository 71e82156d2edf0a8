/**
 * A fleet on real peers for the fleet tests: a three-server NATS cluster with
 * JetStream on loopback and `mailproxy serve` processes, each with its own
 * data directory and node id, all on random ports. One setup for every fleet
 * test file, so that each says only what it checks.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { expect } from 'vitest';
import { startNatsCluster, type NatsCluster } from '../peers/nats-cluster.mjs';
import { serveUntilListening, type DaemonProcess } from './daemon-process.js';
import { api } from './test-daemon.js';

export const FLEET_TOKEN = 'fleet-test-admin-token-0123456789abcdef';
/** Every node of a fleet shares the secret key (README, fleet mode): it seals the accounts' passwords in the shared configuration. */
export const FLEET_SECRET_KEY = Buffer.alloc(32, 42).toString('base64');

export interface FleetNodeSeen {
  node_id: string;
  liveness: string;
  seen_ms_ago: number;
}

export interface FleetStatus {
  node_id: string;
  connected: boolean;
  nodes: FleetNodeSeen[];
  alive: number;
  missing: string[];
}

export interface FleetTestNode {
  id: string;
  /** The daemon's working directory; its data directory is `data/` under it. */
  cwd: string;
  url: string;
  daemon: DaemonProcess;
  /** The SMTP listener's port (random). */
  smtpPort: number;
}

export interface TestFleet {
  cluster: NatsCluster;
  nodes: FleetTestNode[];
  /** Every daemon ever started (teardown kills those still running). */
  running: DaemonProcess[];
  /** The environment of a node: fast heartbeats, the cluster, the admin token; `extra` on top. */
  env(nodeId: string, extra?: Record<string, string>): Record<string, string>;
  /** A fresh working directory, removed at teardown. */
  tempDir(): string;
  /** Starts (or restarts, in its own directory) a node and waits until its API listens. */
  startNode(nodeId: string, options?: { cwd?: string; env?: Record<string, string> }): Promise<FleetTestNode>;
  destroy(): Promise<void>;
}

/** Starts the cluster, then one daemon per node id, and waits until every node sees all of them alive. */
export async function startFleet(
  nodeIds: string[] = ['n1', 'n2', 'n3'],
  extraEnv: Record<string, string> = {},
): Promise<TestFleet> {
  const cluster = await startNatsCluster();
  const dirs: string[] = [];
  const running: DaemonProcess[] = [];
  const nodes: FleetTestNode[] = [];
  const env = (nodeId: string, extra: Record<string, string> = {}): Record<string, string> => ({
    MAILPROXY_HTTP_LISTEN: '127.0.0.1:0',
    MAILPROXY_HTTP_ADMIN_TOKEN: FLEET_TOKEN,
    MAILPROXY_NATS_URL: cluster.urls,
    MAILPROXY_NATS_REPLICAS: '3',
    MAILPROXY_FLEET_ENABLED: 'true',
    MAILPROXY_FLEET_NODE_ID: nodeId,
    MAILPROXY_FLEET_HEARTBEAT_SECONDS: '0.25',
    MAILPROXY_FLEET_NODE_TIMEOUT_SECONDS: '1.5',
    MAILPROXY_SECURITY_SECRET_KEY: FLEET_SECRET_KEY,
    ...extraEnv,
    ...extra,
  });
  const tempDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'mailproxy-fleet-'));
    dirs.push(dir);
    return dir;
  };
  const startNode = async (
    nodeId: string,
    options: { cwd?: string; env?: Record<string, string> } = {},
  ): Promise<FleetTestNode> => {
    const cwd = options.cwd ?? tempDir();
    const { daemon, url } = await serveUntilListening(cwd, env(nodeId, options.env), running);
    const smtp = await daemon.waitForLog((entry) => entry.msg === 'smtp listening');
    const node = { id: nodeId, cwd, url, daemon, smtpPort: smtp.port as number };
    const known = nodes.findIndex((seen) => seen.id === nodeId);
    if (known >= 0) nodes[known] = node;
    else nodes.push(node);
    return node;
  };
  const fleet: TestFleet = {
    cluster,
    nodes,
    running,
    env,
    tempDir,
    startNode,
    async destroy() {
      for (const daemon of running) if (daemon.child.exitCode === null) daemon.child.kill('SIGKILL');
      await Promise.all(running.map((daemon) => daemon.exited));
      await cluster.destroy();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    for (const id of nodeIds) await startNode(id);
    for (const node of nodes)
      await untilFleet(
        node.url,
        (seen) => seen.alive === nodeIds.length,
        `${node.id} to see ${nodeIds.length} live nodes`,
      );
  } catch (error) {
    // What the nodes said beyond their requests: why a node did not join is in its warnings.
    for (const node of nodes)
      console.error(
        node.id,
        node.daemon.entries
          .filter((entry) => entry.level !== 'info' && entry.level !== 'debug')
          .map((entry) => JSON.stringify(entry))
          .join('\n'),
      );
    await fleet.destroy();
    throw error;
  }
  return fleet;
}

export async function fleetOf(url: string): Promise<FleetStatus> {
  const response = await api(url, 'GET', '/status', { token: FLEET_TOKEN });
  expect(response.status).toBe(200);
  return response.body.fleet as FleetStatus;
}

/**
 * Polls a node's /status until its view of the fleet satisfies `check` (heartbeats are periodic).
 * Generous: a nats server killed under the bucket's stream leader stalls KV writes until JetStream
 * elects another, measured here from under a second to over 15 s on a loaded 2-core machine.
 */
export async function untilFleet(
  url: string,
  check: (fleet: FleetStatus) => boolean,
  what: string,
  timeoutMs = 40_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (check(await fleetOf(url))) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(await fleetOf(url))}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * A tenant and its default account, created once on the first node and shared by the fleet's
 * configuration: resolves with the tenant's API key once every node serves the account.
 */
export async function provisionTenant(
  fleet: TestFleet,
  tenantId: string,
  account: Record<string, unknown>,
): Promise<string> {
  const first = fleet.nodes[0] as FleetTestNode;
  const tenant = await api(first.url, 'POST', '/tenant', { token: FLEET_TOKEN, body: { id: tenantId } });
  expect(tenant.status, tenant.text).toBe(201);
  const saved = await api(first.url, 'POST', '/account', {
    token: FLEET_TOKEN,
    body: { id: 'main', tenant_id: tenantId, is_default: true, ...account },
  });
  expect(saved.status, saved.text).toBe(201);
  const accountId = String(account.id ?? 'main');
  for (const node of fleet.nodes) {
    const deadline = Date.now() + 20_000;
    while (
      (await api(node.url, 'GET', `/account/${accountId}?tenant_id=${tenantId}`, { token: FLEET_TOKEN })).status !== 200
    ) {
      if (Date.now() > deadline) throw new Error(`${node.id} never served account ${tenantId}/${accountId}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return tenant.body.api_key as string;
}

/** Polls `check` until it holds; past `timeoutMs` it prints each node's latest warnings (for the reader of a failed run) and throws. */
export async function untilOrExplain(
  fleet: TestFleet,
  check: () => Promise<boolean> | boolean,
  what: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) {
      for (const node of fleet.nodes)
        console.error(
          node.id,
          node.daemon.entries
            .filter((entry) => entry.level !== 'info' && entry.level !== 'debug')
            .slice(-20)
            .map((entry) => JSON.stringify(entry))
            .join('\n'),
        );
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A request to a node with the fleet's admin token. */
export const fleetAdmin = (url: string, method: string, path: string, body?: unknown) =>
  api(url, method, path, { token: FLEET_TOKEN, body });

/** Runs `use` on a connection of its own to the fleet's cluster, closed after. */
export async function withClusterConnection<T>(fleet: TestFleet, use: (nc: NatsConnection) => Promise<T>): Promise<T> {
  const nc = await connect({ servers: fleet.cluster.urls.split(',') });
  try {
    return await use(nc);
  } finally {
    await nc.close();
  }
}
