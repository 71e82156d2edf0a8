/**
 * Adopting a lost node's spool (issue 25). When a node has been silent (or
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
 */
import type { KV, NatsConnection } from 'nats';
import type { ClaimIndex } from '../core/claim-ledger.js';
import { adoptionCandidates, leaseAbandoned, replayPlan, type AdoptionLease, type SpoolRegistration, type SpoolRows } from '../core/cluster-spool.js';
import type { Clock } from '../core/clock.js';
import { adoptedDueAt, type MessageTransferStore } from '../core/fleet-drain.js';
import type { Logger } from '../core/logger.js';
import { createPeriodicLoop } from '../runtime/periodic-loop.js';
import type { Service } from '../runtime/service.js';
import { deadline, within } from '../runtime/within.js';
import type { FleetLink } from './fleet-service.js';
import type { ClientIdClaims } from './idempotency-claims.js';
import { readNode } from './node-registry.js';
import { giveUpAdopted, leaseKey, leaseOf } from './spool-return.js';
import type { SpoolOwner, SpoolStream } from './spool-stream.js';

const encoder = new TextEncoder();
/** How long a start waits for a join under way before it goes on without knowing whether its mail was adopted. */
const JOIN_WAIT_MS = 20_000;
const LIST_DEADLINE_MS = 5000;
const ASSIGN_DEADLINE_MS = 30_000;

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

/** Where each node registers its spool when it joins; removed once the spool was adopted. */
const SPOOLS = 'spools.';
const spoolKey = (owner: SpoolOwner): string => `${SPOOLS}${owner.node}.${owner.instance}`;

async function registeredSpools(store: KV): Promise<SpoolRegistration[]> {
  const keys = new Set<string>();
  for await (const key of await store.keys(`${SPOOLS}>`)) keys.add(key);
  return [...keys].flatMap((key) => {
    const [node, instance] = key.slice(SPOOLS.length).split('.');
    return node === undefined || instance === undefined ? [] : [{ node, instance }];
  });
}

