// The `reports` scenario: delivery-report items per second to a fast client. 20,000 messages
// are relayed with no client endpoint set (their outcomes wait in the outbox); then the
// tenant's endpoint is set to a client that acknowledges every report at once
// (bench/report-client.mjs), which starts a round: items/s from then until the client has them all.
import { api, clientStats, run, start, startPeers, waitForSink } from './harness.mjs';

export async function reportsScenario() {
  const { sink, d, key, stop } = await startPeers({ suspended: false });
  const client = start(['bench/report-client.mjs']);
  try {
    const { port } = await client.next((e) => e.port);
    const load = await run(['bench/http-load.mjs', d.base, key, '4', '100', '512', '2', 'reports']);
    await waitForSink(sink, load.queued, 120_000);
    const startedAt = Date.now();
    await api(d.base, d.token, 'PUT', '/tenant/bench', { client_base_url: `http://127.0.0.1:${port}` });
    let stats = await clientStats(client);
    while (stats.sent < load.queued) {
      if (Date.now() - startedAt > 120_000) throw new Error(`the client had ${stats.sent} of ${load.queued} items after 2 minutes`);
      await new Promise((r) => setTimeout(r, 20));
      stats = await clientStats(client);
    }
    const seconds = (stats.lastAt - startedAt) / 1000;
    return { 'items/s': stats.items / seconds, items: stats.items, reports: stats.reports, 'items per report': stats.items / Math.max(1, stats.reports) };
  } finally {
    client.child.stdin.end();
    await stop();
  }
}
