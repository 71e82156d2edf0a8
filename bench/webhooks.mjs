// The `webhooks` scenario (issue 27): provider events applied per second. The messages 4 clients
// post in 2 s (some thousands) are relayed to the sink first (so that every event names a message that was sent), then signed
// webhooks are POSTed for 4 s: Mailgun's one event per request (8, then 32 concurrent clients:
// a provider posts many at once, and concurrent requests share the fsync of their commits), and
// SendGrid's batches of 100 events (ECDSA-signed) per request, 8 clients. Each event is a delivery of a
// random message with its own event id: verified, tied to its message, recorded with its
// timeline event (mirrored, reported) in one durable transaction per request.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { api, run, setupTenant, startDaemon, startSink, waitForSink } from './harness.mjs';

export async function webhooksScenario() {
  const { port, sink, stop: stopSink } = await startSink();
  const d = await startDaemon();
  try {
    const signingKey = randomBytes(24).toString('hex');
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const key = await setupTenant(d, port, null, { provider: { name: 'mailgun', signing_key: signingKey } });
    await api(d.base, d.token, 'POST', '/account', {
      id: 'sg',
      tenant_id: 'bench',
      host: '127.0.0.1',
      port,
      tls_mode: 'none',
      provider: {
        name: 'sendgrid',
        public_key: pair.publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
      },
    });
    const posted = await run(['bench/http-load.mjs', d.base, key, '4', '500', '512', '2', 'w']);
    await waitForSink(sink, posted.queued, 120_000);
    const load = (provider, secret, clients, perRequest) =>
      run([
        'bench/webhook-load.mjs',
        d.base,
        'bench',
        provider,
        secret,
        String(clients),
        '4',
        'w',
        String(posted.queued),
        String(perRequest),
      ]);
    const mailgun = await load('mailgun', signingKey, 8, 1);
    const mailgunWide = await load('mailgun', signingKey, 32, 1);
    const pem = Buffer.from(pair.privateKey.export({ type: 'pkcs8', format: 'pem' })).toString('base64');
    const sendgrid = await load('sendgrid', pem, 8, 100);
    const all = [mailgun, mailgunWide, sendgrid];
    return {
      'Mailgun events/s applied (1 per request, 8 clients)': mailgun.rate,
      'Mailgun events/s applied (1 per request, 32 clients)': mailgunWide.rate,
      'SendGrid events/s applied (100 per request, 8 clients)': sendgrid.rate,
      'events applied': all.reduce((sum, load) => sum + load.applied, 0),
      'unmatched or duplicate': all.reduce((sum, load) => sum + load.unmatched + load.duplicates, 0),
      'requests refused': all.reduce((sum, load) => sum + load.errors, 0),
    };
  } finally {
    await d.stop();
    stopSink();
  }
}
