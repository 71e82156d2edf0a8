// The `vs-postfix` scenario: mailproxy against Postfix on this machine, in the same run.
// A private Postfix instance (bench/postfix.mjs: Debian's package, installed by scripts/bench-setup.sh,
// never the system instance) relays to Postfix's smtp-sink with 20 connections; the daemon relays to
// the same sink with 20 (its account's pool). Postfix's smtp-source drives both, 20 sessions of 2 KB
// messages from loopback (mailproxy's trusted-network path: no AUTH, as a legacy app on the LAN):
// keep-alive (`-d`) and a new connection per message. Ingest is smtp-source's rate (both relay
// meanwhile); end to end counts until the sink has every message. The daemon also runs keep-alive
// with the JetStream mirror and its latest-state KV on. The order of the three alternates by round.
// Each round prints its ratios; the run's medians are what we quote ("N times Postfix here").
// Each round also measures the floor (bench/bare-smtp.mjs): the daemon's SMTP listener with nothing
// behind it, and with only a nodemailer relay thread behind it. It bounds what the daemon can do here:
// a target above the floor's ratio cannot be reached on this machine with these libraries.
import { cpuMeter, start, startDaemon, startNats, setupTenant } from './harness.mjs';
import { ensurePostfix, smtpSource, startPostfixSink, startPrivatePostfix } from './postfix.mjs';

const SESSIONS = 20;
const BYTES = 2048;
const KEEP_ALIVE_MESSAGES = 4000;
const PER_CONNECTION_MESSAGES = 1500;
const DRAIN_TIMEOUT_MS = 180_000;
const WARM_UP_KEEP_ALIVE = 2000;
const WARM_UP_PER_CONNECTION = 500;

/**
 * smtp-source against `port`, then the sink's count: ingest and end-to-end rates of `count` messages,
 * and for the daemon (`pid`) its CPU per message end to end, all threads and the main thread: the
 * main thread's is the ceiling on any machine (1 / it), however many cores.
 */
export async function measure(sink, port, count, keepAlive, pid = null) {
  const before = sink.count();
  // Postfix (no pid) is not ours to read.
  const meter = pid === null ? null : cpuMeter(pid);
  const { seconds, startedAt } = await smtpSource(port, { sessions: SESSIONS, count, bytes: BYTES, keepAlive });
  const doneAt = await sink.waitFor(before + count, DRAIN_TIMEOUT_MS);
  const cpu = meter?.perMessage(count) ?? null;
  return {
    ingest: count / seconds,
    endToEnd: count / ((doneAt - startedAt) / 1000),
    cpuUs: cpu?.all ?? null,
    mainUs: cpu?.main ?? null,
  };
}

/** Mail through `port` whose rates are not counted. */
const warmUp = (sink, port, keepAlive) =>
  measure(sink, port, keepAlive ? WARM_UP_KEEP_ALIVE : WARM_UP_PER_CONNECTION, keepAlive);

async function withPostfix(sink, run) {
  const postfix = await startPrivatePostfix(sink.port, SESSIONS);
  try {
    return await run(postfix.port);
  } finally {
    postfix.stop();
  }
}

export async function withMailproxy(sink, env, run) {
  const d = await startDaemon({
    MAILPROXY_SMTP_TRUSTED_NETWORKS: JSON.stringify([{ network: '127.0.0.0/8', tenant_id: 'bench' }]),
    ...env,
  });
  try {
    await setupTenant(d, sink.port, null, { max_connections: SESSIONS });
    return await run(d.smtpPort, d.daemon.child.pid);
  } finally {
    await d.stop();
  }
}

/** smtp-source against `port`, nothing relayed: the ingest rate of `count` messages. */
async function ingestOnly(port, count, keepAlive) {
  const { seconds } = await smtpSource(port, { sessions: SESSIONS, count, bytes: BYTES, keepAlive });
  return count / seconds;
}

/**
 * The floor (bench/bare-smtp.mjs), both modes, each after its warm-up: the daemon's SMTP listener
 * alone (ingest), then that listener with a nodemailer relay thread to the sink and nothing stored
 * (ingest and end to end). The most a daemon built on these two can do here.
 */
async function floorRates(sink) {
  const bare = start(['bench/bare-smtp.mjs']);
  let listener;
  try {
    const { port } = await bare.next((e) => e.port);
    await ingestOnly(port, WARM_UP_KEEP_ALIVE, true);
    const keepAlive = await ingestOnly(port, KEEP_ALIVE_MESSAGES, true);
    await ingestOnly(port, WARM_UP_PER_CONNECTION, false);
    listener = { keepAlive, perConnection: await ingestOnly(port, PER_CONNECTION_MESSAGES, false) };
  } finally {
    bare.child.stdin.end();
  }
  const relaying = start(['bench/bare-smtp.mjs', String(sink.port)]);
  try {
    const { port } = await relaying.next((e) => e.port);
    return { listener, relay: await bothModes(sink, port) };
  } finally {
    relaying.child.stdin.end();
  }
}

/**
 * Both modes on one system, after a warm-up of each (not counted): keep-alive, then a connection
 * per message. A mail system runs for days; the first seconds of a fresh one (the daemon's code
 * still being compiled, Postfix's processes still being spawned) say nothing of what users feel.
 */
