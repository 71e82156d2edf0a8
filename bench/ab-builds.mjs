// Builds of the daemon side by side in one sitting: `node bench/ab-builds.mjs ROUNDS BUILD[:ENV] ...`,
// each BUILD a `dist/cli/main.js` (this checkout's or a copy of another's inside the repo, as
// BENCH_DAEMON_SCRIPT), ENV a JSON object of daemon environment (`'dist/cli/main.js:{"MAILPROXY_SMTP_SESSION_PROCESSES":"1"}'`).
// Each round starts each build in turn (the order reversed every other round), relays through it
// what vs-postfix does (smtp-source, 20 sessions of 2 KB from loopback, to Postfix's smtp-sink):
// 2,000 keep-alive not counted, then 6,000 counted; 500 a connection per message not counted, then
// 2,000 counted (AB_MODE=ka: keep-alive only). It prints each round and the medians: end-to-end
// msg/s and the daemon's CPU µs a message, all threads (its session processes included) and the
// main thread. Longer windows and no floor or Postfix runs: for telling two builds apart, where
// vs-postfix tells the daemon from its peers.
import { cpuMeter, startDaemon, setupTenant } from './harness.mjs';
import { ensurePostfix, smtpSource, startPostfixSink } from './postfix.mjs';

const SESSIONS = 20;
const [rounds, ...variants] = process.argv.slice(2);
if (rounds === undefined || variants.length === 0) {
  console.error('usage: node bench/ab-builds.mjs ROUNDS BUILD[:ENV] ...');
  process.exit(2);
}
const builds = variants.map((variant) => {
  const at = variant.indexOf(':');
  return at < 0
    ? { script: variant, env: {} }
    : { script: variant.slice(0, at), env: JSON.parse(variant.slice(at + 1)) };
});

ensurePostfix();
const sink = await startPostfixSink();

async function measure(port, count, keepAlive, pid) {
  const before = sink.count();
  const meter = pid === null ? null : cpuMeter(pid);
  const { startedAt } = await smtpSource(port, { sessions: SESSIONS, count, bytes: 2048, keepAlive });
  const doneAt = await sink.waitFor(before + count, 180_000);
  const cpu = meter?.perMessage(count);
  return { rate: count / ((doneAt - startedAt) / 1000), all: cpu?.all ?? 0, main: cpu?.main ?? 0 };
}

async function measureBuild(build) {
  process.env.BENCH_DAEMON_SCRIPT = build.script;
  const d = await startDaemon({
    MAILPROXY_SMTP_TRUSTED_NETWORKS: JSON.stringify([{ network: '127.0.0.0/8', tenant_id: 'bench' }]),
    ...build.env,
  });
  try {
    await setupTenant(d, sink.port, null, { max_connections: SESSIONS });
    const pid = d.daemon.child.pid;
    await measure(d.smtpPort, 2000, true, null);
    const keepAlive = await measure(d.smtpPort, 6000, true, pid);
    if (process.env.AB_MODE === 'ka') return { keepAlive, perConnection: null };
    await measure(d.smtpPort, 500, false, null);
    return { keepAlive, perConnection: await measure(d.smtpPort, 2000, false, pid) };
  } finally {
    await d.stop();
  }
}

const shown = (m) =>
  m === null ? '-' : `${m.rate.toFixed(0)} msg/s, CPU ${m.all.toFixed(0)}, main ${m.main.toFixed(0)}`;
const results = builds.map(() => []);
try {
  for (let round = 0; round < Number(rounds); round += 1) {
    const order = builds.map((_, index) => index);
    if (round % 2 === 1) order.reverse();
    for (const index of order) {
      const result = await measureBuild(builds[index]);
      results[index].push(result);
      console.log(
        `round ${round + 1}, ${variants[index]}: keep-alive ${shown(result.keepAlive)} | a connection per message ${shown(result.perConnection)}`,
      );
    }
  }
} finally {
  sink.stop();
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const medians = (runs) =>
  runs[0] === null
    ? null
    : {
        rate: median(runs.map((m) => m.rate)),
        all: median(runs.map((m) => m.all)),
        main: median(runs.map((m) => m.main)),
      };
builds.forEach((_, index) => {
  const runs = results[index];
  console.log(
    `median, ${variants[index]}: keep-alive ${shown(medians(runs.map((r) => r.keepAlive)))} | a connection per message ${shown(medians(runs.map((r) => r.perConnection)))}`,
  );
});
process.exit(0);
