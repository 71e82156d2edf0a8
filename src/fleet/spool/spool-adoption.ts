/**
 * Adopting a lost node's spool. When a node has been silent (or
 * stopped) for `adoptAfterMs`, one survivor wins the lease `adopt.<node>.<instance>`
 * in the fleet's bucket (create, or compare-and-set over an adopter that died
 * mid-way) and replays every entry the lost node left: each is adopted into
 * this node's queue as a drain's adopt is (same client id and X-Genro-Mail-ID,
 * so a receiver can tell a possible resend) unless the lost node recorded its
 * end, its client id is named this node's in the claim log, and only then are
 * the records removed.
 *
 * Fencing the return (spool-return.ts): a lease is taken first and the lost
 * node's heartbeat read afresh after; a node coming back writes its heartbeat
 * first and reads the lease after. So either the adopter sees it back (and
 * ends the lease) or the returning node sees the lease and waits for its end.
 * Since a returning node waits, a lease is always seen through to its end by
 * its adopter, resumed after any failure.
 *
 * The lease and its fence are adoption-lease.ts, the replay adoption-replay.ts,
 * the spools known and lost adoption-registry.ts; this file runs the checks.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { Kvm, type KV } from '@nats-io/kv';
import type { ClaimIndex, SpoolRegistration, SpoolRows, MessageTransferStore } from '../../core/fleet/index.js';
import type { Clock, Logger } from '../../core/index.js';
import { bucketKeys } from '../../nats/index.js';
import { createPeriodicLoop, type Service, deadline, within } from '../../runtime/index.js';
import { backMeanwhile, takeLease } from './adoption-lease.js';
import { dueSpools, lostSpools, registeredSpools, registerSpool, spoolKey } from './adoption-registry.js';
import { replaySpool } from './adoption-replay.js';
import type { FleetLink } from '../link/fleet-service.js';
import type { ClientIdClaims } from '../claims/idempotency-claims.js';
import { giveUpAdopted, leaseKey } from './spool-return.js';
import type { SpoolStream } from './spool-stream.js';
import { adoptionLeaseCodec } from './spool-wire-schemas.js';

/** How long a start waits for a join under way before it goes on without knowing whether its mail was adopted. */
const JOIN_WAIT_MS = 20_000;
const LIST_DEADLINE_MS = 5000;

export interface SpoolAdoptionSettings {
  /** The fleet's membership bucket, which holds the leases too. */
  bucket: string;
  adoptAfterMs: number;
  checkMs: number;
}

export interface SpoolAdoptionDeps {
  link: FleetLink;
  stream: SpoolStream;
  transfers: Pick<MessageTransferStore, 'adopt'>;
  rows: SpoolRows;
  claims: ClientIdClaims;
  index: ClaimIndex;
  wake: () => void;
  clock: Clock;
  log: Logger;
}

export interface SpoolAdoption extends Service {
  /** Resolves once this node, back from being away, has given up what a survivor adopted (at once when nothing was). */
  returned(): Promise<void>;
  /** Messages adopted from lost nodes since the start. */
  adopted(): number;
  /** How many times this node's own spool was adopted while it ran (its records then removed by the adopter). */
  adoptedWhileRunning(): number;
  tick(): Promise<void>;
}

/** What one adoption check reads and changes, kept across checks. */
interface AdoptionState {
  adoptedCount: number;
  /** Spools whose adoption is done (a lost node's heartbeat stays in the bucket: it would be a candidate at every check). */
  adoptedBefore: Set<string>;
  /** Leases this node holds and has not seen through yet: resumed at every check, lost or not. */
  holding: Map<string, SpoolRegistration>;
  /** Messages adopted under each held lease and not yet written in it. */
  progress: Map<string, number>;
  stopped: boolean;
}

/**
 * Adopts a lost spool under its lease. A lease this node holds is seen through to its end,
 * whatever happens meanwhile: resumed at each check after a failure (a JetStream call timing out
 * in an election), and, if the lost node is back, ended as `done` so that the returning node
 * (which waits for it) gives up what was adopted, or deleted when nothing can have been.
 */
function createLostSpoolAdopter(settings: SpoolAdoptionSettings, deps: SpoolAdoptionDeps, state: AdoptionState) {
  const { link, clock, log } = deps;
  const { holding, progress } = state;
  const leaseDeps = { link, stream: deps.stream, adoptAfterMs: settings.adoptAfterMs, clock };
  return async (nc: NatsConnection, store: KV, lost: SpoolRegistration): Promise<void> => {
    const key = leaseKey(lost);
    const taken = await takeLease(nc, store, lost, leaseDeps);
    if (taken === 'adopted') {
      // Adopted before (and the registration's removal lost): removed now, and not asked again.
      await store.delete(spoolKey(lost));
      state.adoptedBefore.add(key);
    }
    if (taken === null || taken === 'adopted') return void holding.delete(key);
    holding.set(key, lost);
    const { lease, fresh } = taken;
    const owner = { node: lease.node, instance: lease.instance };
    const adoptedHere = () => lease.adopted + (progress.get(key) ?? 0);
    // Back meanwhile: it keeps its mail.
    if (await backMeanwhile(store, owner, () => clock.now(), settings.adoptAfterMs)) {
      if (fresh) await store.delete(key);
      else
        await store.put(
          key,
          adoptionLeaseCodec.encode({ ...lease, state: 'done', at: clock.now(), adopted: adoptedHere() }),
        );
      holding.delete(key);
      progress.delete(key);
      log.info(
        owner,
        fresh ? 'lost node is back; adoption given up' : 'lost node is back; adoption ended with what was adopted',
      );
      return;
    }
    log.warn(owner, 'adopting a lost node’s spool');
    const counted = (): void => {
      state.adoptedCount += 1;
      progress.set(key, (progress.get(key) ?? 0) + 1);
    };
    const { failed } = await replaySpool(nc, owner, { ...deps, stopped: () => state.stopped, counted });
    await store.put(
      key,
      adoptionLeaseCodec.encode({
        ...lease,
        state: failed === 0 ? 'done' : 'adopting',
        at: clock.now(),
        adopted: adoptedHere(),
      }),
    );
    // What this node adopted under the lease, an interrupted replay's share included.
    const adopted = progress.get(key) ?? 0;
    progress.delete(key);
    if (failed === 0) {
      holding.delete(key);
      await store.delete(spoolKey(owner));
      state.adoptedBefore.add(key);
    }
    log.warn(
      { ...owner, adopted, failed },
      failed === 0 ? 'lost node’s spool adopted' : 'lost node’s spool partly adopted; retrying',
    );
  };
}

