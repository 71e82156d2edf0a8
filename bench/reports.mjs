// The `reports` scenario: delivery-report items per second to a fast client. 20,000 messages
// are relayed while the tenant's client answers 503 (the daemon keeps their outcomes and backs
// off); then the client accepts and `POST /tenant/bench/sync-now` starts a round past the
// backoff: items/s from then until the client has every `sent` item.
import { api, clientStats, run, startPeers, waitForSink } from './harness.mjs';

export async function reportsScenario() {
  const { sink, client, d, key, stop } = await startPeers({ suspended: false, reports: true });
  try {
    client.child.stdin.write('refuse\n');
    const load = await run(['bench/http-load.mjs', d.base, key, '4', '100', '512', '2', 'reports']);
    await waitForSink(sink, load.queued, 120_000);
    client.child.stdin.write('accept\n');
    const before = await clientStats(client);
    const startedAt = Date.now();
    await api(d.base, d.token, 'POST', '/tenant/bench/sync-now');
    let stats = before;
    while (stats.sent < load.queued) {
      if (Date.now() - startedAt > 120_000)
        throw new Error(`the client had ${stats.sent} of ${load.queued} items after 2 minutes`);
      await new Promise((r) => setTimeout(r, 20));
      stats = await clientStats(client);
    }
    const items = stats.items - before.items;
    const reports = stats.reports - before.reports;
    return {
      'items/s': items / ((stats.lastAt - startedAt) / 1000),
      items,
      'items per report': items / Math.max(1, reports),
    };
  } finally {
    await stop();
  }
}
