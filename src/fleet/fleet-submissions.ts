/**
 * Fleet-wide idempotency and the drain's intake gate, around the submission
 * service. The client ids new to this node are claimed in the fleet's claim
 * log (one record for the whole request) before the local commit; one held by
 * another node that still has it is answered as a local repeat is (rejected
 * `ALREADY_SENT`, which SMTP answers 250 "accepted before"). Ids this node
 * already has are decided locally, with no round trip.
 *
 * A claim without its commit (this node crashed between them) does not lock
 * the id out: the claim names this node, so a retry here re-uses it; a retry
 * on another node asks the holder, which answers that it has no such message
 * (nor one being committed), and the asker takes the claim over (a `take`
 * record, which holds only if the holder still held it at its place in the
 * log). A holder that does not answer is taken to have it: a message refused
 * as a repeat is better than one sent twice.
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
import { claimKey, type ClientIdClaims } from './idempotency-claims.js';

/** Requests to the holder of a claim: outside `mailproxy.>`, which the event stream captures. */
export const holderSubject = (nodeId: string): string => `mailproxy_fleet_idem.${nodeId}.has`;

const ASK_TIMEOUT_MS = 2000;

export interface FleetSubmissionsDeps {
  link: FleetLink;
  claims: ClientIdClaims;
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
  key: string;
}

/** The items a holder is asked about: `{items:[{tenant_id,id}]}`. */
function holderItems(request: unknown): Array<{ tenant_id: string; id: string }> {
  const { items } = (request ?? {}) as { items?: unknown };
  return (Array.isArray(items) ? (items as unknown[]) : []).map((item) => {
    const { tenant_id: tenant, id: clientId } = (item ?? {}) as { tenant_id?: unknown; id?: unknown };
    return { tenant_id: String(tenant), id: String(clientId) };
  });
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
      found.push({ item, tenantId, id: item.id, key: claimKey(tenantId, item.id) });
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

  /** Asks `node` which of the entries it has (or is committing); one that does not answer is taken to have them all. */
  const ask = async (nc: NatsConnection, node: string, asked: readonly Claimable[]): Promise<boolean[]> => {
    const request = { items: asked.map((entry) => ({ tenant_id: entry.tenantId, id: entry.id })) };
    const answer = await nc
      .request(holderSubject(node), JSON.stringify(request), { timeout: ASK_TIMEOUT_MS })
      .then((reply) => reply.json<{ has?: unknown }>())
      .catch(() => null);
    const has = answer?.has;
    return Array.isArray(has) && has.length === asked.length ? has.map((value) => value !== false) : asked.map(() => true);
  };

  /**
   * The keys another node holds and still has a message for: the request's keys claimed in one
   * record, each other holder asked once for all of its keys, and those it has no message for
   * taken over in one record more.
   */
  const heldElsewhere = async (nc: NatsConnection, entries: ReadonlyMap<string, Claimable>): Promise<Set<string>> => {
    const holders = await claims.claim([...entries.keys()], deps.clock.now());
    const byHolder = new Map<string, string[]>();
    for (const key of entries.keys()) {
      const holder = holders.get(key) ?? link.nodeId;
      if (holder === link.nodeId) continue;
      const keys = byHolder.get(holder);
      if (keys === undefined) byHolder.set(holder, [key]);
      else keys.push(key);
    }
    const held = new Set<string>();
    await Promise.all(
      [...byHolder].map(async ([holder, keys]) => {
        const has = await ask(
          nc,
          holder,
          keys.map((key) => entries.get(key) as Claimable),
        );
        const free = keys.filter((key, at) => {
          if (has[at] === true) held.add(key);
          return has[at] !== true;
        });
        if (free.length === 0) return;
        const taken = await claims.takeOver(holder, free, deps.clock.now());
        for (const key of free) if (!taken.has(key)) held.add(key);
      }),
    );
    return held;
  };

  /** The items another node holds; null when the fleet could not answer in time (the check is skipped). */
  const duplicates = async (entries: readonly Claimable[]): Promise<Set<SubmissionItem> | null> => {
    const nc = link.connection();
    if (nc === null || !link.connected()) return null;
    const byKey = new Map(entries.map((entry) => [entry.key, entry]));
    let answered: Set<SubmissionItem> | null = null;
    const checking = heldElsewhere(nc, byKey).then((held) => (answered = new Set(entries.filter((entry) => held.has(entry.key)).map((entry) => entry.item))));
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
    const keys = entries.map((entry) => entry.key);
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

  /** The holder's answer: does this node have (or is it committing) this client id? */
  const has = (tenantId: string, id: string): boolean => pending.has(claimKey(tenantId, id)) || deps.queue.states(tenantId, [id]).has(id);

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
    /** The holder's answer to another node: which of these client ids does this node have (or is it committing)? */
    holds: (request: unknown): { has: boolean[] } => ({ has: holderItems(request).map((item) => has(item.tenant_id, item.id)) }),
    skipped: () => skipped,
    /** Resolves once every request that passed the drain's gate has been answered. */
    settled: (): Promise<void> => (inFlight === 0 ? Promise.resolve() : new Promise((resolve) => settled.push(resolve))),
  };
}
