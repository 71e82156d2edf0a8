// One configuration of the `fleet` scenario (bench/fleet.mjs): nodes on a fresh three-server
// NATS cluster, tenant `bench` configured once and awaited on every node, every posting node
// queueing what its clients post in 2 s while the tenant is suspended, then the tenant activated
// and one sink counting until it has every message. Every node's CPU is read from the first post
// to the last relay, and the round's own totals are checked against a direct count (the sink's,
// and each node's sent counter and queue) before any figure is returned.
import { randomBytes } from 'node:crypto';
import { cpuOf, relayAccount, run, scrapeMetrics, sinkStats, startDaemon, startSink, waitForSink } from './harness.mjs';
import { startNatsCluster } from '../test/peers/nats-cluster.mjs';

/** Two seconds: a fleet node's first batch can take over a second to answer on a loaded machine, and one batch per client is not a rate. */
const POST_SECONDS = 2;
/** How long the configuration may take to reach every node (a fleet's first writes can be refused for a moment). */
const CONFIG_TIMEOUT_MS = 30_000;
/** A node counts a message sent once the sink's 250 reaches it, a little after the sink counted it. */
const COUNT_TIMEOUT_MS = 10_000;
/**
 * A node has settled once its CPU over one window stays under this (its start's work done:
 * catching up with the cluster, reconciling its spool, compiling); the last window is its idle rate.
 */
const SETTLE_WINDOW_MS = 1000;
const SETTLED_MS_PER_S = 100;
const SETTLE_TIMEOUT_MS = 20_000;
const SENT = 'gmp_sent_total{tenant_id="bench",account_id="relay"}';

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

async function request(base, token, method, path, body) {
  const response = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json().catch(() => null) };
}

