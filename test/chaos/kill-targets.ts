/**
 * Where a SIGKILL is aimed. Each target waits for its moment as the peers or the
 * load see it (a 250 just read, a DATA reply held by the relay, a report round
 * held open by the client, the stream growing past the daemon's cursor), kills
 * at once and says what it hit. `random` kills after a seeded delay.
 */
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { beginData, openSession } from '../helpers/raw-smtp.js';
import type { Rng } from '../helpers/seeded-rng.js';
import { TENANT, killHard, type ChaosRig, type RunningDaemon } from './chaos-rig.js';
import { rawMessage, type Ledger } from './load.js';

export const TARGETS = ['data', 'after-250', 'relay-send', 'report-post', 'mirror-publish', 'random'] as const;
export type Target = (typeof TARGETS)[number];

export interface Kill {
  target: Target;
  at: number;
  /** What the peers saw at the moment of the kill. */
  note: string;
}

const MOMENT_TIMEOUT_MS = 20_000;

/** Messages in the stream now (0 while it is unreachable or not yet created). */
export async function streamCount(url: string): Promise<number> {
  const nc = await connect({ servers: url, reconnect: false, timeout: 1000 });
  try {
    return (await (await jetstreamManager(nc)).streams.info('MAILPROXY')).state.messages;
  } catch {
    return 0;
  } finally {
    await nc.close();
  }
}

function killNow(daemon: RunningDaemon, target: Target, note: string): Kill {
  daemon.process.child.kill('SIGKILL');
  return { target, at: Date.now(), note };
}

/** A transfer stopped halfway through its body, then the kill: the daemon holds a partial DATA. */
async function duringData(rig: ChaosRig, daemon: RunningDaemon, ledger: Ledger, label: string): Promise<Kill> {
  const id = `${label}-cut`;
  const session = await openSession(daemon.smtpPort, { user: TENANT, password: rig.tenantKey });
  await beginData(session, 'sender@example.com', [`${id}@example.net`]);
  ledger.tried.add(id);
  ledger.cut.add(id);
  await session.write(rawMessage(id, `${id}@example.net`, `${'x'.repeat(70)}\r\n`.repeat(200)));
  const kill = killNow(daemon, 'data', `DATA of ${id} cut after its body, before the final dot`);
  session.destroy();
  return kill;
}

function afterAck(daemon: RunningDaemon, ledger: Ledger): Promise<Kill> {
  return new Promise((resolve) => {
    ledger.once('acknowledged', (id: string, via: string) =>
      resolve(killNow(daemon, 'after-250', `just after ${via === 'smtp' ? '250' : '200'} for ${id}`)),
    );
  });
}

async function duringRelaySend(rig: ChaosRig, daemon: RunningDaemon): Promise<Kill> {
  await rig.sink.waitForAnswering(1, MOMENT_TIMEOUT_MS);
  return killNow(daemon, 'relay-send', `${rig.sink.answering} DATA replies held by the relay`);
}

async function duringReportPost(rig: ChaosRig, daemon: RunningDaemon): Promise<Kill> {
  const previous = rig.reportAnswer;
  rig.reportAnswer = (report) => (report.items.length > 0 ? 'hang' : previous(report));
  try {
    await rig.client.waitFor('a report round held open', () => rig.client.hanging() > 0, MOMENT_TIMEOUT_MS);
    return killNow(daemon, 'report-post', `${rig.client.hanging()} report round(s) unanswered`);
  } finally {
    rig.reportAnswer = previous;
  }
}

/**
 * NATS was stopped before this daemon started, so a backlog built up; it comes
 * back now and the kill lands as soon as the stream grows, while PubAcks of the
 * window are still arriving (the cursor is compared with the stream afterwards).
 * `before` is what the stream held when NATS was stopped.
 */
async function duringMirrorPublish(
  rig: ChaosRig,
  daemon: RunningDaemon,
  ledger: Ledger,
  before: number,
): Promise<Kill> {
  const acked = ledger.acknowledged.size;
  await new Promise<void>((resolve) => {
    const check = () => {
      if (ledger.acknowledged.size < acked + 20) return;
      ledger.off('acknowledged', check);
      resolve();
    };
    ledger.on('acknowledged', check);
  });
  await rig.nats.start();
  const deadline = Date.now() + MOMENT_TIMEOUT_MS;
  while (Date.now() < deadline) {
    // Polled: the stream has no event to await from outside; each poll is one round trip.
    const now = await streamCount(rig.nats.url);
    if (now > before) return killNow(daemon, 'mirror-publish', `stream grew from ${before} to ${now} events`);
  }
  throw new Error('the mirror never published after NATS came back');
}

export interface Aim {
  rig: ChaosRig;
  daemon: RunningDaemon;
  ledger: Ledger;
  rng: Rng;
  label: string;
  /** For `mirror-publish`: the stream's size when NATS was stopped before this daemon started. */
  streamBefore: number;
}

export async function aimKill(target: Target, { rig, daemon, ledger, rng, label, streamBefore }: Aim): Promise<Kill> {
  let kill: Kill;
  switch (target) {
    case 'data':
      kill = await duringData(rig, daemon, ledger, label);
      break;
    case 'after-250':
      kill = await afterAck(daemon, ledger);
      break;
    case 'relay-send':
      kill = await duringRelaySend(rig, daemon);
      break;
    case 'report-post':
      kill = await duringReportPost(rig, daemon);
      break;
    case 'mirror-publish':
      kill = await duringMirrorPublish(rig, daemon, ledger, streamBefore);
      break;
    case 'random': {
      const delayMs = rng.int(0, 1500);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      kill = killNow(daemon, 'random', `${delayMs} ms into the load`);
      break;
    }
  }
  await killHard(daemon.process);
  return kill;
}
