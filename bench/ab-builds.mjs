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
import { ensurePostfix, startPostfixSink } from './postfix.mjs';
import { measure, withMailproxy } from './vs-postfix.mjs';

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

/** vs-postfix's measure, as the figures shown here: end-to-end rate and CPU a message. */
const counted = async (port, count, keepAlive, pid) => {
  const { endToEnd, cpuUs, mainUs } = await measure(sink, port, count, keepAlive, pid);
  return { rate: endToEnd, all: cpuUs, main: mainUs };
};

function measureBuild(build) {
  // The harness starts the build BENCH_DAEMON_SCRIPT names.
  process.env.BENCH_DAEMON_SCRIPT = build.script;
  return withMailproxy(sink, build.env, async (port, pid) => {
    await measure(sink, port, 2000, true);
    const keepAlive = await counted(port, 6000, true, pid);
    if (process.env.AB_MODE === 'ka') return { keepAlive, perConnection: null };
    await measure(sink, port, 500, false);
    return { keepAlive, perConnection: await counted(port, 2000, false, pid) };
  });
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
