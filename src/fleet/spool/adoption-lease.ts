/**
 * The lease on adopting a lost node's spool (`adopt.<node>.<instance>` in the
 * fleet's bucket): won by creating it, or by compare-and-set over an adopter
 * that died mid-way; and the fence that follows it, the lost node's
 * heartbeat read afresh once the lease is written (a returning node writes
 * its heartbeat before it reads the lease, so one of them sees the other).
 */
import type { NatsConnection } from '@nats-io/nats-core';
import type { KV } from '@nats-io/kv';
import { leaseAbandoned, type AdoptionLease, type SpoolRegistration } from '../../core/fleet/index.js';
import type { Clock } from '../../core/index.js';
import type { FleetLink } from '../link/fleet-service.js';
import { readNode } from '../link/node-registry.js';
import { leaseKey, leaseOf } from './spool-return.js';
import type { SpoolOwner, SpoolStream } from './spool-stream.js';
import { adoptionLeaseCodec } from './spool-wire-schemas.js';

export interface LeaseDeps {
  link: Pick<FleetLink, 'nodeId' | 'sightings'>;
  stream: Pick<SpoolStream, 'holdsRecords'>;
  adoptAfterMs: number;
  clock: Clock;
}

/** A lease won. `fresh`: created by this call, so nothing was adopted under it yet. */
export interface TakenLease {
  lease: AdoptionLease;
  fresh: boolean;
}

/** Replaces a lease at `revision` with this node's; false when another write came first. */
const replace = (store: KV, owner: SpoolRegistration, mine: AdoptionLease, revision: number): Promise<boolean> =>
  store.update(leaseKey(owner), adoptionLeaseCodec.encode(mine), revision).then(
    () => true,
    () => false,
  );

/**
 * Wins the lease on the lost node's spool, or answers null (another survivor has it), or
 * `adopted` when its adoption is done and nothing was written to it since.
 */
export async function takeLease(
  nc: NatsConnection,
  store: KV,
  owner: SpoolRegistration,
  deps: LeaseDeps,
): Promise<TakenLease | 'adopted' | null> {
  const { link, clock } = deps;
  const mine: AdoptionLease = { ...owner, by: link.nodeId, state: 'adopting', at: clock.now(), adopted: 0 };
  const found = await store.get(leaseKey(owner));
  if (found === null || found.operation !== 'PUT') {
    const created = await store.create(leaseKey(owner), adoptionLeaseCodec.encode(mine)).then(
      () => true,
      () => false,
    );
    return created ? { lease: mine, fresh: true } : null;
  }
  const lease = leaseOf(found.value);
  if (lease === null) return null;
  if (lease.state === 'done') {
    // Written to after its adoption: its node was not lost after all (an election held every heartbeat up), and is now. Adopted again.
    if (!(await deps.stream.holdsRecords(nc, owner))) return 'adopted';
    return (await replace(store, owner, mine, found.revision))
      ? { lease: { ...mine, adopted: lease.adopted }, fresh: false }
      : null;
  }
  // Ours: an adoption this node began (in this life or an earlier one) and did not finish.
  if (lease.by === link.nodeId) return { lease, fresh: false };
  const adopter = link.sightings().find((sighting) => sighting.beat.node_id === lease.by);
  if (!leaseAbandoned(lease, adopter, clock.now(), deps.adoptAfterMs)) return null;
  // Taken over from an adopter that died mid-way: it may have adopted some.
  return (await replace(store, owner, mine, found.revision))
    ? { lease: { ...mine, adopted: lease.adopted }, fresh: false }
    : null;
}

/** The fence: whether the lost node is back on that disk, read afresh now that the lease is written. */
export async function backMeanwhile(
  store: KV,
  owner: SpoolOwner,
  now: () => number,
  adoptAfterMs: number,
): Promise<boolean> {
  const seen = await readNode(store, owner.node);
  return seen !== null && seen.beat.instance === owner.instance && now() - seen.seenAt < adoptAfterMs;
}
