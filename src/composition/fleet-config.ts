/**
 * Fleet mode's shared configuration, wired: the admin use-cases record their
 * changes through a tap (so a dry run tells what they write), their writes go
 * to the bucket first (core/fleet/replicated-writes.ts), and a follower applies every
 * node's changes to this node's store. Composition only: no behaviour of its own.
 */
import { SHARED_ACCOUNT_WRITES, type AccountService, type createAccountService } from '../core/account/index.js';
import {
  createChangeTap,
  type ConfigEntry,
  createReplicatedWrites,
  replicateMethods,
  type ReplicatedWrites,
} from '../core/fleet/index.js';
import { addressDigest, type Clock, type Logger } from '../core/index.js';
import {
  SHARED_SUPPRESSION_WRITES,
  type createSuppressionService,
  type SuppressionService,
  SHARED_TENANT_WRITES,
  type createTenantService,
  type TenantService,
  SHARED_DOMAIN_WRITES,
  type createSendingDomainService,
  type SendingDomainService,
} from '../core/tenant/index.js';
import {
  configBucketName,
  createJetStreamConfigBucket,
  createConfigFollower,
  type ConfigFollower,
  createSuppressionErasure,
  type SharedSuppressionErasure,
  type FleetLink,
  type FleetSettings,
} from '../fleet/index.js';
import type { SqliteStore } from '../store/index.js';

/** A start waits this long to catch up with the bucket before taking requests (it goes on catching up after). */
const CATCH_UP_MS = 10_000;
/** The follower's check of its watch; at most a second, as a change must be applied within one. */
const MAX_CHECK_MS = 1000;

export interface SharedConfig {
  /** The store the admin use-cases are made with: its change log is the tap. */
  store: SqliteStore;
  writes: ReplicatedWrites;
  /** Calls `listener` after each change applied to this node's store (its own or another node's). */
  onApplied(listener: (entry: ConfigEntry) => void): void;
  /** The follower over the fleet's link: a service of the daemon's lifecycle. */
  follower: ConfigFollower;
  /** An erasure's part in the bucket: the suppression entries of what it erased. */
  suppressionErasure: SharedSuppressionErasure;
}

export function createSharedConfig(
  settings: FleetSettings,
  deps: { store: SqliteStore; link: FleetLink; clock: Clock; log: Logger },
): SharedConfig {
  const { clock, link } = deps;
  const log = deps.log.child({ component: 'shared-config' });
  const tap = createChangeTap(deps.store.changes);
  const rows = deps.store.configRows({
    nodeId: settings.nodeId,
    changes: deps.store.changes,
    tenants: deps.store.tenants,
    refreshHolds: (tenantId, at) => deps.store.messages.refreshHolds(tenantId, at),
    now: () => clock.now(),
  });
  const listeners: Array<(entry: ConfigEntry) => void> = [];
  const applied = (entry: ConfigEntry): void => {
    for (const listener of listeners) listener(entry);
  };
  const bucket = configBucketName(settings.bucket);
  const suppressionErasure = createSuppressionErasure({
    bucket,
    kv: () => follower.bucket(),
    connection: () => link.connection(),
    digestOf: (address) => addressDigest(deps.store.blindIndex, address),
    log,
  });
  const follower = createConfigFollower(
    {
      bucket,
      replicas: settings.replicas,
      checkMs: Math.min(MAX_CHECK_MS, settings.heartbeatMs),
      catchUpMs: CATCH_UP_MS,
    },
    // At each start, what versions before digests left in the bucket (addresses in its keys) goes.
    { link, rows, applied, opened: () => suppressionErasure.removeLegacy(), clock, log },
  );
  const writes = createReplicatedWrites({
    rows,
    bucket: createJetStreamConfigBucket({
      bucket: () => follower.bucket(),
      reachable: () => follower.reachable(),
      clock,
      log,
    }),
    tap,
    nodeId: settings.nodeId,
    // Joined and reaching the cluster: a bucket still opening (or electing a leader) is waited for by the write.
    available: () => follower.reachable(),
    applied,
  });
  return {
    store: { ...deps.store, changes: tap },
    writes,
    onApplied: (listener) => {
      listeners.push(listener);
    },
    follower,
    suppressionErasure,
  };
}

export interface AdminWrites {
  tenants: ReturnType<typeof createTenantService>;
  accounts: ReturnType<typeof createAccountService>;
  suppressions: ReturnType<typeof createSuppressionService>;
  domains: ReturnType<typeof createSendingDomainService>;
}

/** The admin services as the composition hands them out. */
export type SharedAdmin<A extends AdminWrites> = Omit<A, keyof AdminWrites> & {
  tenants: TenantService;
  accounts: AccountService;
  suppressions: SuppressionService;
  domains: SendingDomainService;
};

/** The admin services as the composition hands them out: in fleet mode their shared writes go through `writes`. */
export function shareConfigWrites<A extends AdminWrites>(writes: ReplicatedWrites | null, admin: A): SharedAdmin<A> {
  if (writes === null) return admin;
  return {
    ...admin,
    tenants: replicateMethods(admin.tenants, SHARED_TENANT_WRITES, writes),
    accounts: replicateMethods(admin.accounts, SHARED_ACCOUNT_WRITES, writes),
    suppressions: replicateMethods(admin.suppressions, SHARED_SUPPRESSION_WRITES, writes),
    domains: replicateMethods(admin.domains, SHARED_DOMAIN_WRITES, writes),
  };
}
