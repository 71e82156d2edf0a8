// The `fleet` scenario (issue 24): relayed messages/s of one, two and three fleet nodes on this
// machine, against one daemon without fleet mode, and the cost of the fleet-wide limits.
//
// Each configuration gets a fresh three-server NATS cluster (test/peers/nats-cluster.mjs, the
// tests' own) so that no configuration, membership or limit counter of an earlier one is in its
// buckets. Each node queues what its clients post in 1 s while tenant `bench` is suspended,
// then all are activated at once and the one discarding sink counts until it has every
// message. The nodes share the machine's cores (and the cluster's three servers share them
// too), so the rate alone cannot show scaling: each node's CPU time per message it relayed
// is reported beside it, and the sum of the nodes' CPU per message is the figure to compare.
//
// `posted/s per node`: what each node took over HTTP meanwhile (every new client id is claimed in the
// fleet's KV before the commit), the cost of fleet-wide idempotency on intake.
//
// `limited`: the account carries limit_per_minute/hour/day far above what is sent, so that
// every send goes through the fleet's budget leases without ever waiting for one: the
// difference in CPU per message against the same run without limits is their cost.
import { api, cpuOf, run, setupTenant, sinkStats, startDaemon, startSink, waitForSink } from './harness.mjs';
import { startNatsCluster } from '../test/peers/nats-cluster.mjs';

const POST_SECONDS = '1';
const HIGH_LIMIT = 10_000_000;

/** The nodes' nats-servers die with the bench, also when interrupted (harness.mjs kills its own children). */
const clusters = new Set();
process.on('exit', () => {
  for (const cluster of clusters)
    for (const server of cluster.servers) {
      if (server.pid === null) continue;
      try {
        process.kill(server.pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
});

const fleetEnv = (urls, nodeId) => ({
  MAILPROXY_NATS_URL: urls,
  MAILPROXY_NATS_REPLICAS: '3',
  MAILPROXY_FLEET_ENABLED: 'true',
  MAILPROXY_FLEET_NODE_ID: nodeId,
});

/** Until `check` holds or `ms` passes; whether it held. */
async function within(ms, check) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/**
 * Tenant `bench` and its account on every node. Created on the first; the others get it from the
 * fleet's shared configuration within a second. A build without shared configuration gets it
 * created on each node (with its own API key), so that the scenario measures either.
 */
async function setupFleetTenant(nodes, sinkPort, limited) {
  const [first, ...others] = nodes;
  const limits = limited ? { limit_per_minute: HIGH_LIMIT, limit_per_hour: HIGH_LIMIT, limit_per_day: HIGH_LIMIT } : {};
  const key = await setupTenant(first, sinkPort, null, limits);
  first.key = key;
  for (const node of others) {
    const shared = await within(3000, async () => (await api(node.base, node.token, 'GET', '/accounts?tenant_id=bench')).accounts?.length > 0);
    node.key = shared ? key : await setupTenant(node, sinkPort, null, limits);
  }
}

/**
 * One configuration: `size` fleet nodes (0: one daemon without fleet mode; with `mirror`, that
 * daemon mirrors its events to the same kind of cluster, R3: what fleet mode costs beyond the mirror).
 */
async function relayRun(size, { limited = false, mirror = false } = {}) {
  const cluster = size === 0 && !mirror ? null : await startNatsCluster();
  if (cluster !== null) clusters.add(cluster);
  const { sink, port, stop: stopSink } = await startSink();
  const nodes = [];
  try {
    for (let index = 0; index < Math.max(1, size); index += 1)
      nodes.push(
        await startDaemon(
          cluster === null
            ? {}
            : size === 0
              ? { MAILPROXY_NATS_URL: cluster.urls, MAILPROXY_NATS_REPLICAS: '3' }
              : fleetEnv(cluster.urls, `bench-${index + 1}`),
        ),
      );
    await setupFleetTenant(nodes, port, limited);
    for (const node of nodes) await api(node.base, node.token, 'POST', '/commands/suspend', { tenant_id: 'bench' });
    const posted = await Promise.all(
      nodes.map((node, index) => run(['bench/http-load.mjs', node.base, node.key, '4', '100', '2048', POST_SECONDS, `n${index}`])),
    );
    const queued = posted.map((load) => load.queued);
    const total = queued.reduce((sum, count) => sum + count, 0);
    const before = nodes.map((node) => cpuOf(node.daemon.child.pid));
    const started = Date.now();
    await Promise.all(nodes.map((node) => api(node.base, node.token, 'POST', '/commands/activate', { tenant_id: 'bench' })));
    const stats = await waitForSink(sink, total, 180_000);
    const after = nodes.map((node) => cpuOf(node.daemon.child.pid));
    const cpuUsPerMessage = nodes.map(
      (_, index) => ((after[index].user - before[index].user + after[index].system - before[index].system) * 1000) / Math.max(1, queued[index]),
    );
    return {
      // Each node's intake while the others post too: in fleet mode every new client id is claimed in the cluster.
      postedPerNode: posted.reduce((sum, load) => sum + load.rate, 0) / posted.length,
      rate: stats.received / ((stats.lastAt - started) / 1000),
      messages: stats.received,
      allRelayed: stats.received >= total ? 1 : 0,
      duplicates: Math.max(0, (await sinkStats(sink)).received - total),
      cpuUsPerMessage: cpuUsPerMessage.reduce((sum, value) => sum + value, 0) / cpuUsPerMessage.length,
    };
  } finally {
    await Promise.all(nodes.map((node) => node.stop()));
    stopSink();
    if (cluster !== null) {
      await cluster.destroy();
      clusters.delete(cluster);
    }
  }
}

export async function fleetScenario() {
  const alone = await relayRun(0);
  const mirrored = await relayRun(0, { mirror: true });
  const one = await relayRun(1);
  const two = await relayRun(2);
  const three = await relayRun(3);
  const limited = await relayRun(3, { limited: true });
  return {
    'posted/s per node, no fleet': alone.postedPerNode,
    'posted/s per node, no fleet, R3 mirror': mirrored.postedPerNode,
    'posted/s per node, 1 node': one.postedPerNode,
    'posted/s per node, 3 nodes': three.postedPerNode,
    'relayed/s, no fleet': alone.rate,
    'relayed/s, no fleet, R3 mirror': mirrored.rate,
    'relayed/s, 1 node': one.rate,
    'relayed/s, 2 nodes': two.rate,
    'relayed/s, 3 nodes': three.rate,
    'relayed/s, 3 nodes, fleet limits': limited.rate,
    'node CPU µs/message, no fleet': alone.cpuUsPerMessage,
    'node CPU µs/message, no fleet, R3 mirror': mirrored.cpuUsPerMessage,
    'node CPU µs/message, 1 node': one.cpuUsPerMessage,
    'node CPU µs/message, 2 nodes': two.cpuUsPerMessage,
    'node CPU µs/message, 3 nodes': three.cpuUsPerMessage,
    'node CPU µs/message, 3 nodes, fleet limits': limited.cpuUsPerMessage,
    'fleet limits: added CPU µs/message': limited.cpuUsPerMessage - three.cpuUsPerMessage,
    messages: alone.messages + mirrored.messages + one.messages + two.messages + three.messages + limited.messages,
    'all relayed': Math.min(alone.allRelayed, mirrored.allRelayed, one.allRelayed, two.allRelayed, three.allRelayed, limited.allRelayed),
    duplicates: alone.duplicates + mirrored.duplicates + one.duplicates + two.duplicates + three.duplicates + limited.duplicates,
  };
}