/** `attempt()` every 100 ms until it gives something other than null or false; fails the round after `ms`. */
async function until(what, attempt, ms = CONFIG_TIMEOUT_MS) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await attempt();
    if (value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`fleet bench: ${what}, not within ${ms / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A write answered 2xx, written again while it is refused (503 FLEET_UNAVAILABLE at a fleet's start). */
const written = (what, node, path, body) =>
  until(what, async () => {
    const answer = await request(node.base, node.token, 'POST', path, body);
    return answer.status < 300 ? answer.body : null;
  });

/**
 * Tenant `bench` (one API key, written on the first node) and its account, and the tenant
 * suspended, held by every node before anyone posts: a node that has not yet got the shared
 * configuration would refuse its clients or relay at once. Each node's own suspend answer says
 * what that node holds.
 */
async function configure(nodes, sinkPort, account, fleet) {
  const [first] = nodes;
  const { api_key: key } = await written('tenant bench created', first, '/tenant', { id: 'bench' });
  await written('account relay created', first, '/account', relayAccount(sinkPort, account));
  for (const [index, node] of nodes.entries()) {
    await until(`tenant bench, its key and account on node ${index + 1}`, async () => {
      if ((await request(node.base, key, 'GET', '/status')).status !== 200) return null;
      const { body } = await request(node.base, node.token, 'GET', '/accounts?tenant_id=bench');
      return body?.accounts?.some((entry) => entry.id === 'relay' && entry.port === sinkPort) ?? false;
    });
    if (fleet)
      await until(`node ${index + 1} sees all ${nodes.length} nodes connected`, async () => {
        const { body } = await request(node.base, node.token, 'GET', '/status');
        return body?.fleet?.connected === true && body.fleet.nodes?.length === nodes.length;
      });
    const suspended = await written(`tenant suspended on node ${index + 1}`, node, '/commands/suspend', {
      tenant_id: 'bench',
    });
    if (!suspended.suspensions?.includes('*'))
      throw new Error(`fleet bench: node ${index + 1} does not hold the suspension`);
  }
  return key;
}

const cpuMs = (pid) => {
  const { user, system } = cpuOf(pid);
  return user + system;
};
const nodesCpu = (nodes) => nodes.map((node) => cpuMs(node.daemon.child.pid));

/** Each node's CPU over `ms` with nothing to do, ms/s. */
async function idleRates(nodes, ms) {
  const before = nodesCpu(nodes);
  await new Promise((resolve) => setTimeout(resolve, ms));
  return nodesCpu(nodes).map((value, index) => (value - before[index]) / (ms / 1000));
}

/** Waits until every node is quiet (or SETTLE_TIMEOUT_MS passes); each node's CPU in its last window, ms/s. */
async function settle(nodes) {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  for (;;) {
    const rates = await idleRates(nodes, SETTLE_WINDOW_MS);
    if (rates.every((rate) => rate < SETTLED_MS_PER_S) || Date.now() > deadline) return rates;
  }
}

/**
 * The round's totals against a direct count, once the nodes' counters have caught up with the
 * sink: every message posted was relayed exactly once, by the node it was posted to, and no node
 * has any left. A disagreement fails the round: its figures would not be the fleet's.
 */
async function directCount(nodes, sink, posted) {
  const queued = posted.map((load) => load?.queued ?? 0);
  const total = queued.reduce((sum, count) => sum + count, 0);
  const sentOf = async () => Promise.all(nodes.map(async (node) => (await scrapeMetrics(node)).sample(SENT) || 0));
  let sent = await sentOf();
  await until(
    'nodes counting every message the sink has',
    async () => (sent = await sentOf()).reduce((sum, count) => sum + count, 0) >= total,
    COUNT_TIMEOUT_MS,
  ).catch(() => null);
  const { received } = await sinkStats(sink);
  const waiting = await Promise.all(
    nodes.map(async (node) => (await request(node.base, node.token, 'GET', '/status')).body?.queue?.waiting),
  );
  const problems = [];
  const errors = posted.reduce((sum, load) => sum + (load?.errors ?? 0), 0);
  if (errors > 0) problems.push(`${errors} posts refused`);
  if (received !== total) problems.push(`sink received ${received}, nodes queued ${total}`);
  nodes.forEach((_, index) => {
    if (sent[index] !== queued[index])
      problems.push(`node ${index + 1} sent ${sent[index]} of the ${queued[index]} it queued`);
    if (waiting[index] !== 0) problems.push(`node ${index + 1} still has ${waiting[index]} waiting`);
  });
  if (problems.length > 0)
    throw new Error(`fleet bench: its totals disagree with a direct count: ${problems.join('; ')}`);
  return { received, sent };
}

/**
 * The nodes as `startDaemon` gives them: `size` fleet nodes, or (0) one daemon without fleet mode,
 * mirroring to `cluster` if any. Fleet nodes share one secret key, as README's Fleet mode asks: a
 * node with another cannot open the shared configuration's sealed secrets and never applies it.
 */
async function startNodes(size, cluster) {
  const secretKey = randomBytes(32).toString('base64');
  const nodes = [];
  for (let index = 0; index < Math.max(1, size); index += 1) {
    const env =
      cluster === null
        ? {}
        : size === 0
          ? { MAILPROXY_NATS_URL: cluster.urls, MAILPROXY_NATS_REPLICAS: '3' }
          : {
              MAILPROXY_NATS_URL: cluster.urls,
              MAILPROXY_NATS_REPLICAS: '3',
              MAILPROXY_FLEET_ENABLED: 'true',
              MAILPROXY_FLEET_NODE_ID: `bench-${index + 1}`,
              MAILPROXY_SECURITY_SECRET_KEY: secretKey,
            };
    nodes.push(await startDaemon(env));
  }
  return nodes;
}

/**
 * One configuration: `size` fleet nodes (0: one daemon without fleet mode; with `mirror`, it
 * mirrors to the cluster), the first `posting` of them posting (all by default), the account
 * carrying `account`'s fields. Posting begins once every node holds the configuration and has
 * settled, and lasts `postSeconds`. `idleMs`: each node's idle rate is read over that long before and after the load
 * (else the last second of settling). CPU figures are in ms, per node; `window` is the first post to the last relay.
 */
export async function fleetRound(
  size,
  { mirror = false, posting = Math.max(1, size), account = {}, idleMs = 0, postSeconds = POST_SECONDS } = {},
) {
  const cluster = size === 0 && !mirror ? null : await startNatsCluster();
  if (cluster !== null) clusters.add(cluster);
  const { sink, port, stop: stopSink } = await startSink();
  let nodes = [];
  try {
    nodes = await startNodes(size, cluster);
    const configuredFrom = Date.now();
    const key = await configure(nodes, port, account, size > 0);
    const configSeconds = (Date.now() - configuredFrom) / 1000;
    const natsCpu = () => cluster?.servers.reduce((sum, server) => sum + cpuMs(server.pid), 0) ?? 0;
    const settledFrom = Date.now();
    const settled = await settle(nodes);
    const settleSeconds = (Date.now() - settledFrom) / 1000;
    const idleBefore = idleMs > 0 ? await idleRates(nodes, idleMs) : settled;
    const atPost = { nodes: nodesCpu(nodes), nats: natsCpu(), at: Date.now() };
    const posted = await Promise.all(
      nodes.map((node, index) =>
        index < posting
          ? run(['bench/http-load.mjs', node.base, key, '4', '100', '2048', String(postSeconds), `n${index}`])
          : null,
      ),
    );
    const atActivate = { nodes: nodesCpu(nodes), at: Date.now() };
    const total = posted.reduce((sum, load) => sum + (load?.queued ?? 0), 0);
    await Promise.all(
      nodes.map((node, index) =>
        written(`tenant activated on node ${index + 1}`, node, '/commands/activate', { tenant_id: 'bench' }),
      ),
    );
    const stats = await waitForSink(sink, total, 180_000);
    const atEnd = { nodes: nodesCpu(nodes), nats: natsCpu(), at: Date.now() };
    const counted = await directCount(nodes, sink, posted);
    // Read again once the nodes are quiet after the load: one reading of a few 10 ms ticks is coarse.
    const idleAfter = idleMs > 0 ? await idleRates(nodes, idleMs) : idleBefore;
    const idleMsPerS = idleBefore.map((rate, index) => (rate + idleAfter[index]) / 2);
    const loads = posted.filter((load) => load !== null);
    return {
      queued: posted.map((load) => load?.queued ?? 0),
      total,
      postedPerNode: loads.reduce((sum, load) => sum + load.rate, 0) / loads.length,
      // All nodes post over the same second: the fleet's intake is all they took over the longest of them.
      postedFleet: total / Math.max(...loads.map((load) => load.elapsed)),
      relayed: total / ((stats.lastAt - atActivate.at) / 1000),
      intakeMs: atActivate.nodes.map((value, index) => value - atPost.nodes[index]),
      windowMs: atEnd.nodes.map((value, index) => value - atPost.nodes[index]),
      natsMs: atEnd.nats - atPost.nats,
      windowSeconds: (atEnd.at - atPost.at) / 1000,
      idleMsPerS,
      configSeconds,
      settleSeconds,
      received: counted.received,
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
