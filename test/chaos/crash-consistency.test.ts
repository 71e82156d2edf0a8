import { afterAll, describe, expect, it } from 'vitest';
import { seededRng } from '../helpers/seeded-rng.js';
import { killHard, startChaosRig, type ChaosRig } from './chaos-rig.js';
import { runCrashLoop } from './crash-loop.js';
import { checkInvariants, waitUntilSettled } from './invariants.js';
import { TARGETS } from './kill-targets.js';

/** CI-sized; CHAOS_KILLS=100 for a longer local run, CHAOS_SEED to replay one (the kill plan; timings stay real). */
const KILLS = Number(process.env.CHAOS_KILLS ?? 8);
const SEED = Number(process.env.CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
/** The relay holds each DATA reply this long, so that sends are often in flight when a kill comes. */
const RELAY_DELAY_MS = 25;

let rig: ChaosRig | undefined;
afterAll(async () => {
  await rig?.stop();
});

describe('crash consistency under repeated SIGKILL', () => {
  it(`keeps every promise across ${KILLS} kills aimed at DATA, 250s, relay sends, report posts, mirror publishes and start-up (seed ${SEED})`, async () => {
    console.log(`chaos: seed ${SEED} (replay with CHAOS_SEED=${SEED}), ${KILLS} kills`);
    const rng = seededRng(SEED);
    rig = await startChaosRig({ relayDelayMs: RELAY_DELAY_MS });
    const run = await runCrashLoop(rig, rng, {
      kills: KILLS,
      load: { smtpWorkers: 2, httpWorkers: 2, perWorker: 40, pauseMs: [5, 25] },
      log: (line) => console.log(`chaos: ${line}`),
    });
    try {
      await waitUntilSettled(rig, run.daemon, 60_000);
      const result = await checkInvariants(rig, run.ledger, run.kills, RELAY_DELAY_MS);
      const { counts } = result;
      console.log(
        `chaos: ${run.kills.length + 1} kills survived (1 at start-up, ${run.kills.length} under load); ` +
          `${counts.acknowledged} acknowledged, ${counts.messagesChecked} messages checked (${counts.sent} sent, ${counts.error} error); ` +
          `${counts.copiesAtSink} copies at the relay, ${counts.duplicatesAtSink} duplicate(s); ${counts.eventsChecked} events checked in the stream; ` +
          `${counts.reportItemsExpected} report items expected, ${counts.reportItemsRepeated} delivered more than once`,
      );
      for (const line of result.duplicates) console.log(`chaos: duplicate ${line}`);
      expect(result.violations, `invariant violations (seed ${SEED})`).toEqual([]);
      // The run proves something only if it loaded the daemon and hit every kind of moment.
      expect(counts.acknowledged).toBeGreaterThan(KILLS * 10);
      expect(counts.error, 'some messages end in error (relay 550)').toBeGreaterThan(0);
      if (KILLS >= TARGETS.length) expect(new Set(run.kills.map((kill) => kill.target)).size).toBe(TARGETS.length);
      const failures = run.daemon.process.entries.filter((entry) => entry.level === 'fatal');
      expect(failures, 'fatal log lines after the last restart').toEqual([]);
    } finally {
      await killHard(run.daemon.process);
    }
  }, 240_000);
});
