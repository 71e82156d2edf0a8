// A client application's sync endpoint in its own process: acknowledges every
// delivery report, counts its items and measures each `sent` item's lag from its
// event (the event id is a UUIDv7: its first 48 bits are the event's ms).
// Usage: node bench/report-client.mjs -> prints {"port":N}; on each "stats" line read,
// prints {"reports","items","sent","lastAt","lagP50","lagP99"}. After a "refuse" line it answers
// 503 to every report (the daemon keeps the items and backs off) until an "accept" line.
import { createServer } from 'node:http';

let reports = 0;
let items = 0;
let lastAt = 0;
let refusing = false;
const lags = [];
const sentEvents = new Set();

const server = createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    if (refusing) {
      response.writeHead(503).end();
      return;
    }
    const now = Date.now();
    const { delivery_report: list } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    reports += 1;
    items += list.length;
    if (list.length > 0) lastAt = now;
    for (const item of list) {
      if (item.event !== 'sent' || sentEvents.has(item.event_id)) continue;
      sentEvents.add(item.event_id);
      lags.push(now - parseInt(item.event_id.replace(/-/g, '').slice(0, 12), 16));
    }
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end('{"ok":true}');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));

const percentile = (sorted, p) =>
  sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
process.stdin.setEncoding('utf8').on('data', (text) => {
  for (const line of text.split('\n')) {
    if (line.trim() === 'refuse' || line.trim() === 'accept') refusing = line.trim() === 'refuse';
    if (line.trim() !== 'stats') continue;
    const sorted = [...lags].sort((a, b) => a - b);
    process.stdout.write(
      `${JSON.stringify({ reports, items, sent: sentEvents.size, lastAt, lagP50: percentile(sorted, 0.5), lagP99: percentile(sorted, 0.99) })}\n`,
    );
  }
});
process.stdin.on('end', () => server.close(() => process.exit(0)));