export function createSpoolAdoption(settings: SpoolAdoptionSettings, deps: SpoolAdoptionDeps): SpoolAdoption {
  const { link, stream, log, clock } = deps;
  let kv: KV | null = null;
  let adoptedCount = 0;
  let adoptedWhileRunning = 0;
  /** Spools whose adoption is done (a lost node's heartbeat stays in the bucket: it would be a candidate at every check). */
  const adoptedBefore = new Set<string>();
  /** Leases this node holds and has not seen through yet: resumed at every check, lost or not. */
  const holding = new Map<string, SpoolRegistration>();
  /** Messages adopted under each held lease and not yet written in it. */
  const progress = new Map<string, number>();
  let stopped = false;
  let markReturned: () => void = () => undefined;
  const returnedOnce = new Promise<void>((resolve) => (markReturned = resolve));

  const bucket = async (nc: NatsConnection): Promise<KV> => (kv ??= await nc.jetstream().views.kv(settings.bucket, { history: 1 }));
  const write = (lease: AdoptionLease): Uint8Array => encoder.encode(JSON.stringify(lease));

  /**
   * Wins the lease on the lost node's spool, or answers null (another survivor has it, or it is
   * done). `fresh`: created by this call, so nothing was adopted under it yet.
   */
  const takeLease = async (nc: NatsConnection, store: KV, owner: SpoolRegistration): Promise<{ lease: AdoptionLease; fresh: boolean } | null> => {
    const mine: AdoptionLease = { ...owner, by: link.nodeId, state: 'adopting', at: clock.now(), adopted: 0 };
    const found = await store.get(leaseKey(owner));
    if (found === null || found.operation !== 'PUT') {
      const created = await store.create(leaseKey(owner), write(mine)).then(
        () => true,
        () => false,
      );
      return created ? { lease: mine, fresh: true } : null;
    }
    const lease = leaseOf(found.value);
    if (lease === null) return null;
    if (lease.state === 'done') {
      // Written to after its adoption: its node was not lost after all (an election held every heartbeat up), and is now. Adopted again.
      if (await stream.holdsRecords(nc, owner)) {
        const retaken = await store.update(leaseKey(owner), write(mine), found.revision).then(
          () => true,
          () => false,
        );
        return retaken ? { lease: { ...mine, adopted: lease.adopted }, fresh: false } : null;
      }
      // Adopted before (and the registration's removal lost): removed now, and not asked again.
      await store.delete(spoolKey(owner));
      adoptedBefore.add(leaseKey(owner));
      return null;
    }
    // Ours: an adoption this node began (in this life or an earlier one) and did not finish.
    if (lease.by === link.nodeId) return { lease, fresh: false };
    const adopter = link.sightings().find((sighting) => sighting.beat.node_id === lease.by);
    if (!leaseAbandoned(lease, adopter, clock.now(), settings.adoptAfterMs)) return null;
    const taken = await store.update(leaseKey(owner), write(mine), found.revision).then(
      () => true,
      () => false,
    );
    // Taken over from an adopter that died mid-way: it may have adopted some.
    return taken ? { lease: { ...mine, adopted: lease.adopted }, fresh: false } : null;
  };

  /**
   * Replays the lost node's unfinished entries into this node's queue, record by record in the
   * stream's order, each record removed once its entries are adopted (a second adopter, should
   * this one die, finds only what is left); answers how many were adopted and how many could not be.
   */
  const replay = async (nc: NatsConnection, owner: SpoolOwner, key: string): Promise<{ adopted: number; failed: number }> => {
    const indexes = await stream.indexes(nc, owner);
    const plan = replayPlan(indexes.map(({ index }) => index));
    let adopted = 0;
    let failed = 0;
    for (const { subject, index } of indexes) {
      if (!('pks' in index)) continue;
      if (stopped) return { adopted, failed: failed + 1 };
      const held = await stream.read(nc, subject);
      if (held === null || !('entries' in held.record)) continue;
      let kept = false;
      for (const entry of held.record.entries) {
        // An older entry of a message written again later, or one whose end was recorded.
        if (plan.get(entry.origin_pk) !== index.seq) continue;
        const transfer = { ...entry, origin_node: owner.node };
        try {
          const now = clock.now();
          const result = deps.transfers.adopt(transfer, adoptedDueAt(transfer, now), now);
          if (!result.already) deps.wake();
        } catch (error) {
          // An account this node does not have: the record stays for another pass (or another survivor).
          failed += 1;
          kept = true;
          log.error({ err: error, node: owner.node, pk: entry.origin_pk, tenantId: entry.tenant_id, id: entry.id }, 'could not adopt a lost node’s message');
          continue;
        }
        // Counted once queued here: should a later step fail, the lease still says something was adopted.
        adopted += 1;
        adoptedCount += 1;
        progress.set(key, (progress.get(key) ?? 0) + 1);
        // A claim log that stopped applying would hold the adoption (and the returning node) for ever.
        await deadline(deps.claims.assign(entry.tenant_id, entry.id, clock.now()), ASSIGN_DEADLINE_MS, 'the claim of an adopted message');
      }
      if (!kept) await stream.removeRecord(nc, held);
    }
    // The ends recorded go last: while a record is left, they still say what not to send.
    if (failed === 0) for (const { subject, index } of indexes) if ('ended' in index) await stream.removeRecord(nc, { subject, objects: [] });
    return { adopted, failed };
  };

  /**
   * Adopts a lost spool under its lease. A lease this node holds is seen through to its end,
   * whatever happens meanwhile: resumed at each check after a failure (a JetStream call timing out
   * in an election), and, if the lost node is back, ended as `done` so that the returning node
   * (which waits for it) gives up what was adopted, or deleted when nothing can have been.
   */
  const adoptFrom = async (nc: NatsConnection, store: KV, lost: SpoolRegistration): Promise<void> => {
    const key = leaseKey(lost);
    const taken = await takeLease(nc, store, lost);
    if (taken === null) return void holding.delete(key);
    holding.set(key, lost);
    const { lease, fresh } = taken;
    const owner = { node: lease.node, instance: lease.instance };
    const adoptedHere = () => lease.adopted + (progress.get(key) ?? 0);
    // The fence: read the lost node afresh now that the lease is written. Back meanwhile: it keeps its mail.
    const seen = await readNode(store, owner.node);
    if (seen !== null && seen.beat.instance === owner.instance && clock.now() - seen.seenAt < settings.adoptAfterMs) {
      if (fresh) await store.delete(key);
      else await store.put(key, write({ ...lease, state: 'done', at: clock.now(), adopted: adoptedHere() }));
      holding.delete(key);
      progress.delete(key);
      log.info(owner, fresh ? 'lost node is back; adoption given up' : 'lost node is back; adoption ended with what was adopted');
      return;
    }
    log.warn(owner, 'adopting a lost node’s spool');
    const { failed } = await replay(nc, owner, key);
    await store.put(key, write({ ...lease, state: failed === 0 ? 'done' : 'adopting', at: clock.now(), adopted: adoptedHere() }));
    // What this node adopted under the lease, an interrupted replay's share included.
    const adopted = progress.get(key) ?? 0;
    progress.delete(key);
    if (failed === 0) {
      holding.delete(key);
      await store.delete(spoolKey(owner));
      adoptedBefore.add(key);
    }
    log.warn({ ...owner, adopted, failed }, failed === 0 ? 'lost node’s spool adopted' : 'lost node’s spool partly adopted; retrying');
  };

  const giveUp = (store: KV): Promise<void> =>
    giveUpAdopted(store, { link, rows: deps.rows, index: deps.index, adoptAfterMs: settings.adoptAfterMs, stopped: () => stopped, clock, log });

  let registered = false;
  /** Makes this data directory's spool known to the fleet, so that it is adopted if this node is lost. */
  const register = async (nc: NatsConnection): Promise<void> => {
    const owner = { node: link.nodeId, instance: link.instance() };
    await (await bucket(nc)).put(spoolKey(owner), encoder.encode(JSON.stringify({ ...owner, at: clock.now() })));
    registered = true;
    log.info(owner, 'spool registered');
  };

  const loop = createPeriodicLoop({
    name: 'fleet-adoption',
    intervalMs: settings.checkMs,
    log,
    clock,
    run: async () => {
      const nc = link.connection();
      if (stopped || nc === null || !link.connected()) return;
      const store = await bucket(nc);
      // Adopted while running: every heartbeat held up longer than adopt_after (an election, a partition). What was adopted is
      // given up, and the lease deleted, so that this spool can be adopted again should this node be lost for real.
      const own = await store.get(leaseKey({ node: link.nodeId, instance: link.instance() }));
      if (own !== null && own.operation === 'PUT') {
        log.warn('this node’s spool was adopted while it was running');
        await giveUp(store);
        adoptedWhileRunning += 1;
        registered = false;
      }
      if (!registered) await register(nc);
      // A KV listing can stall without failing (seen under load): given up after a while, the next check lists again.
      const spools = await deadline(registeredSpools(store), LIST_DEADLINE_MS, 'the list of the fleet’s spools');
      // Each node's current data directory has a spool too, registered or not (its registration may not have landed before it died).
      const beating = link.sightings().map((sighting) => ({ node: sighting.beat.node_id, instance: sighting.beat.instance }));
      const known = [...spools, ...beating.filter((spool) => !spools.some((other) => other.node === spool.node && other.instance === spool.instance))];
      const lost = adoptionCandidates(link.nodeId, known, link.sightings(), clock.now(), settings.adoptAfterMs);
      // A spool no longer lost (its node back on that disk, having given up what was adopted) may be lost, and adopted, again.
      for (const key of adoptedBefore) if (!lost.some((spool) => leaseKey(spool) === key)) adoptedBefore.delete(key);
      const due = [
        ...lost.filter((spool) => !adoptedBefore.has(leaseKey(spool))),
        ...[...holding].flatMap(([key, spool]) => (lost.some((other) => leaseKey(other) === key) ? [] : [spool])),
      ];
      for (const spool of due)
        await adoptFrom(nc, store, spool).catch((error: unknown) =>
          log.warn({ err: error, node: spool.node, instance: spool.instance }, 'adoption of a lost node’s spool interrupted; resumed at the next check'),
        );
    },
  });

  return {
    name: 'fleet-adoption',
    returned: () => returnedOnce,
    adopted: () => adoptedCount,
    adoptedWhileRunning: () => adoptedWhileRunning,
    async start() {
      // Reaching the cluster but not joined yet (its buckets electing leaders): the join is awaited, bounded, so the check below can run.
      if (link.connection() === null && link.joining()) await within(link.joined(), JOIN_WAIT_MS);
      const nc = link.connection();
      // Not joined at the start (the cluster away): nothing can be known of an adoption; the node goes on alone.
      if (nc !== null)
        await giveUp(await bucket(nc)).catch((error: unknown) => log.error({ err: error }, 'could not check whether this node’s mail was adopted'));
      markReturned();
      loop.start();
    },
    async stop() {
      stopped = true;
      await loop.stop();
    },
    tick: () => loop.tick(),
  };
}
