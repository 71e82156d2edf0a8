// npm run bench [-- scenario]: spawns the built daemon, peers and load generators as
// separate processes, runs each scenario 3 times, prints medians (min-max) and
// writes bench/results/<date>.json. Figures depend on the machine: compare like with like.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const children = new Set();
process.on('exit', () => { for (const child of children) child.kill('SIGKILL'); });

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

async function run(args) {
  const proc = start(args);
  const result = await proc.next(() => true);
  return result;
}

async function api(base, token, method, path, body) {
  const response = await fetch(base + path, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return response.json();
}

async function startDaemon() {
  const dataDir = mkdtempSync(join(tmpdir(), 'mailproxy-bench-'));
  const daemon = start([...(process.env.BENCH_DAEMON_NODE_ARGS ?? '').split(' ').filter(Boolean), 'dist/cli/main.js', 'serve'], { MAILPROXY_DATA_DIR: dataDir, MAILPROXY_HTTP_LISTEN: '127.0.0.1:0', MAILPROXY_SMTP_LISTEN: '127.0.0.1:0', MAILPROXY_LOG_LEVEL: 'warn' });
  // Listening is logged at info; at warn we find the port through the ready probe instead.
  const created = await daemon.next((entry) => entry.msg?.startsWith('admin token created'));
  void created;
  const port = await findPort(daemon.child.pid);
  const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  return { daemon, dataDir, base: `http://127.0.0.1:${port}`, token, async stop() { daemon.child.kill('SIGTERM'); await new Promise((r) => daemon.child.once('exit', r)); rmSync(dataDir, { recursive: true, force: true }); } };
}

async function findPort(pid) {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const text = await new Promise((resolve) => { const ss = spawn('ss', ['-ltnpH']); let out = ''; ss.stdout.on('data', (d) => (out += d)); ss.on('exit', () => resolve(out)); });
    const line = text.split('\n').find((row) => row.includes(`pid=${pid},`));
    if (line) return Number(/127\.0\.0\.1:(\d+)/.exec(line)?.[1]);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('daemon did not start listening');
}

async function setupTenant(d, sinkPort) {
  const tenant = await api(d.base, d.token, 'POST', '/tenant', { id: 'bench' });
  await api(d.base, d.token, 'POST', '/account', { id: 'relay', tenant_id: 'bench', host: '127.0.0.1', port: sinkPort, tls_mode: 'none', max_connections: 5, max_messages_per_connection: 100000, is_default: true });
  return tenant.api_key;
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

/** A sink, a daemon, and tenant `bench` whose default account (pool of 5) relays to the sink. */
async function startPeers({ suspended }) {
  const sink = start(['bench/sink.mjs']);
  const { port } = await sink.next((e) => e.port);
  const d = await startDaemon();
  const key = await setupTenant(d, port);
  if (suspended) await api(d.base, d.token, 'POST', '/commands/suspend', { tenant_id: 'bench' });
  return {
    sink, d, key,
    async stop() {
      await d.stop();
      sink.child.stdin.end();
    },
  };
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
};

const median = (values) => { const sorted = [...values].sort((a, b) => a - b); return sorted[Math.floor(sorted.length / 2)]; };
const only = process.argv[2];
const results = { date: new Date().toISOString(), machine: { cpu: cpus()[0]?.model, cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version }, scenarios: {} };
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
  for (const [metric, s] of Object.entries(summary)) console.log(`  ${metric.padEnd(26)} ${s.median.toFixed(1).padStart(10)}  (${s.min.toFixed(1)}-${s.max.toFixed(1)})`);
}
mkdirSync(join(root, 'bench/results'), { recursive: true });
const file = join(root, 'bench/results', `${results.date.slice(0, 10)}.json`);
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
console.log(`\nmachine: ${results.machine.cpu}, ${results.machine.cores} cores, node ${results.machine.node}\nwritten: ${file}`);
process.exit(0);
