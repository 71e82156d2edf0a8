/**
 * The spools a fleet knows of: each node registers its data directory's
 * spool in the fleet's bucket when it joins (removed once the spool was
 * adopted), and which of them are lost and due for adoption now.
 */
import type { KV } from '@nats-io/kv';
import type { BucketKeys } from '../../nats/index.js';
import { adoptionCandidates, type SpoolRegistration } from '../../core/fleet/index.js';
import type { FleetLink } from '../link/fleet-service.js';
import { leaseKey } from './spool-return.js';
import type { SpoolOwner } from './spool-stream.js';
import { spoolRegistrationCodec } from './spool-wire-schemas.js';

/** Where each node registers its spool when it joins; removed once the spool was adopted. */
const SPOOLS = 'spools.';
export const spoolKey = (owner: SpoolOwner): string => `${SPOOLS}${owner.node}.${owner.instance}`;

/** The spools registered now: keys listed without a consumer, those deleted (adopted) skipped. */
export async function registeredSpools(store: KV, keys: BucketKeys): Promise<SpoolRegistration[]> {
  const listed = await keys(`${SPOOLS}>`);
  const entries = await Promise.all(listed.map((key) => store.get(key)));
  const live = listed.filter((_, index) => entries[index]?.operation === 'PUT');
  return live.flatMap((key) => {
    const [node, instance] = key.slice(SPOOLS.length).split('.');
    return node === undefined || instance === undefined ? [] : [{ node, instance }];
  });
}

/** Makes a data directory's spool known to the fleet, so that it is adopted if its node is lost. */
export async function registerSpool(store: KV, owner: SpoolOwner, at: number): Promise<void> {
  await store.put(spoolKey(owner), spoolRegistrationCodec.encode({ ...owner, at }));
}

/**
 * The spools lost now: the registered ones, and each beating node's current data directory (its
 * registration may not have landed before it died), whose node has been silent for `adoptAfterMs`.
 */
export function lostSpools(
  registered: readonly SpoolRegistration[],
  link: Pick<FleetLink, 'nodeId' | 'sightings'>,
  now: number,
  adoptAfterMs: number,
): SpoolRegistration[] {
  const beating = link
    .sightings()
    .map((sighting) => ({ node: sighting.beat.node_id, instance: sighting.beat.instance }));
  const unregistered = beating.filter(
    (spool) => !registered.some((other) => other.node === spool.node && other.instance === spool.instance),
  );
  return adoptionCandidates(link.nodeId, [...registered, ...unregistered], link.sightings(), now, adoptAfterMs);
}

/**
 * The spools to adopt at this check: the lost ones not adopted already, and those whose lease this
 * node holds and has not seen through (lost or not). A spool no longer lost (its node back on that
 * disk, having given up what was adopted) is forgotten as adopted: it may be lost, and adopted, again.
 */
export function dueSpools(
  lost: readonly SpoolRegistration[],
  adoptedBefore: Set<string>,
  holding: ReadonlyMap<string, SpoolRegistration>,
): SpoolRegistration[] {
  for (const key of adoptedBefore) if (!lost.some((spool) => leaseKey(spool) === key)) adoptedBefore.delete(key);
  return [
    ...lost.filter((spool) => !adoptedBefore.has(leaseKey(spool))),
    ...[...holding].flatMap(([key, spool]) => (lost.some((other) => leaseKey(other) === key) ? [] : [spool])),
  ];
}
