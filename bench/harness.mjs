// The benchmark's harness (bench/run.mjs runs the scenarios): the daemon, peers and load
// generators as child processes, the daemon's ports, CPU and memory from /proc, and the
// clean-up of every process and data directory, also when interrupted.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('..', import.meta.url));
export const children = new Set();
const dataDirs = new Set();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});
// Interrupted (Ctrl-C, kill): leave through 'exit' so that the children and data directories go too.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => process.exit(130));

export function start(args, env = {}) {
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  const lines = createInterface({ input: child.stdout });
  const waiters = [];
  lines.on('line', (line) => {
    let parsed;
    try {
      parsed = JSON.parse(line);
    } catch {
      return;
    }
    for (const waiter of [...waiters])
      if (waiter.match(parsed)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(parsed);
      }
  });
  const next = (match) => new Promise((resolve) => waiters.push({ match, resolve }));
  return { child, next };
}

/** Runs a load generator to its one JSON line; fails if it ends without one. */
export async function run(args) {
  const proc = start(args);
  const ended = new Promise((_, reject) =>
    proc.child.once('close', (code) => reject(new Error(`${args[0]} ended (${code}) without a result`))),
  );
  return Promise.race([proc.next(() => true), ended]);
}

export async function api(base, token, method, path, body) {
  const response = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return response.json();
}

/** A fresh data directory, removed when the bench ends (or by the daemon's stop()). */
export function benchDataDir() {
  const dataDir = mkdtempSync(join(tmpdir(), 'mailproxy-bench-'));
  dataDirs.add(dataDir);
  return dataDir;
}

/**
 * The built daemon on a fresh data directory, or on `dataDir` (a database made earlier: then
 * stop() leaves the directory). `startedIn` is the time from spawning it to both listeners open.
 */
export async function startDaemon(env = {}, { dataDir: existing } = {}) {
  const dataDir = existing ?? benchDataDir();
  const spawnedAt = Date.now();
  // BENCH_DAEMON_SCRIPT: another build of the daemon (a directory inside the repo, for its
  // node_modules), to compare two builds side by side in one run.
  const script = process.env.BENCH_DAEMON_SCRIPT ?? 'dist/cli/main.js';
  const daemon = start([...(process.env.BENCH_DAEMON_NODE_ARGS ?? '').split(' ').filter(Boolean), script, 'serve'], {
    MAILPROXY_DATA_DIR: dataDir,
    MAILPROXY_HTTP_LISTEN: '127.0.0.1:0',
    MAILPROXY_SMTP_LISTEN: '127.0.0.1:0',
    MAILPROXY_LOG_LEVEL: 'warn',
    ...env,
  });
  // Listening is logged at info (as is every HTTP request); at warn the ports are found with ss instead.
  if (existing === undefined) await daemon.next((entry) => entry.msg?.startsWith('admin token created'));
  const { http, smtp } = await findPorts(daemon.child.pid);
  const startedIn = Date.now() - spawnedAt;
  const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  return {
    daemon,
    dataDir,
    base: `http://127.0.0.1:${http}`,
    smtpPort: smtp,
    token,
    startedIn,
    async stop() {
      if (daemon.child.exitCode === null && daemon.child.signalCode === null) {
        const exited = new Promise((r) => daemon.child.once('exit', r));
        daemon.child.kill('SIGTERM');
        await exited;
      }
      if (existing !== undefined) return;
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
    ss.on('exit', () =>
      resolve(
        out
          .split('\n')
          .filter((row) => row.includes(`pid=${pid},`))
          .map((row) => Number(/127\.0\.0\.1:(\d+)/.exec(row)?.[1]))
          .filter(Boolean),
      ),
    );
  });
}

