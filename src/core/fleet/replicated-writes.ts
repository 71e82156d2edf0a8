/**
 * Configuration writes in fleet mode: the bucket first, then this node's SQLite.
 * A use-case runs once as a dry run (validation, the resulting rows, its audit
 * records; rolled back), its objects are written to the bucket with
 * compare-and-set on the revision this node last applied (an edit that lost a
 * race answers CONFIG_CONFLICT; an unreachable cluster FLEET_UNAVAILABLE, and
 * nothing is changed), and each written value is applied here through the same
 * path as the watcher applies other nodes' changes. A bad request never
 * reaches the bucket; a change is never answered before the bucket holds it.
 */
import { AppError } from '../app-error.js';
import type { ChangeTap } from './change-tap.js';
import {
  configKeyName,
  configKeyOf,
  type ConfigBucket,
  type ConfigWrites,
  type ConfigEntry,
  type ConfigKey,
  type ConfigRows,
  type ConfigValue,
} from './config-replica.js';

export interface ReplicatedWritesDeps {
  rows: ConfigRows;
  bucket: ConfigBucket;
  tap: ChangeTap;
  nodeId: string;
  /** False while the cluster is out of reach: writes are refused at once rather than after a timeout. */
  available(): boolean;
  /** An entry was applied to this node's store (the dispatcher and the mailboxes follow). */
  applied(entry: ConfigEntry): void;
}

interface PlannedWrite {
  key: ConfigKey;
  value: ConfigValue;
  expected: number | null;
}

export function createReplicatedWrites(deps: ReplicatedWritesDeps) {
  const { rows, bucket, tap } = deps;

  /** The use-case's effect, learned by running it in a rolled-back transaction. */
  const plan = <T>(fn: () => T): { result: T; writes: PlannedWrite[]; other: boolean } =>
    rows.dryRun(() => {
      const { result, changes } = tap.capture(fn);
      const byKey = new Map<string, PlannedWrite>();
      let other = false;
      for (const change of changes) {
        const key = configKeyOf(change);
        if (key === null) {
          other = true;
          continue;
        }
        const name = configKeyName(key);
        const known = byKey.get(name);
        const stamped = { ...change, node: deps.nodeId };
        if (known !== undefined) known.value.changes.push(stamped);
        else
          byKey.set(name, {
            key,
            value: { rows: null, origin: deps.nodeId, changes: [stamped] },
            expected: rows.appliedRevision(key),
          });
      }
      // The rows as the use-case left them, read inside its transaction.
      for (const write of byKey.values()) write.value.rows = rows.read(write.key);
      return { result, writes: [...byKey.values()], other };
    });

  return {
    /** Runs a configuration use-case across the fleet; answers what the use-case answers. */
    async run<T>(fn: () => T): Promise<T> {
      if (!deps.available()) throw unavailable();
      const { result, writes, other } = plan(fn);
      // A use-case that wrote no configuration (or also wrote something else) is not replicated: it runs here as it always did.
      if (writes.length === 0 || other) return fn();
      // In recording order: the former default account is unmarked before the new one is marked.
      for (const write of writes) {
        const revision = await bucket.write(write.key, write.value, write.expected);
        const entry: ConfigEntry = { key: write.key, revision, value: write.value };
        if (rows.apply(entry)) deps.applied(entry);
      }
      return result;
    },
  };
}

export type ReplicatedWrites = ReturnType<typeof createReplicatedWrites>;

export function unavailable(cause?: unknown): AppError {
  return new AppError(
    'FLEET_UNAVAILABLE',
    'the fleet cluster cannot be reached: configuration changes are refused until it can (mail still flows)',
    {
      transient: true,
      details: { retry_after_seconds: 5 },
      ...(cause === undefined ? {} : { cause }),
    },
  );
}

export function conflict(key: ConfigKey, cause?: unknown): AppError {
  // Transient: once this node has applied the winner, the same request may succeed (a JetStream command is redelivered).
  return new AppError('CONFIG_CONFLICT', 'the object was changed on another node meanwhile: read it again and retry', {
    transient: true,
    details: { key: configKeyName(key) },
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * `service` with `methods` run through `writes`: each answers a promise of what it answered.
 * The other methods are the service's own.
 */
export function replicateMethods<S extends object, K extends keyof S & string>(
  service: S,
  methods: readonly K[],
  writes: ReplicatedWrites,
): ConfigWrites<S, K> {
  const wrapped: Record<string, unknown> = { ...(service as Record<string, unknown>) };
  for (const name of methods) {
    const method = service[name] as unknown as (...args: unknown[]) => unknown;
    wrapped[name] = (...args: unknown[]) => writes.run(() => method(...args));
  }
  return wrapped as ConfigWrites<S, K>;
}
