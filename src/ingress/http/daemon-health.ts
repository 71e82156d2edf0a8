/**
 * The admin's half of GET /status: the health of every loop and thread, read
 * from their own status at request time (the composition decides what is in it).
 */
import type { MailboxStatus } from '../../core/bounce/index.js';
import type { FleetView, FleetQueues } from '../../core/fleet/index.js';
import type { MirrorStatus } from '../../core/events/index.js';
import type { BodyStoreHealth, ErasurePending } from '../../core/message/index.js';
import type { WarmUpStatus } from '../../core/account/index.js';
import type { AccountFailover, AccountPace, RelayConnections } from '../../core/delivery/index.js';
import { viewFailover, viewPace } from './views/relay-route-view.js';
import type { SyncStatus } from '../../core/report/index.js';
import type { FailingDomain } from '../../core/tenant/index.js';

export interface HealthSources {
  dispatcherRunning: () => boolean;
  store: {
    writeStatus(): object;
    /** Bodies an earlier version stored in clear that the background sealer has yet to seal. */
    bodySealer: { remaining(): UnsealedCounts };
    /** What erasures still leave to the background (the scrub, retention). */
    erasure: { pending(): ErasurePending };
  };
  relays: () => Promise<RelayConnections[]>;
  /** The accounts paced after their relay pushed back (adaptive backoff). */
  paces: () => AccountPace[];
  /** The accounts whose mail goes through a fallback account's relay now. */
  failovers: () => AccountFailover[];
  /** The accounts warming up now. */
  warmUps: () => WarmUpStatus[];
  /** The sending domains whose last DNS check failed (src/delivery/domain-watch.ts). */
  failingDomains: () => FailingDomain[];
  parserReady: (() => boolean) | null;
  /** The SMTP session processes configured and running; null when the sessions run on the main thread. */
  smtpSessions?: (() => { configured: number; running: number } | null) | undefined;
  reports: () => SyncStatus[];
  bounces: () => MailboxStatus[];
  mirror: () => MirrorStatus;
  /** The body store of large bodies (its backend, and whether it answers); null when there is none (fleet mode). */
  bodyStore?: (() => (BodyStoreHealth & { objects_to_remove: number }) | null) | undefined;
  /** Null for a single node. */
  fleet: () => FleetView | null;
  /** Fleet mode: each node's queue and the fleet's total, asked of every node at request time. */
  fleetQueues?: (() => Promise<FleetQueues>) | null | undefined;
}

export function daemonHealth(sources: HealthSources): () => Promise<Record<string, unknown>> {
  return async () => {
    const syncs = sources.reports();
    const relays = await sources.relays();
    return {
      dispatcher: { running: sources.dispatcherRunning() },
      // A full or locked database shows here, not only as refused intake.
      store: {
        ...sources.store.writeStatus(),
        bodies: unsealedBodies(sources.store.bodySealer.remaining()),
        erasure: erasureLeft(sources.store.erasure.pending()),
      },
      // Where large bodies live; a store that fails refuses the submissions whose bodies go there.
      body_store: sources.bodyStore?.() ?? null,
      // The relay pools: connections open to each account's relay and those carrying a message now.
      relays: {
        open: relays.reduce((sum, pool) => sum + pool.open, 0),
        in_use: relays.reduce((sum, pool) => sum + pool.inUse, 0),
        accounts: relays.map((pool) => ({
          tenant_id: pool.tenantId,
          account_id: pool.accountId,
          open: pool.open,
          in_use: pool.inUse,
        })),
      },
      pacing: sources.paces().map((pace) => ({
        tenant_id: pace.tenantId,
        account_id: pace.accountId,
        ...viewPace(pace),
      })),
      warmup: sources.warmUps().map((account) => ({
        tenant_id: account.tenantId,
        account_id: account.accountId,
        day: account.day,
        days: account.days,
        cap_today: account.capToday,
        sent_today: account.sentToday,
      })),
      domains: sources.failingDomains(),
      failover: sources.failovers().map((route) => ({
        tenant_id: route.tenantId,
        account_id: route.accountId,
        ...viewFailover(route),
      })),
      threads: { parser: sources.parserReady?.() ?? null, smtp_sessions: sources.smtpSessions?.() ?? null },
      reports: {
        tenants: syncs.length,
        failing: syncs.filter((sync) => sync.consecutiveFailures > 0).map((sync) => sync.tenantId),
        backlog: syncs.reduce((sum, sync) => sum + sync.backlog, 0),
      },
      bounce: sources.bounces(),
      mirror: sources.mirror(),
      ...(await fleetWithQueues(sources.fleet(), sources.fleetQueues ?? null)),
    };
  };
}

/** The background sealer's progress: bodies, and messages' envelopes and subjects, still in clear (0 once all are sealed). */
interface UnsealedCounts {
  messages: number;
  spools: number;
  pecReceipts: number;
  messageFields: number;
}

/** What erasures leave to the background: all 0 and false once no copy of erased data is left anywhere. */
const erasureLeft = (pending: ErasurePending) => ({
  scrub_owed: pending.scrubOwed,
  search_terms_to_scrub: pending.searchTerms,
  shredded_bodies_to_remove: pending.shreddedBodies,
});

const unsealedBodies = (remaining: UnsealedCounts) => ({
  unsealed: remaining.messages + remaining.spools + remaining.pecReceipts,
  fields_unsealed: remaining.messageFields,
});

/** Only a fleet node has a `fleet` part: a single node's answer is as it always was. */
export const fleetPart = (view: FleetView | null): { fleet?: FleetView } => (view === null ? {} : { fleet: view });

/** GET /status's fleet part: the membership, each node with its queue (null: it did not answer), and the fleet's total. */
async function fleetWithQueues(
  view: FleetView | null,
  queues: (() => Promise<FleetQueues>) | null,
): Promise<{ fleet?: unknown }> {
  if (view === null || queues === null) return fleetPart(view);
  const counted = await queues();
  const nodes = view.nodes.map((node) => ({ ...node, queue: counted.nodes[node.node_id] ?? null }));
  return { fleet: { ...view, nodes, queue_total: counted.total, missing_nodes: counted.missing_nodes } };
}
