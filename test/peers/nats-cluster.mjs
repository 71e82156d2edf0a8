/**
 * A real three-server NATS cluster with JetStream on loopback (FLEET.md,
 * "Testing it here"): each server with its own store, `server_name`, client and
 * route ports. Ports are chosen by the kernel: routes must be known before the
 * servers start, so they are reserved by binding and releasing (a race with
 * another process taking the port in between is possible but rare on loopback;
 * the start is retried on a fresh set then).
 *
 * Plain JavaScript (typed by nats-cluster.d.mts): the fleet benchmark (bench/fleet.mjs)
 * starts the same cluster as the tests.
 *
 * A server can be SIGKILLed by its PID and started again on the same ports and
 * store. `ready()` waits until the cluster has a JetStream meta leader, every
 * running server is a member of it, and every replicated stream's leader sees
 * each of its replicas current.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';

const BINARY = existsSync('/usr/sbin/nats-server') ? '/usr/sbin/nats-server' : 'nats-server';
// How long a (re)started cluster may take to elect its JetStream meta leader; answered as soon as it has one.
// 20 s once fell short after two of three servers restarted, on a loaded 2-core machine.
const START_TIMEOUT_MS = 45_000;

/** @returns {Promise<number>} */
async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** One server of the cluster; `monitor` is its monitoring port, how ready() asks each server what it sees. */
function createServerProcess(dir, name, client, route, routes, monitor) {
  let child = null;
  const args = [
    '-a',
    '127.0.0.1',
    '-p',
    String(client),
    '-m',
    String(monitor),
    '-js',
    '-sd',
    join(dir, name),
    '-n',
    name,
    '--cluster_name',
    'mailproxy-test',
    '--cluster',
    `nats://127.0.0.1:${route}`,
    '--routes',
    routes,
  ];
  return {
    name,
    url: `nats://127.0.0.1:${client}`,
    get pid() {
      return child?.pid ?? null;
    },
    start() {
      if (child !== null && child.exitCode === null) return;
      child = spawn(BINARY, args, { stdio: 'ignore' });
    },
    async kill() {
      const running = child;
      child = null;
      if (running === null || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGKILL');
      await exited;
    },
    monitor,
  };
}

/** Each running server's /jsz with its accounts' streams (null where it did not answer), in `up`'s order. */
const jszViews = (up) =>
  Promise.all(
    up.map(async (server) => {
      try {
        const response = await fetch(`http://127.0.0.1:${server.monitor}/jsz?accounts=true&streams=true`);
        return await response.json();
      } catch {
        return null;
      }
    }),
  );

/**
 * Whether every replicated stream (a KV bucket is one) has a leader among the running servers, and
 * that leader sees each replica current: a server just restarted catches up on each stream after the
 * meta group, and a test that kills the next server before it has would leave the stream no quorum.
 */
function streamsCurrent(up, views) {
  if (views.some((view) => view === null)) return false;
  const names = new Set(up.map((server) => server.name));
  return views.every((view, index) =>
    (view.account_details ?? []).every((account) =>
      (account.stream_detail ?? []).every(({ cluster }) => {
        if (cluster === undefined || (cluster.replicas ?? []).length === 0) return true;
        if (!names.has(cluster.leader ?? '')) return false;
        return (
          cluster.leader !== up[index].name ||
          cluster.replicas.every((replica) => replica.current && replica.offline !== true)
        );
      }),
    ),
  );
}

export async function startNatsCluster(size = 3) {
  const dir = mkdtempSync(join(tmpdir(), 'mailproxy-nats-cluster-'));
  const ports = await Promise.all(Array.from({ length: size * 3 }, freePort));
  const routePorts = ports.slice(size, size * 2);
  const routes = routePorts.map((port) => `nats://127.0.0.1:${port}`).join(',');
  const servers = Array.from({ length: size }, (_, index) =>
    createServerProcess(dir, `n${index + 1}`, ports[index], routePorts[index], routes, ports[size * 2 + index]),
  );
  for (const server of servers) server.start();

  const ready = async () => {
    const deadline = Date.now() + START_TIMEOUT_MS;
    const running = () => servers.filter((server) => server.pid !== null);
    for (;;) {
      const up = running();
      const views = await jszViews(up);
      const leaders = new Set(views.map((view) => view?.meta_cluster?.leader ?? ''));
      const leader = leaders.size === 1 ? [...leaders][0] : '';
      // Only the leader lists the other members (and whether they are current).
      const leaderView = views[up.findIndex((server) => server.name === leader)];
      const current =
        (leaderView?.meta_cluster?.replicas ?? []).filter((member) => member.current && member.offline !== true)
          .length + 1;
      if (leaderView !== undefined && leaderView !== null && current >= up.length && streamsCurrent(up, views)) {
        // The meta leader answers JetStream API requests: one round trip proves it.
        const nc = await connect({ servers: up.map((server) => server.url) });
        try {
          await (await jetstreamManager(nc)).getAccountInfo();
          return;
        } catch {
          // not yet
        } finally {
          await nc.close();
        }
      }
      if (Date.now() > deadline)
        throw new Error(`the NATS cluster has no JetStream meta leader after ${START_TIMEOUT_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  await ready();
  return {
    servers,
    urls: servers.map((server) => server.url).join(','),
    ready,
    async destroy() {
      await Promise.all(servers.map((server) => server.kill()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
