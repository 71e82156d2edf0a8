// npm run bench [-- scenario]: spawns the built daemon, peers and load generators as
// separate processes, runs each scenario 3 times, prints medians (min-max) and
// writes bench/results/<date>.json. Figures depend on the machine: compare like with like.
import { writeFileSync, mkdirSync, readFileSync, existsSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { bodyStoreScenario } from './body-store.mjs';
import { bouncesAccuracyScenario } from './bounces-accuracy.mjs';
import { dsnFor, startBenchDovecot } from './dovecot.mjs';
import { dkimScenario } from './dkim.mjs';
import { erasureScenario } from './erasure.mjs';
import { fleetScenario } from './fleet.mjs';
import { fleetSpoolScenario } from './fleet-spool.mjs';
import { reportsScenario } from './reports.mjs';
import { scaleScenario } from './scale.mjs';
import { searchScenario } from './search.mjs';
import { uiScenario } from './ui.mjs';
import { vsPostfixScenario } from './vs-postfix.mjs';
import { webhooksScenario } from './webhooks.mjs';
import { versions } from './versions.mjs';
import {
  root,
  children,
  start,
  run,
  api,
  scrapeMetrics,
  startNats,
  mirrorStatus,
  sinkStats,
  waitForSink,
  startPeers,
  cpuMeter,
  clientStats,
  memoryOf,
  sampleRss,
  smtpLoad,
} from './harness.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);

/**
 * The daemon's own intake latency (mailproxy_intake_latency_seconds, http): the share of requests
 * within 10 and 25 ms; and its event loop's delay p99 since the previous scrape (prom-client's).
 */
async function intakeHistogram(d) {
  const { sample } = await scrapeMetrics(d);
  const bucket = (le) => sample(`mailproxy_intake_latency_seconds_bucket{le="${le}",ingress="http"}`);
  const all = bucket('+Inf');
  return {
    shareUnder10ms: bucket('0.01') / all,
    shareUnder25ms: bucket('0.025') / all,
    loopLagP99Ms: sample('nodejs_eventloop_lag_p99_seconds') * 1000,
  };
}

const scenarios = {
  // The bounce parser's accuracy on the shared corpus (issue 30): deterministic, so parsed once per bench process.
  'bounces-accuracy': () => bouncesAccuracyScenario(root),
  async 'http-ingest'() {
    const { d, key, stop } = await startPeers({ suspended: true });
    const load = await run(['bench/http-load.mjs', d.base, key, '8', '100', '2048', '5', 'ingest']);
    await stop();
    return { 'messages/s': load.rate, 'request p50 ms': load.p50, 'request p99 ms': load.p99, errors: load.errors };
  },
  async 'http-single'() {
    // One message per request from 50 concurrent clients: at a steady 1,000 requests/s (the
    // latency a client sees), then as fast as they go (requests/s).
    const { d, key, stop } = await startPeers({ suspended: true });
    try {
      await scrapeMetrics(d); // restarts the event-loop delay histogram
      const steady = await run(['bench/http-load.mjs', d.base, key, '50', '1', '2048', '5', 'steady', '1000']);
      const intake = await intakeHistogram(d);
      const flat = await run(['bench/http-load.mjs', d.base, key, '50', '1', '2048', '5', 'flat']);
      // The same generator against a server that stores nothing: what the machine adds.
      const bare = start(['bench/bare-http.mjs']);
      const { port } = await bare.next((e) => e.port);
      const floor = await run([
        'bench/http-load.mjs',
        `http://127.0.0.1:${port}`,
        key,
        '50',
        '1',
        '2048',
        '5',
        'floor',
        '1000',
      ]);
      bare.child.stdin.end();
      return {
        'requests/s at 1,000/s offered': steady.rate,
        'p50 ms at 1,000/s': steady.p50,
        'p99 ms at 1,000/s': steady.p99,
        '% answered by the daemon within 10 ms': intake.shareUnder10ms * 100,
        '% answered by the daemon within 25 ms': intake.shareUnder25ms * 100,
        'daemon event-loop delay p99 ms at 1,000/s': intake.loopLagP99Ms,
        'bare server p50 ms at 1,000/s': floor.p50,
        'bare server p99 ms at 1,000/s': floor.p99,
        'requests/s flat out': flat.rate,
        'p50 ms flat out': flat.p50,
        'p99 ms flat out': flat.p99,
        errors: steady.errors + flat.errors,
      };
    } finally {
      await stop();
    }
  },
  async 'relay-drain'() {
    // Dispatcher capacity alone: what 1 s of posting queues (~8,000-15,000) while suspended, then
    // released at once (2 s of posting made the drains a minute of the whole bench on a slow night).
    const { sink, d, key, stop } = await startPeers({ suspended: true });
    const load = await run(['bench/http-load.mjs', d.base, key, '4', '100', '2048', '1', 'drain']);
    const meter = cpuMeter(d.daemon.child.pid);
    const started = Date.now();
    await api(d.base, d.token, 'POST', '/commands/activate', { tenant_id: 'bench' });
    const stats = await waitForSink(sink, load.queued, 180_000);
    // The drain's CPU per message relayed (claim, hand-off, outcome, events): read once the sink
    // has every message, so it includes the last outcomes' batches only in part.
    const cpu = meter.perMessage(stats.received);
    await stop();
    return {
      'relayed messages/s': stats.received / ((stats.lastAt - started) / 1000),
      messages: stats.received,
      'all relayed': stats.received >= load.queued ? 1 : 0,
      'daemon CPU µs/message': cpu.all,
      '  of which main thread': cpu.main,
    };
  },
  async 'end-to-end'() {
    // Posted at a steady 2,500 messages/s for 8 s while the daemon relays them.
    const { sink, d, key, stop } = await startPeers({ suspended: false });
    const started = Date.now();
    const load = await run(['bench/http-load.mjs', d.base, key, '4', '100', '2048', '8', 'e2e', '2500']);
    const atEnd = await sinkStats(sink);
    const stats = await waitForSink(sink, load.queued, 120_000);
    await stop();
    return {
      'posted messages/s': load.rate,
      'relayed messages/s (load)': atEnd.received / ((atEnd.lastAt - started) / 1000),
      'backlog at end of load': load.queued - atEnd.received,
      'all relayed': stats.received >= load.queued ? 1 : 0,
    };
  },
  async 'end-to-end-reports'() {
    // As end-to-end, with every outcome reported to the client as it happens: the report loop's
    // cost to the relay rate, and the lag from a `sent` event to the client receiving it.
    const { sink, client, d, key, stop } = await startPeers({ suspended: false, reports: true });
    const started = Date.now();
    const load = await run(['bench/http-load.mjs', d.base, key, '4', '100', '2048', '8', 'e2e', '2500']);
    const atEnd = await sinkStats(sink);
    await waitForSink(sink, load.queued, 120_000);
    const deadline = Date.now() + 60_000;
    let reported = await clientStats(client);
    while (reported.sent < load.queued && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      reported = await clientStats(client);
    }
    await stop();
    return {
      'posted messages/s': load.rate,
      'relayed messages/s (load)': atEnd.received / ((atEnd.lastAt - started) / 1000),
      'report lag p50 ms': reported.lagP50,
      'report lag p99 ms': reported.lagP99,
      'items per report': reported.items / Math.max(1, reported.reports),
      'all reported': reported.sent >= load.queued ? 1 : 0,
    };
  },
  async 'mirror-drain'() {
    // Publisher capacity: 20,000 messages posted (tenant suspended: one `queued` event each)
    // while NATS is down, then NATS back: events/s from reconnecting to an empty backlog,
    // each event published with its PubAck awaited and its message's KV latest state written.
    // Then, against the same server, a bare nats.js client publishing as many.
    const nats = await startNats();
    const { d, key, stop } = await startPeers({
      suspended: true,
      env: { MAILPROXY_NATS_URL: nats.url(), ...(process.env.BENCH_NO_KV ? { MAILPROXY_NATS_KV_BUCKET: '' } : {}) },
    });
    try {
      await nats.stop();
      const load = await run(['bench/http-load.mjs', d.base, key, '4', '100', '2048', '2', 'drain']);
      const backlog = (await mirrorStatus(d)).backlog;
      await nats.start();
      let status = await mirrorStatus(d);
      while (status.state !== 'connected') {
        await new Promise((r) => setTimeout(r, 10));
        status = await mirrorStatus(d);
      }
      const connectedAt = Date.now();
      while (status.backlog > 0) {
        await new Promise((r) => setTimeout(r, 50));
        status = await mirrorStatus(d);
      }
      const seconds = (Date.now() - connectedAt) / 1000;
      // The same nats-server, the same run: a bare nats.js client's acknowledged publishes of an event's size.
      const eventBytes = 600;
      const bare = await run(['bench/bare-nats.mjs', nats.url(), String(backlog), String(eventBytes), '1000']);
      return {
        'events/s': backlog / seconds,
        'bare nats.js acknowledged publishes/s': bare.rate,
        'mirror / bare': backlog / seconds / bare.rate,
        events: backlog,
        'messages posted': load.queued,
      };
    } finally {
      await stop();
      await nats.stop();
    }
  },
  async bounces() {
    // Bounce mailbox throughput: 1,000 DSNs for messages of ours appended to a staging folder of a
    // real Dovecot, then moved into INBOX with one MOVE: DSNs/s from then to the last one recorded
    // (read over IMAP, parsed in the parser thread, tied to the message, suppression written, filed).
    const dovecot = await startBenchDovecot(children);
    const { d, key, stop } = await startPeers({
      suspended: true,
      env: {
        MAILPROXY_BOUNCE_HOST: '127.0.0.1',
        MAILPROXY_BOUNCE_PORT: String(dovecot.port),
        MAILPROXY_BOUNCE_TLS: 'none',
        MAILPROXY_BOUNCE_USER: dovecot.user,
        MAILPROXY_BOUNCE_PASSWORD: dovecot.password,
        MAILPROXY_BOUNCE_PROCESSED_FOLDER: 'Processed',
        MAILPROXY_BOUNCE_POLL_INTERVAL_SECONDS: '3600',
        ...(process.env.BENCH_BOUNCE_BATCH ? { MAILPROXY_BOUNCE_BATCH_SIZE: process.env.BENCH_BOUNCE_BATCH } : {}),
      },
    });
    try {
      const ids = Array.from({ length: 1000 }, (_, index) => `dsn-${index}`);
      for (let at = 0; at < ids.length; at += 100) {
        await api(d.base, key, 'POST', '/add-messages', {
          messages: ids.slice(at, at + 100).map((id) => ({
            id,
            from: 'shop@bench.example',
            to: `${id}@example.net`,
            subject: `order ${id}`,
            body: 'x'.repeat(2048),
          })),
        });
      }
      await dovecot.appendAll(ids.map(dsnFor), 'Staging');
      // The clock starts once the MOVE is done: from then on all 1,000 are in the mailbox (Dovecot's own
      // MOVE of 1,000 messages takes a few hundred ms and is not the daemon's time).
      await dovecot.moveAll('Staging', 'INBOX');
      const started = Date.now();
      const handled = async () => (await api(d.base, d.token, 'GET', '/bounce/status')).mailboxes[0].handled.processed;
      while ((await handled()) < ids.length) {
        if (Date.now() - started > 120_000) throw new Error('the DSNs were not all recorded within 2 minutes');
        await new Promise((r) => setTimeout(r, 20));
      }
      return { 'DSNs/s': ids.length / ((Date.now() - started) / 1000), DSNs: ids.length };
    } finally {
      await stop();
      await dovecot.stop();
    }
  },
  async 'end-to-end-mirror'() {
    // end-to-end with the JetStream mirror on: the relay rate, and each event's lag from its
    // commit to its PubAck (the stream's stored time), read back from the stream afterwards.
    const nats = await startNats();
    const { sink, d, key, stop } = await startPeers({ suspended: false, env: { MAILPROXY_NATS_URL: nats.url() } });
    try {
      const started = Date.now();
      const load = await run(['bench/http-load.mjs', d.base, key, '4', '100', '2048', '8', 'e2e', '2500']);
      const atEnd = await sinkStats(sink);
      await waitForSink(sink, load.queued, 120_000);
      let status = await mirrorStatus(d);
      while (status.backlog > 0) {
        await new Promise((r) => setTimeout(r, 100));
        status = await mirrorStatus(d);
      }
      const lag = await run(['bench/stream-lag.mjs', nats.url(), 'MAILPROXY']);
      return {
        'posted messages/s': load.rate,
        'relayed messages/s (load)': atEnd.received / ((atEnd.lastAt - started) / 1000),
        'events published': lag.count,
        'commit to PubAck p50 ms': lag.p50,
        'commit to PubAck p99 ms': lag.p99,
      };
    } finally {
      await stop();
      await nats.stop();
    }
  },
  async 'smtp-ingest'() {
    // 20 keep-alive sessions, each AUTH once, then 2 KB messages back to back (MAIL/RCPT/DATA
    // pipelined); tenant suspended so that only intake runs; durable commit before each 250.
    const { d, key, stop } = await startPeers({ suspended: true });
    try {
      const load = await smtpLoad(d, key, 'keepalive', 20, 2048, 5, 2);
      return {
        'messages/s': load.rate,
        'message p50 ms': load.p50,
        'message p99 ms': load.p99,
        'daemon CPU µs/message': load.daemonCpuUsPerMessage,
        '  of which system': load.daemonSystemUsPerMessage,
        '  of which main thread': load.mainThreadCpuUsPerMessage,
        errors: load.errors,
      };
    } finally {
      await stop();
    }
  },
  async 'smtp-connection-per-message'() {
    // The same 2 KB messages, each on a new connection: greeting, EHLO, AUTH, MAIL/RCPT/DATA, QUIT; 20 at a time.
    const { d, key, stop } = await startPeers({ suspended: true });
    try {
      const load = await smtpLoad(d, key, 'per-message', 20, 2048, 5, 2);
      return {
        'messages/s': load.rate,
        'connection p50 ms': load.p50,
        'connection p99 ms': load.p99,
        'daemon CPU µs/message': load.daemonCpuUsPerMessage,
        '  of which system': load.daemonSystemUsPerMessage,
        '  of which main thread': load.mainThreadCpuUsPerMessage,
        errors: load.errors,
      };
    } finally {
      await stop();
    }
  },
  reports: reportsScenario,
  search: searchScenario,
  ui: uiScenario,
  scale: scaleScenario,
  erasure: erasureScenario,
  dkim: dkimScenario,
  async 'smtp-large'() {
    // 50 connections at once, each sending one 20 MiB message (spooled to SQLite in 512 KiB parts
    // as it arrives): total time, and the daemon's resident memory above its idle level.
    const { d, key, stop } = await startPeers({ suspended: true });
    try {
      await new Promise((r) => setTimeout(r, 1000));
      const idle = memoryOf(d.daemon.child.pid).rss;
      const stopSampling = sampleRss(d.daemon.child.pid);
      const load = await smtpLoad(d, key, 'large', 50, 20 * 1024 * 1024);
      const peak = stopSampling();
      const { hwm } = memoryOf(d.daemon.child.pid);
      return {
        seconds: load.elapsed,
        'MB/s': load['MB/s'],
        'messages accepted': load.accepted,
        'idle RSS MiB': idle,
        'peak RSS MiB (100 ms samples)': peak,
        'peak - idle MiB': peak - idle,
        'VmHWM MiB': hwm,
        errors: load.errors,
      };
    } finally {
      await stop();
    }
  },
};

scenarios['body-store'] = bodyStoreScenario;
scenarios.webhooks = webhooksScenario;
scenarios['vs-postfix'] = vsPostfixScenario;
// Last: it starts a NATS cluster per configuration and is the longest.
scenarios.fleet = fleetScenario;
scenarios['fleet-spool'] = fleetSpoolScenario;

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const only = process.argv[2];
const results = {
  date: new Date().toISOString(),
  machine: {
    cpu: cpus()[0]?.model,
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
  },
  versions: versions(),
  scenarios: {},
};
if (only !== undefined && !(only in scenarios)) {
  console.error(`unknown scenario ${only}; one of: ${Object.keys(scenarios).join(', ')}`);
  process.exit(2);
}
for (const [name, scenario] of Object.entries(scenarios)) {
  if (only !== undefined && only !== name) continue;
  const runs = [];
  const startedAt = Date.now();
  for (let index = 0; index < RUNS; index += 1) runs.push(await scenario());
  const summary = {};
  for (const metric of Object.keys(runs[0])) {
    const values = runs.map((r) => r[metric]);
    summary[metric] = { median: median(values), min: Math.min(...values), max: Math.max(...values) };
  }
  results.scenarios[name] = { runs, summary };
  console.log(`\n${name} (${Math.round((Date.now() - startedAt) / 1000)} s)`);
  for (const [metric, s] of Object.entries(summary))
    console.log(
      `  ${metric.padEnd(36)} ${s.median.toFixed(1).padStart(10)}  (${s.min.toFixed(1)}-${s.max.toFixed(1)})`,
    );
}
mkdirSync(join(root, 'bench/results'), { recursive: true });
const file = join(root, 'bench/results', `${results.date.slice(0, 10)}.json`);
// Another run of the same day keeps the scenarios this one did not run.
if (existsSync(file)) {
  const earlier = JSON.parse(readFileSync(file, 'utf8'));
  results.scenarios = { ...earlier.scenarios, ...results.scenarios };
}
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
console.log(`\nmachine: ${results.machine.cpu}, ${results.machine.cores} cores, node ${results.machine.node}`);
console.log(
  `versions: ${Object.entries(results.versions)
    .map(([name, value]) => `${name} ${value}`)
    .join(', ')}\nwritten: ${file}`,
);
process.exit(0);
