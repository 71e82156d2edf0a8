// The `fleet-spool` scenario (issue 25): what the replicated spool costs a fleet node. One fleet
// node on a fresh three-server NATS cluster (R3), with `fleet.spool` on and off in the same run,
// alternating which goes first. Ingest: what 4 HTTP clients get queued in 3 s (batches of 100,
// tenant suspended); every answer waits for the spool's PubAcks when it is on. End to end: the
// tenant activated, messages relayed per second until the sink has every one (each finished
// message's entry is removed from the spool meanwhile). The node's CPU per message is beside it, and
// the three nats servers' during ingest.
import { api, cpuOf, run, setupTenant, startDaemon, startSink, waitForSink } from './harness.mjs';
import { startNatsCluster } from '../test/peers/nats-cluster.mjs';

const POST_SECONDS = '3';

async function spoolRun(spool) {
  const cluster = await startNatsCluster();
  const { sink, port, stop: stopSink } = await startSink();
  let node = null;
  try {
    node = await startDaemon({
      MAILPROXY_NATS_URL: cluster.urls,
      MAILPROXY_NATS_REPLICAS: '3',
      MAILPROXY_FLEET_ENABLED: 'true',
      MAILPROXY_FLEET_NODE_ID: 'bench-1',
      MAILPROXY_FLEET_SPOOL: String(spool),
    });
    const key = await setupTenant(node, port);
    await api(node.base, node.token, 'POST', '/commands/suspend', { tenant_id: 'bench' });
    const pid = node.daemon.child.pid;
    const cpu = () => {
      const { user, system } = cpuOf(pid);
      return user + system;
    };
    // The three nats servers' CPU too: the replicated writes cost them as much as the node.
    const natsCpu = () =>
      cluster.servers.reduce((sum, server) => {
        const { user, system } = cpuOf(server.pid);
        return sum + user + system;
      }, 0);
    const beforePost = cpu();
    const natsBeforePost = natsCpu();
    const posted = await run(['bench/http-load.mjs', node.base, key, '4', '100', '2048', POST_SECONDS, 'p']);
    const postCpu = cpu() - beforePost;
    const postNatsCpu = natsCpu() - natsBeforePost;
    const beforeRelay = cpu();
    const started = Date.now();
    await api(node.base, node.token, 'POST', '/commands/activate', { tenant_id: 'bench' });
    const stats = await waitForSink(sink, posted.queued, 180_000);
    return {
      ingest: posted.rate,
      relayed: stats.received / ((stats.lastAt - started) / 1000),
      ingestCpuUs: (postCpu * 1000) / Math.max(1, posted.queued),
      ingestNatsCpuUs: (postNatsCpu * 1000) / Math.max(1, posted.queued),
      relayCpuUs: ((cpu() - beforeRelay) * 1000) / Math.max(1, posted.queued),
      messages: stats.received,
    };
  } finally {
    await node?.stop();
    stopSink();
    await cluster.destroy();
  }
}

let round = 0;
export async function fleetSpoolScenario() {
  // Alternate which configuration runs first, so that neither always gets the fresher machine.
  round += 1;
  const first = round % 2 === 1;
  const a = await spoolRun(first);
  const b = await spoolRun(!first);
  const [on, off] = first ? [a, b] : [b, a];
  return {
    'ingest posts/s, spool off': off.ingest,
    'ingest posts/s, spool on': on.ingest,
    'ingest on/off': on.ingest / off.ingest,
    'relayed/s, spool off': off.relayed,
    'relayed/s, spool on': on.relayed,
    'relayed on/off': on.relayed / off.relayed,
    'ingest CPU µs/message, spool off': off.ingestCpuUs,
    'ingest CPU µs/message, spool on': on.ingestCpuUs,
    'ingest nats servers CPU µs/message, spool off': off.ingestNatsCpuUs,
    'ingest nats servers CPU µs/message, spool on': on.ingestNatsCpuUs,
    'relay CPU µs/message, spool off': off.relayCpuUs,
    'relay CPU µs/message, spool on': on.relayCpuUs,
    messages: on.messages + off.messages,
  };
}
