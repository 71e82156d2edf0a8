/**
 * An erasure's part in the fleet's shared configuration: the bucket entries of
 * the suppressions it erased (`suppression.<tenant>.<digest>`, each value the
 * address sealed with the secret every node shares) removed for good, once for
 * the fleet, by the node the erasure was asked of. Each value is overwritten on
 * the servers (a secure delete of its message), then its key purged: the purge
 * marker tells every node to drop its own copy (config-bucket.ts), and a purge
 * alone would leave the value's bytes in the file store until it compacts.
 * Keys written before digests name the address itself: they go with the
 * erasure of that address, and all of them at a node's start.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import type { KV } from '@nats-io/kv';
import { AppError, normalizeAddress, type Logger } from '../../core/index.js';
import { suppressionKeys, type FleetMessages } from '../../core/fleet/index.js';
import { bucketKeys, managerOf } from '../../nats/index.js';

export interface SuppressionErasureDeps {
  /** The bucket's name (`<fleet.bucket>_config`): its stream is `KV_<name>`. */
  bucket: string;
  /** The bucket once this node has opened it, while it reaches the cluster; null otherwise. */
  kv(): KV | null;
  connection(): NatsConnection | null;
  /** The address's blind-index digest, as the suppressions' keys name it. */
  digestOf(address: string): string;
  log: Logger;
}

export interface SharedSuppressionErasure {
  /**
   * Removes, in each of these tenants, the entries of the address (by its digest, and its key from
   * before digests), or every suppression entry when `address` is null (a whole tenant erased).
   * Answers how many went; throws when the bucket cannot be reached.
   */
  erase(tenants: readonly string[], address: string | null): Promise<number>;
  /** Removes every entry written before digests (its key and value name the address in clear); answers how many. */
  removeLegacy(): Promise<number>;
}

export function createSuppressionErasure(deps: SuppressionErasureDeps): SharedSuppressionErasure {
  const reach = (): { kv: KV; nc: NatsConnection } => {
    const kv = deps.kv();
    const nc = deps.connection();
    if (kv === null || nc === null) throw new Error('the shared configuration bucket is not open');
    return { kv, nc };
  };

  /** Overwrites the key's value, then purges the key; false when it holds none (removed already). */
  const eraseKey = async (kv: KV, nc: NatsConnection, name: string): Promise<boolean> => {
    const entry = await kv.get(name);
    if (entry === null || entry.operation !== 'PUT') return false;
    await (await managerOf(nc)).streams.deleteMessage(`KV_${deps.bucket}`, entry.revision, true);
    await kv.purge(name);
    return true;
  };

  /** Erases the keys under `filter` that `keep` selects; answers how many held a value. */
  const eraseMatching = async (filter: string, keep: (name: string) => boolean): Promise<number> => {
    const { kv, nc } = reach();
    let erased = 0;
    // Listed from the stream's subjects (bucketKeys), purged keys included: those hold no value and are passed over.
    for (const name of await bucketKeys(nc, deps.bucket)(filter))
      if (keep(name) && (await eraseKey(kv, nc, name))) erased += 1;
    return erased;
  };

  return {
    async erase(tenants, address) {
      const wanted = new Set(tenants);
      const ofTenant = (name: string): boolean => wanted.has(suppressionKeys.parse(name)?.tenantId ?? '');
      if (address === null) {
        let erased = 0;
        for (const tenantId of wanted) erased += await eraseMatching(suppressionKeys.filter(tenantId), () => true);
        return erased;
      }
      // Every tenant's key of the address in one listing each (an admin's erasure spans all tenants).
      const digest = suppressionKeys.lastSegment(deps.digestOf(address));
      // As an earlier version named it: the address as the suppression kept it (normalized).
      const legacy = suppressionKeys.lastSegment(normalizeAddress(address.trim()));
      return (
        (await eraseMatching(suppressionKeys.filter(null, digest), ofTenant)) +
        (await eraseMatching(suppressionKeys.filter(null, legacy), ofTenant))
      );
    },
    async removeLegacy() {
      const removed = await eraseMatching(
        suppressionKeys.filter(null),
        (name) => suppressionKeys.parse(name)?.digest === null,
      );
      if (removed > 0) deps.log.info({ removed }, 'suppression entries from before digests removed from the bucket');
      return removed;
    },
  };
}

/**
 * The fleet's message commands with an erasure by address, or of a whole tenant, also removing
 * the tenants' shared suppression entries: after every node reached has erased its own rows, once,
 * here. A bucket that cannot be reached then fails the answer (the erasure is repeated; it is
 * idempotent), rather than leave the address in the cluster unsaid.
 */
export function erasingSharedSuppressions(
  messages: FleetMessages,
  erasure: SharedSuppressionErasure,
  log: Logger,
): FleetMessages {
  return {
    ...messages,
    async command(ctx, name, params) {
      const answer = await messages.command(ctx, name, params);
      const address = typeof params.address === 'string' ? params.address : null;
      if (name !== 'erase' || (address === null && params.whole_tenant !== true)) return answer;
      const tenants = Array.isArray(answer.tenants)
        ? answer.tenants.filter((tenant): tenant is string => typeof tenant === 'string')
        : [];
      try {
        return { ...answer, shared_suppressions: await erasure.erase(tenants, address) };
      } catch (error) {
        log.warn({ err: error }, 'erasure: the shared suppression entries could not be removed');
        throw new AppError(
          'FLEET_UNAVAILABLE',
          'erased on the nodes reached, but the fleet’s shared suppression entries could not be removed: ask for the same erasure again',
          { transient: true, details: { retry_after_seconds: 5, erased: answer }, cause: error },
        );
      }
    },
  };
}
