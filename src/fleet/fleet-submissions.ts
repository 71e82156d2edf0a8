/**
 * Fleet-wide idempotency and the drain's intake gate, around the submission
 * service. A client id new to this node is claimed in the fleet's bucket
 * (claims of one request in parallel) before the local commit; one held by
 * another node that still has it is answered as a local repeat is (rejected
 * `ALREADY_SENT`, which SMTP answers 250 "accepted before"). Ids this node
 * already has are decided locally, with no round trip.
 *
 * A claim without its commit (this node crashed between them) does not lock
 * the id out: the claim names this node, so a retry here re-uses it; a retry
 * on another node asks the holder, which answers that it has no such message
 * (nor one being committed), and the asker takes the claim over by
 * compare-and-set. A holder that does not answer is taken to have it: a
 * message refused as a repeat is better than one sent twice.
 *
 * When the cluster cannot be reached the node goes on alone (FLEET.md): the
 * request is accepted on the local check only, and a warning is logged and
 * counted in `skipped`.
 */
import type { NatsConnection } from 'nats';
import { AppError } from '../core/app-error.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { Principal } from '../core/principal.js';
import type { MessageQueue } from '../core/queue.js';
import { refusal, rejection, type Rejection } from '../core/rejection.js';
import type { SubmissionItem, SubmissionResult, SubmissionService } from '../core/submission-service.js';
import { within } from '../runtime/within.js';
import type { FleetLink } from './fleet-service.js';
import { claimKey, type ClaimBucket } from './idempotency-claims.js';

/** Requests to the holder of a claim: outside `mailproxy.>`, which the event stream captures. */
export const holderSubject = (nodeId: string): string => `mailproxy_fleet_idem.${nodeId}.has`;

const ASK_TIMEOUT_MS = 2000;

export interface FleetSubmissionsDeps {
  link: FleetLink;
  claims: ClaimBucket;
  queue: Pick<MessageQueue, 'states'>;
  /** Set while the node drains: intake is refused with it. */
  refusal: () => AppError | null;
  clock: Clock;
  log: Logger;
  /** How long a request waits for the fleet's answer before it goes on on the local check alone. */
  claimTimeoutMs: number;
}

interface Claimable {
  item: SubmissionItem;
  tenantId: string;
  id: string;
}

export function createFleetSubmissions(inner: SubmissionService, deps: FleetSubmissionsDeps) {
  const { link, claims, log } = deps;
  /** Keys claimed by requests not yet committed: the holder's answer to "do you have it?" counts them. */
  const pending = new Map<string, number>();
  let skipped = 0;
  /** Requests past the drain's gate and not yet answered: a drain waits for them before it reads what waits. */
  let inFlight = 0;
  const settled: Array<() => void> = [];

  const claimables = (principal: Principal, items: readonly SubmissionItem[]): Claimable[] => {
    const found: Claimable[] = [];
    for (const item of items) {
      const tenantId = principal.kind === 'tenant' ? principal.tenantId : item.tenantId;
      if (item.problem !== undefined || item.id === null || tenantId === undefined) continue;
      found.push({ item, tenantId, id: item.id });
    }
    // Ids this node has are its own business: the local rule decides them, no round trip.
    const byTenant = new Map<string, Claimable[]>();
    for (const entry of found) {
      const entries = byTenant.get(entry.tenantId);
      if (entries === undefined) byTenant.set(entry.tenantId, [entry]);
      else entries.push(entry);
    }
    return [...byTenant].flatMap(([tenantId, entries]) => {
      const known = deps.queue.states(
        tenantId,
        entries.map((entry) => entry.id),
      );
      return entries.filter((entry) => !known.has(entry.id));
    });
  };

  /** Whether another node holds the id (and still has its message). */
  const heldElsewhere = async (nc: NatsConnection, entry: Claimable): Promise<boolean> => {
    const outcome = await claims.claim(nc, entry.tenantId, entry.id, deps.clock.now());
    if (outcome.holder === 'self') return false;
    const answer = await nc
      .request(holderSubject(outcome.node), JSON.stringify({ tenant_id: entry.tenantId, id: entry.id }), { timeout: ASK_TIMEOUT_MS })
      .then((reply) => reply.json<{ has: boolean }>())
      .catch(() => ({ has: true }));
    if (answer.has) return true;
    return !(await claims.takeOver(nc, entry.tenantId, outcome.key, outcome.revision, deps.clock.now()));
  };

  /** The items another node holds; null when the fleet could not answer in time (the check is skipped). */
  const duplicates = async (entries: readonly Claimable[]): Promise<Set<SubmissionItem> | null> => {
    const nc = link.connection();
    if (nc === null || !link.connected()) return null;
    let answered: Set<SubmissionItem> | null = null;
    const checking = Promise.all(entries.map(async (entry) => ((await heldElsewhere(nc, entry)) ? [entry.item] : []))).then(
      (held) => (answered = new Set(held.flat())),
    );
    await within(
      checking.catch((error: unknown) => log.warn({ err: error }, 'fleet idempotency claim failed')),
      deps.claimTimeoutMs,
    );
    return answered;
  };

  const merge = (result: SubmissionResult, extra: readonly Rejection[]): SubmissionResult =>
    extra.length === 0 ? result : { queued: result.queued, rejected: [...result.rejected, ...extra].sort((a, b) => a.index - b.index) };

  /** The fleet's check, then the local commit of what it let through. */
  const checked: SubmissionService['enqueue'] = async (principal, items, defaultPriority, correlationId, alongside) => {
    const entries = claimables(principal, items);
    if (entries.length === 0) return inner.enqueue(principal, items, defaultPriority, correlationId, alongside);
    const keys = entries.map((entry) => claimKey(entry.tenantId, entry.id));
    for (const key of keys) pending.set(key, (pending.get(key) ?? 0) + 1);
    try {
      const held = await duplicates(entries);
      if (held === null) {
        skipped += 1;
        log.warn({ messages: entries.length }, 'fleet idempotency check skipped: the cluster did not answer; accepted on the local check');
      }
      const extra = [...(held ?? [])].map((item) => rejection(item.index, item.id, refusal('ALREADY_SENT')));
      if (extra.length > 0) log.info({ ids: extra.map((entry) => entry.id) }, 'client ids accepted on another node: answered as repeats');
      const rest = extra.length === 0 ? items : items.filter((item) => !held?.has(item));
      const result = await inner.enqueue(principal, rest, defaultPriority, correlationId, alongside && ((own) => alongside(merge(own, extra))));
      return merge(result, extra);
    } finally {
      for (const key of keys) {
        const left = (pending.get(key) ?? 1) - 1;
        if (left <= 0) pending.delete(key);
        else pending.set(key, left);
      }
    }
  };

  const service: SubmissionService = {
    async enqueue(principal, items, defaultPriority, correlationId, alongside) {
      const refused = deps.refusal();
      if (refused !== null) throw refused;
      inFlight += 1;
      try {
        return await checked(principal, items, defaultPriority, correlationId, alongside);
      } finally {
        inFlight -= 1;
        if (inFlight === 0) for (const resolve of settled.splice(0)) resolve();
      }
    },
  };

  return {
    submissions: service,
    /** The holder's answer: does this node have (or is it committing) this client id? */
    has: (tenantId: string, id: string): boolean => pending.has(claimKey(tenantId, id)) || deps.queue.states(tenantId, [id]).has(id),
    skipped: () => skipped,
    /** Resolves once every request that passed the drain's gate has been answered. */
    settled: (): Promise<void> => (inFlight === 0 ? Promise.resolve() : new Promise((resolve) => settled.push(resolve))),
  };
}