/** Whether the listener at `port` greets with 220 (SMTP, which greets loopback at once) or stays silent (HTTP). */
function greetsSmtp(port) {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    const done = (smtp) => {
      clearTimeout(timer);
      socket.removeAllListeners('data');
      if (smtp) socket.end('QUIT\r\n');
      else socket.destroy();
      resolve(smtp);
    };
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

/** The body of tenant `bench`'s default account `relay` to the sink (pool of 5); `account` adds fields (limits). */
export const relayAccount = (sinkPort, account = {}) => ({
  id: 'relay',
  tenant_id: 'bench',
  host: '127.0.0.1',
  port: sinkPort,
  tls_mode: 'none',
  max_connections: 5,
  max_messages_per_connection: 100000,
  is_default: true,
  ...account,
});

/** Tenant `bench` with its default account `relay` to the sink; `account` adds fields to the account (limits). */
export async function setupTenant(d, sinkPort, clientBaseUrl = null, account = {}) {
  const tenant = await api(d.base, d.token, 'POST', '/tenant', { id: 'bench', client_base_url: clientBaseUrl });
  await api(d.base, d.token, 'POST', '/account', relayAccount(sinkPort, account));
  return tenant.api_key;
}

/** A discarding SMTP sink (bench/sink.mjs) in its own process: its port, and stop(). */
export async function startSink() {
  const sink = start(['bench/sink.mjs']);
  const { port } = await sink.next((e) => e.port);
  return { sink, port, stop: () => sink.child.stdin.end() };
}

/**
 * One scrape of the daemon's GET /metrics: `sample(line)` is the value of the sample written
 * exactly `line` (name and labels, as prom-client prints them), NaN when there is none.
 */
export async function scrapeMetrics(d) {
  const text = await (await fetch(`${d.base}/metrics`, { headers: { authorization: `Bearer ${d.token}` } })).text();
  const values = new Map(
    text
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#'))
      .map((line) => [line.slice(0, line.lastIndexOf(' ')), Number(line.slice(line.lastIndexOf(' ') + 1))]),
  );
  return { sample: (line) => values.get(line) ?? NaN };
}

/** The client URL in a nats-server ports file, or null while the file is not whole yet. */
function portsUrl(text) {
  try {
    return JSON.parse(text).nats?.[0] ?? null;
  } catch {
    return null;
  }
}

/** A nats-server with JetStream on a random port and its own store; stop() and start() again keep both. */
export async function startNats() {
  const dir = mkdtempSync(join(tmpdir(), 'mailproxy-bench-nats-'));
  dataDirs.add(dir);
  const binary = existsSync('/usr/sbin/nats-server') ? '/usr/sbin/nats-server' : 'nats-server';
  let child = null;
  let port = -1;
  const start = async () => {
    child = spawn(
      binary,
      ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', join(dir, 'js'), '--ports_file_dir', dir],
      { stdio: 'ignore' },
    );
    children.add(child);
    const file = join(dir, `nats-server_${child.pid}.ports`);
    const deadline = Date.now() + 10_000;
    // nats-server writes the file in place: one read half-written (empty) is read again.
    let url;
    while ((url = existsSync(file) ? portsUrl(readFileSync(file, 'utf8')) : null) === null) {
      if (Date.now() > deadline) throw new Error('nats-server did not start');
      await new Promise((r) => setTimeout(r, 20));
    }
    port = Number(new URL(url.replace('nats://', 'http://')).port);
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

export async function mirrorStatus(d) {
  return (await api(d.base, d.token, 'GET', '/mirror/status')).mirror;
}

export async function sinkStats(sink) {
  sink.child.stdin.write('stats\n');
  return sink.next((e) => 'received' in e);
}

export async function waitForSink(sink, count, timeoutMs) {
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
export async function startPeers({ suspended, env, reports = false }) {
  const { sink, port } = await startSink();
  const client = reports ? start(['bench/report-client.mjs']) : null;
  const clientPort = client === null ? null : (await client.next((e) => e.port)).port;
  const d = await startDaemon(env);
  const key = await setupTenant(d, port, clientPort === null ? null : `http://127.0.0.1:${clientPort}`);
  if (suspended) await api(d.base, d.token, 'POST', '/commands/suspend', { tenant_id: 'bench' });
  return {
    sink,
    client,
    d,
    key,
    async stop() {
      await d.stop();
      sink.child.stdin.end();
      client?.child.stdin.end();
    },
  };
}

export async function clientStats(client) {
  client.child.stdin.write('stats\n');
  return client.next((e) => 'reports' in e);
}

/** The daemon's resident memory in MiB (VmRSS now, VmHWM the peak since it started), from /proc. */
export function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) / 1024;
  return { rss: field('VmRSS'), hwm: field('VmHWM') };
}

/** Samples the daemon's VmRSS every 100 ms until stopped; returns the highest seen. */
export function sampleRss(pid) {
  let peak = 0;
  const take = () => {
    try {
      peak = Math.max(peak, memoryOf(pid).rss);
    } catch {
      /* exited */
    }
  };
  take();
  const timer = setInterval(take, 100);
  return () => {
    clearInterval(timer);
    take();
    return peak;
  };
}

/** CPU time the process has used so far (all its threads, or only its main thread), user and system, in ms. */
export function cpuOf(pid, mainThreadOnly = false) {
  const fields = readFileSync(mainThreadOnly ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /s, '')
    .split(' ');
  return { user: (Number(fields[11]) * 1000) / 100, system: (Number(fields[12]) * 1000) / 100 }; // clock ticks (USER_HZ = 100)
}

/** The daemon's child processes now running (its SMTP session processes, `[smtp] session_processes`). */
function childrenOf(pid) {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The CPU of the process and of its children (each read while it runs: a child replaced meanwhile is not counted). */
function cpuWithChildren(pid) {
  const total = cpuOf(pid);
  for (const child of childrenOf(pid)) {
    try {
      const used = cpuOf(child);
      total.user += used.user;
      total.system += used.system;
    } catch {
      // It exited between the listing and the read.
    }
  }
  return total;
}

/**
 * A CPU meter on the daemon `pid` from now: `perMessage(count)` answers its CPU µs per message
 * since then, all threads and its session processes (`all`), the kernel's part (`system`) and
 * the main thread's (`main`).
 */
export function cpuMeter(pid) {
  const read = () => ({ all: cpuWithChildren(pid), main: cpuOf(pid, true) });
  const before = read();
  return {
    perMessage(count) {
      const after = read();
      const spent = (which) => after[which].user - before[which].user + after[which].system - before[which].system;
      const per = (ms) => (ms * 1000) / Math.max(1, count);
      return { all: per(spent('all')), system: per(after.all.system - before.all.system), main: per(spent('main')) };
    },
  };
}

/**
 * An SMTP load run (bench/smtp-load.mjs) against the daemon as tenant `bench`; reports its
 * errors on stderr. Adds the daemon's CPU time per message: less sensitive than the rate to
 * whatever else runs on the machine.
 */
export async function smtpLoad(d, key, ...args) {
  const meter = cpuMeter(d.daemon.child.pid);
  const load = await run(['bench/smtp-load.mjs', String(d.smtpPort), 'bench', key, ...args.map(String)]);
  const cpu = meter.perMessage(load.completed ?? load.accepted);
  load.daemonCpuUsPerMessage = cpu.all;
  load.daemonSystemUsPerMessage = cpu.system;
  load.mainThreadCpuUsPerMessage = cpu.main;
  if (load.errors > 0) console.error(`  ${load.errors} errors:`, load.errorSamples);
  return load;
}
