// The `dkim` scenario: what DKIM signing costs the relay. The same drain as relay-drain (messages
// queued while the tenant is suspended, then released at once, relayed to the discarding sink),
// unsigned and signed (the From domain a sending domain with an RSA 2048 key), at 2 KB and at
// 100 KB, alternating in the same run. The figure of merit: signed/unsigned relay rate, and the
// signing cost per message derived from the two rates (1/signed - 1/unsigned, in µs of the
// drain's wall clock: what signing adds on the relay's path, threads included). At 2 KB also signed
// with one-click unsubscribe links (each message's sealed link and its two headers, signed too).
import { api, run, startPeers, waitForSink } from './harness.mjs';

async function drain(bodyBytes, signed, links = false) {
  const { sink, d, key, stop } = await startPeers({ suspended: true });
  try {
    // The load generator's From is bench@example.com: that domain signs.
    if (signed)
      await api(d.base, d.token, 'POST', '/domains', { tenant_id: 'bench', domain: 'example.com', selector: 'bench' });
    if (links)
      await api(d.base, d.token, 'PUT', '/tenant/bench', {
        list_unsubscribe: { base_url: 'https://mail.example.com', scope: 'all' },
      });
    // 2 KB: a second of posting (thousands); 100 KB: batches of 10 for a second (hundreds).
    const batch = bodyBytes > 10_000 ? '10' : '100';
    const load = await run([
      'bench/http-load.mjs',
      d.base,
      key,
      '4',
      batch,
      String(bodyBytes),
      '1',
      signed ? 's' : 'u',
    ]);
    const started = Date.now();
    await api(d.base, d.token, 'POST', '/commands/activate', { tenant_id: 'bench' });
    const stats = await waitForSink(sink, load.queued, 180_000);
    return stats.received / ((stats.lastAt - started) / 1000);
  } finally {
    await stop();
  }
}

export async function dkimScenario() {
  const result = {};
  for (const [label, bytes] of [
    ['2 KB', 2048],
    ['100 KB', 102_400],
  ]) {
    const unsigned = await drain(bytes, false);
    const signed = await drain(bytes, true);
    result[`${label} unsigned relayed/s`] = unsigned;
    result[`${label} signed relayed/s`] = signed;
    result[`${label} signed / unsigned`] = signed / unsigned;
    result[`${label} signing µs/message`] = (1 / signed - 1 / unsigned) * 1e6;
    if (bytes === 2048) {
      const linked = await drain(bytes, true, true);
      result[`${label} signed with unsubscribe links relayed/s`] = linked;
      result[`${label} links / signed`] = linked / signed;
    }
  }
  return result;
}
