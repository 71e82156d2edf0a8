// npm run bench [-- scenario]: spawns the built daemon, peers and load generators as
// separate processes, runs each scenario 3 times, prints medians (min-max) and
// writes bench/results/<date>.json. Figures depend on the machine: compare like with like.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { dsnFor, startBenchDovecot } from './dovecot.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const children = new Set();
const dataDirs = new Set();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});
// Interrupted (Ctrl-C, kill): leave through 'exit' so that the children and data directories go too.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => process.exit(130));

function start(args, env = {}) {
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] });
  children.add(child);
  child.on('exit', () => children.delete(child));
  const lines = createInterface({ input: child.stdout });
  const waiters = [];
  lines.on('line', (line) => {
    let parsed;
    try { parsed = JSON.parse(line); } catch { return; }
    for (const waiter of [...waiters]) if (waiter.match(parsed)) { waiters.splice(waiters.indexOf(waiter), 1); waiter.resolve(parsed); }
  });
  const next = (match) => new Promise((resolve) => waiters.push({ match, resolve }));
  return { child, next };
}

/** Runs a load generator to its one JSON line; fails if it ends without one. */
async function run(args) {
  const proc = start(args);
  const ended = new Promise((_, reject) => proc.child.once('close', (code) => reject(new Error(`${args[0]} ended (${code}) without a result`))));
  return Promise.race([proc.next(() => true), ended]);
}

async function api(base, token, method, path, body) {
  const response = await fetch(base + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return response.json();
}

async function startDaemon(env = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'mailproxy-bench-'));
  dataDirs.add(dataDir);
  const daemon = start([...(process.env.BENCH_DAEMON_NODE_ARGS ?? '').split(' ').filter(Boolean), 'dist/cli/main.js', 'serve'], { MAILPROXY_DATA_DIR: dataDir, MAILPROXY_HTTP_LISTEN: '127.0.0.1:0', MAILPROXY_SMTP_LISTEN: '127.0.0.1:0', MAILPROXY_LOG_LEVEL: 'warn', ...env });
  // Listening is logged at info (as is every HTTP request); at warn the ports are found with ss instead.
  const created = await daemon.next((entry) => entry.msg?.startsWith('admin token created'));
  void created;
  const { http, smtp } = await findPorts(daemon.child.pid);
  const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  return {
    daemon, dataDir, base: `http://127.0.0.1:${http}`, smtpPort: smtp, token,
    async stop() {
      if (daemon.child.exitCode === null && daemon.child.signalCode === null) {
        const exited = new Promise((r) => daemon.child.once('exit', r));
        daemon.child.kill('SIGTERM');
        await exited;
      }
      rmSync(dataDir, { recursive: true, force: true });
      dataDirs.delete(dataDir);
    },
  };
}

function listeningPorts(pid) {
  return new Promise((resolve) => {
    const ss = spawn('ss', ['-ltnpH']);
    let out = '';
    ss.stdout.on('data', (d) => (out += d));
    ss.on('exit', () => resolve(out.split('\n').filter((row) => row.includes(`pid=${pid},`)).map((row) => Number(/127\.0\.0\.1:(\d+)/.exec(row)?.[1])).filter(Boolean)));
  });
}

/** Whether the listener at `port` greets with 220 (SMTP, which greets loopback at once) or stays silent (HTTP). */
function greetsSmtp(port) {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    const done = (smtp) => { clearTimeout(timer); socket.removeAllListeners('data'); if (smtp) socket.end('QUIT\r\n'); else socket.destroy(); resolve(smtp); };
    const timer = setTimeout(() => done(false), 1000);
    socket.on('data', (data) => done(data.toString('latin1').startsWith('220')));
    socket.on('error', () => done(false));
  });
}

