/**
 * A fleet node back on its old disk after being away: if a survivor
 * took the lease on its spool, it waits for that adoption to end, then gives up
 * (as `moved`, naming the adopter) every waiting message whose client id the
 * claims name another node for, before it sends anything. It writes its
 * heartbeat before it reads the lease, and an adopter reads the heartbeat
 * again once it holds the lease, so one of them always sees the other.
 */
import type { KV } from '@nats-io/kv';
import { type ClaimIndex, leaseAbandoned, type AdoptionLease, type SpoolRows } from '../../core/fleet/index.js';
import type { Clock, Logger } from '../../core/index.js';
import type { FleetLink } from '../link/fleet-service.js';
import { claimKey } from '../claims/idempotency-claims.js';
import type { SpoolOwner } from './spool-stream.js';
import { adoptionLeaseCodec } from './spool-wire-schemas.js';

/** A returning node polls the lease this often while a survivor is still adopting its mail. */
const RETURN_POLL_MS = 1000;

/** The lease on adopting a spool, in the fleet's bucket. */
export const leaseKey = (owner: SpoolOwner): string => `adopt.${owner.node}.${owner.instance}`;

/** The lease a value holds; null when it holds none (not JSON, or not a lease). */
export function leaseOf(value: Uint8Array): AdoptionLease | null {
  const read = adoptionLeaseCodec.read(value);
  return read.ok ? read.value : null;
}

export interface SpoolReturnDeps {
  link: FleetLink;
  rows: Pick<SpoolRows, 'waitingIds' | 'surrender'>;
  index: ClaimIndex;
  adoptAfterMs: number;
  stopped: () => boolean;
  clock: Clock;
  log: Logger;
}

/** Waits out an adoption of this node's spool, then gives up what the claims say was adopted; at once when none was. */
export async function giveUpAdopted(store: KV, deps: SpoolReturnDeps): Promise<void> {
  const { link, clock, log } = deps;
  const key = leaseKey({ node: link.nodeId, instance: link.instance() });
  for (;;) {
    const found = await store.get(key);
    const lease = found === null || found.operation !== 'PUT' ? null : leaseOf(found.value);
    if (lease === null) return;
    const adopter = link.sightings().find((sighting) => sighting.beat.node_id === lease.by);
    if (lease.state === 'done' || leaseAbandoned(lease, adopter, clock.now(), deps.adoptAfterMs)) {
      const waiting = deps.rows.waitingIds();
      const holders = deps.index.holders(waiting.map((message) => claimKey(message.tenantId, message.id)));
      const moves = waiting.flatMap((message) => {
        const holder = holders.get(claimKey(message.tenantId, message.id));
        return holder === undefined || holder === link.nodeId ? [] : [{ pk: message.pk, toNode: holder }];
      });
      const surrendered = deps.rows.surrender(moves, clock.now());
      await store.delete(key);
      log.warn(
        { adoptedBy: lease.by, surrendered, kept: waiting.length - surrendered },
        'this node’s mail was adopted while it was away: adopted messages given up',
      );
      return;
    }
    log.info({ adoptedBy: lease.by }, 'a survivor is adopting this node’s mail; waiting for it before sending');
    await new Promise((resolve) => setTimeout(resolve, RETURN_POLL_MS));
    if (deps.stopped()) return;
  }
}
