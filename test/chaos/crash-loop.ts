/**
 * The kill-restart loop shared by the crash test and the soak: a first start on
 * a fresh data directory killed while it initialises, then cycles of
 * start → load → aimed SIGKILL, then a last start that is left to settle.
 */
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Rng } from '../helpers/seeded-rng.js';
import { killHard, type ChaosRig, type RunningDaemon } from './chaos-rig.js';
import { TARGETS, aimKill, streamCount, type Kill, type Target } from './kill-targets.js';
import { Ledger, startLoad, type LoadOptions } from './load.js';

export interface StartKill {
  /** PRAGMA user_version found after the kill (the schema has ten migrations; null: no database file yet). */
  schemaVersion: number | null;
  delayMs: number;
}

function schemaVersion(dataDir: string): number | null {
  const path = join(dataDir, 'mailproxy.db');
  if (!existsSync(path)) return null;
  const db = new Database(path, { readonly: true });
  try {
    return db.pragma('user_version', { simple: true }) as number;
  } finally {
    db.close();
  }
}

/**
 * Kills a start-up on the data directory while it creates its keys and
 * migrates: `delayMs` after it announced its new admin token (logged just
 * before the database opens), so the kill falls around the migrations.
 */
export async function killDuringStart(rig: ChaosRig, rng: Rng): Promise<StartKill> {
  const process = rig.spawn();
  await process.waitForLog((entry) => entry.msg === 'admin token created' || entry.msg === 'http listening');
  const delayMs = rng.int(0, 15);
  if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
  await killHard(process);
  return { schemaVersion: schemaVersion(rig.dataDir), delayMs };
}

/** Each target once in a seeded order, again and again, so that every target is hit when `kills` >= their number. */
export function killPlan(kills: number, rng: Rng): Target[] {
  const plan: Target[] = [];
  while (plan.length < kills) {
    const round = [...TARGETS];
    for (let i = round.length - 1; i > 0; i -= 1) {
      const j = rng.int(0, i);
      [round[i], round[j]] = [round[j] as Target, round[i] as Target];
    }
    plan.push(...round);
  }
  return plan.slice(0, kills);
}

/** Events the stream holds beyond the daemon's mirror cursor: published, PubAck'd or not, but not marked. */
export function unmarkedAtKill(dataDir: string, inStream: number): number {
  const db = new Database(join(dataDir, 'mailproxy.db'), { readonly: true });
  try {
    const marked = db
      .prepare(`SELECT count(*) FROM outbox WHERE seq <= (SELECT cursor_seq FROM mirror_state)`)
      .pluck()
      .get() as number;
    return inStream - marked;
  } finally {
    db.close();
  }
}

export interface CrashLoopResult {
  ledger: Ledger;
  kills: Kill[];
  startKill: StartKill;
  /** The last daemon, running, load finished: ready to settle and be checked. */
  daemon: RunningDaemon;
}

export interface CrashLoopOptions {
  kills: number;
  load: LoadOptions;
  log?: (line: string) => void;
}

export async function runCrashLoop(rig: ChaosRig, rng: Rng, options: CrashLoopOptions): Promise<CrashLoopResult> {
  const log = options.log ?? (() => undefined);
  const ledger = new Ledger();
  const kills: Kill[] = [];
  const startKill = await killDuringStart(rig, rng);
  log(
    `start-up killed ${startKill.delayMs} ms after the admin token was created; schema version ${startKill.schemaVersion ?? 'none'} on disk`,
  );

  // Provisioned once, then stopped in order: every cycle starts from the data directory alone.
  const first = await rig.start();
  await rig.provision(first);
  first.process.child.kill('SIGTERM');
  await first.process.exited;
  for (const [index, target] of killPlan(options.kills, rng).entries()) {
    let streamBefore = 0;
    if (target === 'mirror-publish') {
      streamBefore = await streamCount(rig.nats.url);
      await rig.nats.stop();
    }
    const daemon = await rig.start();
    const load = startLoad(daemon, rig.tenantKey, `c${index}`, rng, ledger, options.load);
    const kill = await aimKill(target, { rig, daemon, ledger, rng, label: `c${index}`, streamBefore });
    if (target === 'mirror-publish')
      kill.note += `; ${unmarkedAtKill(rig.dataDir, await streamCount(rig.nats.url))} published but not marked`;
    await load.stop();
    kills.push(kill);
    log(`kill ${kills.length}: ${kill.target}: ${kill.note} (${ledger.acknowledged.size} acknowledged so far)`);
  }
  const daemon = await rig.start();
  await startLoad(daemon, rig.tenantKey, 'last', rng, ledger, options.load).done;
  return { ledger, kills, startKill, daemon };
}