/**
 * This node's own spool, at each check: when a survivor adopted it while this node ran (every
 * heartbeat held up longer than adopt_after: an election, a partition), what was adopted is given up
 * and the lease deleted, so that the spool can be adopted again should this node be lost for real;
 * and the spool is registered (again, after such an adoption), so that it is adopted if this node is lost.
 */
function createOwnSpool(deps: Pick<SpoolAdoptionDeps, 'link' | 'clock' | 'log'>, giveUp: (store: KV) => Promise<void>) {
  const { link, clock, log } = deps;
  let adoptedWhileRunning = 0;
  let registered = false;
  return {
    adoptedWhileRunning: () => adoptedWhileRunning,
    async check(store: KV): Promise<void> {
      const own = await store.get(leaseKey({ node: link.nodeId, instance: link.instance() }));
      if (own !== null && own.operation === 'PUT') {
        log.warn('this node’s spool was adopted while it was running');
        await giveUp(store);
        adoptedWhileRunning += 1;
        registered = false;
      }
      if (registered) return;
      const owner = { node: link.nodeId, instance: link.instance() };
      await registerSpool(store, owner, clock.now());
      registered = true;
      log.info(owner, 'spool registered');
    },
  };
}

export function createSpoolAdoption(settings: SpoolAdoptionSettings, deps: SpoolAdoptionDeps): SpoolAdoption {
  const { link, log, clock } = deps;
  let kv: KV | null = null;
  const state: AdoptionState = {
    adoptedCount: 0,
    adoptedBefore: new Set(),
    holding: new Map(),
    progress: new Map(),
    stopped: false,
  };
  let markReturned: () => void = () => undefined;
  const returnedOnce = new Promise<void>((resolve) => (markReturned = resolve));
  const bucket = async (nc: NatsConnection): Promise<KV> =>
    (kv ??= await new Kvm(nc).create(settings.bucket, { history: 1 }));
  const adoptFrom = createLostSpoolAdopter(settings, deps, state);
  const giveUp = (store: KV): Promise<void> =>
    giveUpAdopted(store, {
      link,
      rows: deps.rows,
      index: deps.index,
      adoptAfterMs: settings.adoptAfterMs,
      stopped: () => state.stopped,
      clock,
      log,
    });
  const ownSpool = createOwnSpool(deps, giveUp);

  const check = async (): Promise<void> => {
    const nc = link.connection();
    if (state.stopped || nc === null || !link.connected()) return;
    const store = await bucket(nc);
    await ownSpool.check(store);
    // A KV listing can stall without failing (seen under load): given up after a while, the next check lists again.
    const spools = await deadline(
      registeredSpools(store, bucketKeys(nc, settings.bucket)),
      LIST_DEADLINE_MS,
      'the list of the fleet’s spools',
    );
    const lost = lostSpools(spools, link, clock.now(), settings.adoptAfterMs);
    for (const spool of dueSpools(lost, state.adoptedBefore, state.holding))
      await adoptFrom(nc, store, spool).catch((error: unknown) =>
        log.warn(
          { err: error, node: spool.node, instance: spool.instance },
          'adoption of a lost node’s spool interrupted; resumed at the next check',
        ),
      );
  };
  const loop = createPeriodicLoop({ name: 'fleet-adoption', intervalMs: settings.checkMs, log, clock, run: check });

  return {
    name: 'fleet-adoption',
    returned: () => returnedOnce,
    adopted: () => state.adoptedCount,
    adoptedWhileRunning: ownSpool.adoptedWhileRunning,
    async start() {
      // Reaching the cluster but not joined yet (its buckets electing leaders): the join is awaited, bounded, so the check below can run.
      if (link.connection() === null && link.joining()) await within(link.joined(), JOIN_WAIT_MS);
      const nc = link.connection();
      // Not joined at the start (the cluster away): nothing can be known of an adoption; the node goes on alone.
      if (nc !== null)
        await giveUp(await bucket(nc)).catch((error: unknown) =>
          log.error({ err: error }, 'could not check whether this node’s mail was adopted'),
        );
      markReturned();
      loop.start();
    },
    async stop() {
      state.stopped = true;
      await loop.stop();
    },
    tick: () => loop.tick(),
  };
}