/** The daemon's HTTP and SMTP ports: it listens on both (HTTP first), told apart by the SMTP greeting. */
async function findPorts(pid) {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const ports = await listeningPorts(pid);
    if (ports.length >= 2) {
      const smtp = [];
      const http = [];
      const greets = await Promise.all(ports.map(greetsSmtp));
      ports.forEach((port, index) => (greets[index] ? smtp : http).push(port));
      if (smtp.length === 1 && http.length === 1) return { http: http[0], smtp: smtp[0] };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('daemon did not start listening on HTTP and SMTP');
}

async function setupTenant(d, sinkPort, clientBaseUrl = null) {
  const tenant = await api(d.base, d.token, 'POST', '/tenant', { id: 'bench', client_base_url: clientBaseUrl });
  await api(d.base, d.token, 'POST', '/account', { id: 'relay', tenant_id: 'bench', host: '127.0.0.1', port: sinkPort, tls_mode: 'none', max_connections: 5, max_messages_per_connection: 100000, is_default: true });
  return tenant.api_key;
}

/** A nats-server with JetStream on a random port and its own store; stop() and start() again keep both. */
async function startNats() {
  const dir = mkdtempSync(join(tmpdir(), 'mailproxy-bench-nats-'));
  dataDirs.add(dir);
  const binary = existsSync('/usr/sbin/nats-server') ? '/usr/sbin/nats-server' : 'nats-server';
  let child = null;
  let port = -1;
  const start = async () => {
    child = spawn(binary, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', join(dir, 'js'), '--ports_file_dir', dir], { stdio: 'ignore' });
    children.add(child);
    const file = join(dir, `nats-server_${child.pid}.ports`);
    const deadline = Date.now() + 10_000;
    while (!existsSync(file)) {
      if (Date.now() > deadline) throw new Error('nats-server did not start');
      await new Promise((r) => setTimeout(r, 20));
    }
    port = Number(new URL(JSON.parse(readFileSync(file, 'utf8')).nats[0].replace('nats://', 'http://')).port);
  };
  const stop = async () => {
    const running = child;
    child = null;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGTERM');
    await exited;
    children.delete(running);
    rmSync(join(dir, `nats-server_${running.pid}.ports`), { force: true });
  };
  await start();
  return { url: () => `nats://127.0.0.1:${port}`, start, stop };
}

async function mirrorStatus(d) {
  return (await api(d.base, d.token, 'GET', '/mirror/status')).mirror;
}

async function sinkStats(sink) {
  sink.child.stdin.write('stats\n');
  return sink.next((e) => 'received' in e);
}

async function waitForSink(sink, count, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let stats = await sinkStats(sink);
  while (stats.received < count && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    stats = await sinkStats(sink);
  }
  return stats;
}

/**
 * A sink, a daemon, and tenant `bench` whose default account (pool of 5) relays to the sink;
 * with `reports`, the tenant's delivery reports go to a client endpoint (bench/report-client.mjs).
 */
async function startPeers({ suspended, env, reports = false }) {
  const sink = start(['bench/sink.mjs']);
  const { port } = await sink.next((e) => e.port);
  const client = reports ? start(['bench/report-client.mjs']) : null;
  const clientPort = client === null ? null : (await client.next((e) => e.port)).port;
  const d = await startDaemon(env);
  const key = await setupTenant(d, port, clientPort === null ? null : `http://127.0.0.1:${clientPort}`);
  if (suspended) await api(d.base, d.token, 'POST', '/commands/suspend', { tenant_id: 'bench' });
  return {
    sink, client, d, key,
    async stop() {
      await d.stop();
      sink.child.stdin.end();
      client?.child.stdin.end();
    },
  };
}

async function clientStats(client) {
  client.child.stdin.write('stats\n');
  return client.next((e) => 'reports' in e);
}

/** The daemon's resident memory in MiB (VmRSS now, VmHWM the peak since it started), from /proc. */
function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) / 1024;
  return { rss: field('VmRSS'), hwm: field('VmHWM') };
}

/** Samples the daemon's VmRSS every 100 ms until stopped; returns the highest seen. */
function sampleRss(pid) {
  let peak = 0;
  const take = () => { try { peak = Math.max(peak, memoryOf(pid).rss); } catch { /* exited */ } };
  take();
  const timer = setInterval(take, 100);
  return () => { clearInterval(timer); take(); return peak; };
}