const bothModes = async (sink, port, pid = null) => {
  await warmUp(sink, port, true);
  const keepAlive = await measure(sink, port, KEEP_ALIVE_MESSAGES, true, pid);
  await warmUp(sink, port, false);
  return { keepAlive, perConnection: await measure(sink, port, PER_CONNECTION_MESSAGES, false, pid) };
};

let round = 0;
export async function vsPostfixScenario() {
  ensurePostfix();
  round += 1;
  const sink = await startPostfixSink();
  const nats = await startNats();
  try {
    const runPostfix = () => withPostfix(sink, (port) => bothModes(sink, port));
    const runMailproxy = () => withMailproxy(sink, {}, (port, pid) => bothModes(sink, port, pid));
    const runMirrored = () =>
      withMailproxy(sink, { MAILPROXY_NATS_URL: nats.url() }, async (port) => {
        await warmUp(sink, port, true);
        return measure(sink, port, KEEP_ALIVE_MESSAGES, true);
      });
    // The order alternates by round: Postfix first or last, and the daemon with the mirror before or
    // after the daemon without it, so that neither ratio leans on what ran just before it.
    let postfix;
    let mailproxy;
    let mirrored;
    if (round % 2 === 1) {
      postfix = await runPostfix();
      mailproxy = await runMailproxy();
      mirrored = await runMirrored();
    } else {
      mirrored = await runMirrored();
      mailproxy = await runMailproxy();
      postfix = await runPostfix();
    }
    const floor = await floorRates(sink);
    const result = {
      'keep-alive end to end, mailproxy msg/s': mailproxy.keepAlive.endToEnd,
      'keep-alive end to end, Postfix msg/s': postfix.keepAlive.endToEnd,
      'keep-alive end to end, x Postfix': mailproxy.keepAlive.endToEnd / postfix.keepAlive.endToEnd,
      'keep-alive ingest while relaying, x Postfix': mailproxy.keepAlive.ingest / postfix.keepAlive.ingest,
      'keep-alive end to end, mailproxy CPU µs/message': mailproxy.keepAlive.cpuUs,
      'keep-alive end to end, mailproxy main thread CPU µs/message': mailproxy.keepAlive.mainUs,
      'connection per message end to end, mailproxy msg/s': mailproxy.perConnection.endToEnd,
      'connection per message end to end, Postfix msg/s': postfix.perConnection.endToEnd,
      'connection per message end to end, x Postfix': mailproxy.perConnection.endToEnd / postfix.perConnection.endToEnd,
      'connection per message ingest, x Postfix': mailproxy.perConnection.ingest / postfix.perConnection.ingest,
      'connection per message end to end, mailproxy CPU µs/message': mailproxy.perConnection.cpuUs,
      'connection per message end to end, mailproxy main thread CPU µs/message': mailproxy.perConnection.mainUs,
      'floor, listener alone: keep-alive msg/s': floor.listener.keepAlive,
      'floor, listener alone: keep-alive, x Postfix ingest': floor.listener.keepAlive / postfix.keepAlive.ingest,
      'floor, listener alone: connection per message msg/s': floor.listener.perConnection,
      'floor, listener alone: connection per message, x Postfix ingest':
        floor.listener.perConnection / postfix.perConnection.ingest,
      'floor, listener and relay: keep-alive end to end msg/s': floor.relay.keepAlive.endToEnd,
      'floor, listener and relay: keep-alive end to end, x Postfix':
        floor.relay.keepAlive.endToEnd / postfix.keepAlive.endToEnd,
      'floor, listener and relay: keep-alive ingest, x Postfix':
        floor.relay.keepAlive.ingest / postfix.keepAlive.ingest,
      'floor, listener and relay: connection per message end to end msg/s': floor.relay.perConnection.endToEnd,
      'floor, listener and relay: connection per message end to end, x Postfix':
        floor.relay.perConnection.endToEnd / postfix.perConnection.endToEnd,
      'floor, listener and relay: connection per message ingest, x Postfix':
        floor.relay.perConnection.ingest / postfix.perConnection.ingest,
      // The issue's targets: the daemon against the floor of its own libraries, in the same round.
      'keep-alive end to end, share of the floor': mailproxy.keepAlive.endToEnd / floor.relay.keepAlive.endToEnd,
      'keep-alive ingest while relaying, share of the floor': mailproxy.keepAlive.ingest / floor.relay.keepAlive.ingest,
      'connection per message end to end, share of the floor':
        mailproxy.perConnection.endToEnd / floor.relay.perConnection.endToEnd,
      'connection per message ingest, share of the floor':
        mailproxy.perConnection.ingest / floor.relay.perConnection.ingest,
      'keep-alive end to end with the mirror and KV, msg/s': mirrored.endToEnd,
      'mirror on / off, end to end': mirrored.endToEnd / mailproxy.keepAlive.endToEnd,
    };
    console.log(
      `  round ${round}: ${Object.entries(result)
        .filter(
          ([name]) =>
            (name.includes('x Postfix') && !name.startsWith('floor, listener alone')) ||
            name.includes('on / off') ||
            name.includes('share of the floor'),
        )
        .map(([name, value]) => `${name} ${value.toFixed(2)}`)
        .join('; ')}`,
    );
    return result;
  } finally {
    sink.stop();
    await nats.stop();
  }
}
