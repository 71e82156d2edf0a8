// HTTP load generator in its own process: POSTs /add-messages batches for a duration.
// argv: url token concurrency batchSize bodyBytes seconds idPrefix [messagesPerSecond, 0 = as fast as possible]
import { randomUUID } from 'node:crypto';
import { Agent } from 'node:http';
import { postJson } from './http-post.mjs';

const [url, token, concurrency, batchSize, bodyBytes, seconds, prefix, rateText = '0'] = process.argv.slice(2);
const rate = Number(rateText);
// A body like real mail: words in lines of at most 72 characters, `bodyBytes` long.
// (One 2 KB line of a single letter, the earlier body, forced quoted-printable
// encoding of every message, which ordinary text does not need.)
const WORDS = 'the quick brown fox jumps over a lazy dog while mail relays keep every message safe and sound'.split(
  ' ',
);
function textOf(bytes) {
  const lines = [];
  let line = '';
  let size = 0;
  for (let index = 0; size < bytes; index += 1) {
    const word = WORDS[(index * 7) % WORDS.length];
    if (line.length + word.length + 1 > 72) {
      lines.push(line);
      size += line.length + 1;
      line = '';
    }
    line = line === '' ? word : `${line} ${word}`;
  }
  return lines.join('\n').slice(0, bytes);
}
const body = textOf(Number(bodyBytes));
let sequence = 0;
let sent = 0;
let errors = 0;
const latencies = [];
const deadline = Date.now() + Number(seconds) * 1000;

// node:http with a keep-alive agent, not fetch: fetch's streams cost the generator about a
// millisecond of CPU per request, and at 1,000 requests/s on two shared cores that queueing
// showed up as tens of milliseconds in the p99 of any server, even one that stores nothing.
const target = new URL(`${url}/add-messages`);
const agent = new Agent({ keepAlive: true, maxSockets: Number(concurrency) });
const post = (payload) => postJson(agent, target, payload, { authorization: `Bearer ${token}` });

const startedAt = Date.now();
// Latencies count from the second second on: the first requests open the connections and run
// cold code in both processes, and with 50 clients they alone would be the p99 of a 5 s run.
const measureFrom = performance.now() + (rate > 0 ? 1000 : 0);
async function worker() {
  while (Date.now() < deadline) {
    // A steady rate: each request takes the next slot (rate x elapsed time) before it waits
    // for it, so that requests leave evenly spaced rather than all workers at once in bursts.
    const first = sequence;
    sequence += Number(batchSize);
    if (rate > 0) {
      const aheadMs = (first / rate) * 1000 - (Date.now() - startedAt);
      if (aheadMs > 0) await new Promise((resolve) => setTimeout(resolve, aheadMs));
      if (Date.now() >= deadline) break;
    }
    const messages = Array.from({ length: Number(batchSize) }, (_, index) => ({
      // BENCH_RANDOM_IDS: ids as many applications make them (UUIDv4), not in the order they arrive.
      id: process.env.BENCH_RANDOM_IDS ? randomUUID() : `${prefix}-${first + index}`,
      from: 'bench@example.com',
      to: 'sink@example.net',
      subject: 'bench',
      body,
    }));
    const sentAt = performance.now();
    const response = await post(JSON.stringify({ messages }));
    const result = JSON.parse(response.body);
    if (sentAt >= measureFrom) latencies.push(performance.now() - sentAt);
    if (response.status === 200) sent += result.queued;
    else errors += 1;
  }
}

await Promise.all(Array.from({ length: Number(concurrency) }, worker));
const elapsed = (Date.now() - startedAt) / 1000;
latencies.sort((a, b) => a - b);
const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0;
process.stdout.write(
  `${JSON.stringify({ queued: sent, errors, elapsed, rate: sent / elapsed, p50: pct(0.5), p99: pct(0.99), requests: latencies.length })}\n`,
);
