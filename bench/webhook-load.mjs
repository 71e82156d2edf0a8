// Provider webhook load in its own process: signed requests as fast as the daemon answers them.
// argv: url tenant provider(mailgun|sendgrid) key concurrency seconds idPrefix idCount eventsPerRequest
//   mailgun: key is the signing key, one event per request (as Mailgun sends them);
//   sendgrid: key is a PKCS#8 PEM private key (base64), eventsPerRequest events per request (SendGrid batches).
// Each event is a delivery of a random one of the ids `${idPrefix}-0` .. `${idPrefix}-(idCount-1)`, with a fresh event id.
import { createHmac, createPrivateKey, randomBytes, randomUUID, sign } from 'node:crypto';
import { Agent } from 'node:http';
import { postJson } from './http-post.mjs';

const [url, tenant, provider, key, concurrency, seconds, idPrefix, idCount, perRequestText] = process.argv.slice(2);
const perRequest = provider === 'mailgun' ? 1 : Number(perRequestText);
const agent = new Agent({ keepAlive: true, maxSockets: Number(concurrency) });
const target = new URL(`${url}/webhooks/${provider}/${tenant}`);
const privateKey = provider === 'sendgrid' ? createPrivateKey(Buffer.from(key, 'base64').toString('utf8')) : null;
const deadline = Date.now() + Number(seconds) * 1000;
const randomId = () => `${idPrefix}-${Math.floor(Math.random() * Number(idCount))}`;
const totals = { requests: 0, errors: 0, applied: 0, duplicates: 0, unmatched: 0 };

function signed() {
  const now = Math.floor(Date.now() / 1000);
  if (provider === 'mailgun') {
    const token = randomBytes(25).toString('hex');
    const signature = createHmac('sha256', key).update(`${now}${token}`).digest('hex');
    const eventData = {
      id: randomUUID(),
      event: 'delivered',
      timestamp: now,
      recipient: 'sink@example.net',
      'user-variables': { genro_mail_id: randomId() },
    };
    return {
      body: Buffer.from(
        JSON.stringify({ signature: { timestamp: String(now), token, signature }, 'event-data': eventData }),
      ),
      headers: {},
    };
  }
  const events = Array.from({ length: perRequest }, () => ({
    email: 'sink@example.net',
    timestamp: now,
    event: 'delivered',
    sg_event_id: randomUUID(),
    genro_mail_id: randomId(),
  }));
  const body = Buffer.from(JSON.stringify(events));
  const signature = sign('sha256', Buffer.concat([Buffer.from(String(now)), body]), privateKey).toString('base64');
  return {
    body,
    headers: {
      'X-Twilio-Email-Event-Webhook-Signature': signature,
      'X-Twilio-Email-Event-Webhook-Timestamp': String(now),
    },
  };
}

const post = ({ body, headers }) => postJson(agent, target, body, headers);

const startedAt = Date.now();
async function worker() {
  while (Date.now() < deadline) {
    const response = await post(signed());
    totals.requests += 1;
    if (response.status !== 200) {
      totals.errors += 1;
      continue;
    }
    const answer = JSON.parse(response.body);
    totals.applied += answer.applied;
    totals.duplicates += answer.duplicates;
    totals.unmatched += answer.unmatched;
  }
}
await Promise.all(Array.from({ length: Number(concurrency) }, worker));
const elapsed = (Date.now() - startedAt) / 1000;
process.stdout.write(`${JSON.stringify({ ...totals, elapsed, rate: totals.applied / elapsed })}\n`);
