/**
 * A real three-server NATS cluster with JetStream on loopback (FLEET.md,
 * "Testing it here"): each server with its own store, `server_name`, client and
 * route ports. Ports are chosen by the kernel: routes must be known before the
 * servers start, so they are reserved by binding and releasing (a race with
 * another process taking the port in between is possible but rare on loopback;
 * the start is retried on a fresh set then).
 *
 * A server can be SIGKILLed by its PID and started again on the same ports and
 * store. `ready()` waits until the cluster has a JetStream meta leader and every
 * running server is a member of it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';

const BINARY = existsSync('/usr/sbin/nats-server') ? '/usr/sbin/nats-server' : 'nats-server';
const START_TIMEOUT_MS = 20_000;

export interface ClusterServer {
  readonly name: string;
  readonly url: string;
  readonly pid: number | null;
  /** SIGKILL: no goodbye to the cluster, as a crashed machine. */
  kill(): Promise<void>;
  /** Starts again on the same ports and store. */
  start(): void;
}

export interface NatsCluster {
  readonly servers: readonly ClusterServer[];
  /** Every server's client URL, comma-separated: what a daemon's `nats.url` takes. */
  readonly urls: string;
  /** Waits for a JetStream meta leader that sees every running server. */
  ready(): Promise<void>;
  destroy(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

interface RunningServer extends ClusterServer {
  /** The monitoring port: how ready() asks each server what it sees. */
  readonly monitor: number;
}

function createServerProcess(dir: string, name: string, client: number, route: number, routes: string, monitor: number): RunningServer {
  let child: ChildProcess | null = null;
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

interface JszMeta {
  meta_cluster?: { leader?: string; cluster_size?: number; replicas?: Array<{ name: string; current: boolean; offline?: boolean }> };
}

export async function startNatsCluster(size = 3): Promise<NatsCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'mailproxy-nats-cluster-'));
  const ports = await Promise.all(Array.from({ length: size * 3 }, freePort));
  const routePorts = ports.slice(size, size * 2);
  const routes = routePorts.map((port) => `nats://127.0.0.1:${port}`).join(',');
  const servers = Array.from({ length: size }, (_, index) =>
    createServerProcess(dir, `n${index + 1}`, ports[index] as number, routePorts[index] as number, routes, ports[size * 2 + index] as number),
  );
  for (const server of servers) server.start();

  const ready = async (): Promise<void> => {
    const deadline = Date.now() + START_TIMEOUT_MS;
    const running = () => servers.filter((server) => server.pid !== null);
    for (;;) {
      const up = running();
      const views = await Promise.all(
        up.map(async (server) => {
          try {
            const response = await fetch(`http://127.0.0.1:${server.monitor}/jsz`);
            return (await response.json()) as JszMeta;
          } catch {
            return null;
          }
        }),
      );
      const leaders = new Set(views.map((view) => view?.meta_cluster?.leader ?? ''));
      const leader = leaders.size === 1 ? [...leaders][0] : '';
      // Only the leader lists the other members (and whether they are current).
      const leaderView = views[up.findIndex((server) => server.name === leader)];
      const current = (leaderView?.meta_cluster?.replicas ?? []).filter((member) => member.current && member.offline !== true).length + 1;
      if (leaderView !== undefined && leaderView !== null && current >= up.length) {
        // The meta leader answers JetStream API requests: one round trip proves it.
        const nc = await connect({ servers: up.map((server) => server.url) });
        try {
          await (await nc.jetstreamManager()).getAccountInfo();
          return;
        } catch {
          // not yet
        } finally {
          await nc.close();
        }
      }
      if (Date.now() > deadline) throw new Error(`the NATS cluster has no JetStream meta leader after ${START_TIMEOUT_MS} ms`);
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