/** CPU time the process has used so far (all its threads, or only its main thread), user and system, in ms. */
function cpuOf(pid, mainThreadOnly = false) {
  const fields = readFileSync(mainThreadOnly ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
  return { user: (Number(fields[11]) * 1000) / 100, system: (Number(fields[12]) * 1000) / 100 }; // clock ticks (USER_HZ = 100)
}

/**
 * An SMTP load run (bench/smtp-load.mjs) against the daemon as tenant `bench`; reports its
 * errors on stderr. Adds the daemon's CPU time per message: less sensitive than the rate to
 * whatever else runs on the machine.
 */
async function smtpLoad(d, key, ...args) {
  const pid = d.daemon.child.pid;
  const before = { all: cpuOf(pid), main: cpuOf(pid, true) };
  const load = await run(['bench/smtp-load.mjs', String(d.smtpPort), 'bench', key, ...args.map(String)]);
  const after = { all: cpuOf(pid), main: cpuOf(pid, true) };
  const perMessage = (ms) => (ms * 1000) / Math.max(1, load.completed ?? load.accepted);
  const spent = (which) => after[which].user - before[which].user + after[which].system - before[which].system;
  load.daemonCpuUsPerMessage = perMessage(spent('all'));
  load.daemonSystemUsPerMessage = perMessage(after.all.system - before.all.system);
  load.mainThreadCpuUsPerMessage = perMessage(spent('main'));
  if (load.errors > 0) console.error(`  ${load.errors} errors:`, load.errorSamples);
  return load;
}

const scenarios = {
  async 'http-ingest'() {
    const { d, key, stop } = await startPeers({ suspended: true });
    const load = await run(['bench/http-load.mjs', d.base, key, '8', '100', '2048', '10', 'ingest']);
    await stop();
    return { 'messages/s': load.rate, 'request p50 ms': load.p50, 'request p99 ms': load.p99, errors: load.errors };
  },
  async 'relay-drain'() {
    // Dispatcher capacity alone: 20,000 queued while suspended, then released at once.
    const { sink, d, key, stop } = await startPeers({ suspended: true });
    const load = await run(['bench/http-load.mjs', d.base, key, '4', '100', '2048', '3', 'drain']);
    const started = Date.now();
    await api(d.base, d.token, 'POST', '/commands/activate', { tenant_id: 'bench' });
    const stats = await waitForSink(sink, load.queued, 180_000);
    await stop();
    return { 'relayed messages/s': stats.received / ((stats.lastAt - started) / 1000), messages: stats.received, 'all relayed': stats.received >= load.queued ? 1 : 0 };
  },
  async 'end-to-end'() {
    // Posted at a steady 2,500 messages/s for 15 s while the daemon relays them.
    const { sink, d, key, stop } = await startPeers({ suspended: false });
    const started = Date.now();
    const load = await run(['bench/http-load.mjs', d.base, key, '4', '100', '2048', '15', 'e2e', '2500']);
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
    const load = await run(['bench/http-load.mjs', d.base, key, '4', '100', '2048', '15', 'e2e', '2500']);
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
    const nats = await startNats();
    const { d, key, stop } = await startPeers({ suspended: true, env: { MAILPROXY_NATS_URL: nats.url(), ...(process.env.BENCH_NO_KV ? { MAILPROXY_NATS_KV_BUCKET: '' } : {}) } });
    try {
      await nats.stop();
      const load = await run(['bench/http-load.mjs', d.base, key, '4', '100', '2048', '3', 'drain']);
      const backlog = (await mirrorStatus(d)).backlog;
      await nats.start();
      let status = await mirrorStatus(d);
      while (status.state !== 'connected') { await new Promise((r) => setTimeout(r, 10)); status = await mirrorStatus(d); }
      const connectedAt = Date.now();
      while (status.backlog > 0) { await new Promise((r) => setTimeout(r, 50)); status = await mirrorStatus(d); }
      const seconds = (Date.now() - connectedAt) / 1000;
      return { 'events/s': backlog / seconds, events: backlog, 'messages posted': load.queued };
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
    const { d, key, stop } = await startPeers({ suspended: true, env: {
      MAILPROXY_BOUNCE_HOST: '127.0.0.1', MAILPROXY_BOUNCE_PORT: String(dovecot.port), MAILPROXY_BOUNCE_TLS: 'none',
      MAILPROXY_BOUNCE_USER: dovecot.user, MAILPROXY_BOUNCE_PASSWORD: dovecot.password,
      MAILPROXY_BOUNCE_PROCESSED_FOLDER: 'Processed', MAILPROXY_BOUNCE_POLL_INTERVAL_SECONDS: '3600', ...(process.env.BENCH_BOUNCE_BATCH ? { MAILPROXY_BOUNCE_BATCH_SIZE: process.env.BENCH_BOUNCE_BATCH } : {}),
    } });
    try {
      const ids = Array.from({ length: 1000 }, (_, index) => `dsn-${index}`);
      for (let at = 0; at < ids.length; at += 100) {
        await api(d.base, key, 'POST', '/add-messages', { messages: ids.slice(at, at + 100).map((id) => ({ id, from: 'shop@bench.example', to: `${id}@example.net`, subject: `order ${id}`, body: 'x'.repeat(2048) })) });
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
      const load = await run(['bench/http-load.mjs', d.base, key, '4', '100', '2048', '15', 'e2e', '2500']);
      const atEnd = await sinkStats(sink);
      await waitForSink(sink, load.queued, 120_000);
      let status = await mirrorStatus(d);
      while (status.backlog > 0) { await new Promise((r) => setTimeout(r, 100)); status = await mirrorStatus(d); }
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
      const load = await smtpLoad(d, key, 'keepalive', 20, 2048, 10, 2);
      return { 'messages/s': load.rate, 'message p50 ms': load.p50, 'message p99 ms': load.p99, 'daemon CPU µs/message': load.daemonCpuUsPerMessage, '  of which system': load.daemonSystemUsPerMessage, '  of which main thread': load.mainThreadCpuUsPerMessage, errors: load.errors };
    } finally {
      await stop();
    }
  },
  async 'smtp-connection-per-message'() {
    // The same 2 KB messages, each on a new connection: greeting, EHLO, AUTH, MAIL/RCPT/DATA, QUIT; 20 at a time.
    const { d, key, stop } = await startPeers({ suspended: true });
    try {
      const load = await smtpLoad(d, key, 'per-message', 20, 2048, 10, 2);
      return { 'messages/s': load.rate, 'connection p50 ms': load.p50, 'connection p99 ms': load.p99, 'daemon CPU µs/message': load.daemonCpuUsPerMessage, '  of which system': load.daemonSystemUsPerMessage, '  of which main thread': load.mainThreadCpuUsPerMessage, errors: load.errors };
    } finally {
      await stop();
    }
  },
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

const median = (values) => { const sorted = [...values].sort((a, b) => a - b); return sorted[Math.floor(sorted.length / 2)]; };
const only = process.argv[2];
const results = { date: new Date().toISOString(), machine: { cpu: cpus()[0]?.model, cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version }, scenarios: {} };
if (only !== undefined && !(only in scenarios)) {
  console.error(`unknown scenario ${only}; one of: ${Object.keys(scenarios).join(', ')}`);
  process.exit(2);
}
for (const [name, scenario] of Object.entries(scenarios)) {
  if (only !== undefined && only !== name) continue;
  const runs = [];
  for (let index = 0; index < RUNS; index += 1) runs.push(await scenario());
  const summary = {};
  for (const metric of Object.keys(runs[0])) {
    const values = runs.map((r) => r[metric]);
    summary[metric] = { median: median(values), min: Math.min(...values), max: Math.max(...values) };
  }
  results.scenarios[name] = { runs, summary };
  console.log(`\n${name}`);
  for (const [metric, s] of Object.entries(summary)) console.log(`  ${metric.padEnd(30)} ${s.median.toFixed(1).padStart(10)}  (${s.min.toFixed(1)}-${s.max.toFixed(1)})`);
}
mkdirSync(join(root, 'bench/results'), { recursive: true });
const file = join(root, 'bench/results', `${results.date.slice(0, 10)}.json`);
// Another run of the same day keeps the scenarios this one did not run.
if (existsSync(file)) {
  const earlier = JSON.parse(readFileSync(file, 'utf8'));
  results.scenarios = { ...earlier.scenarios, ...results.scenarios };
}
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
console.log(`\nmachine: ${results.machine.cpu}, ${results.machine.cores} cores, node ${results.machine.node}\nwritten: ${file}`);
process.exit(0);
