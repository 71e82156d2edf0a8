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
import type { AppError, Clock, Logger } from '../../core/index.js';
import {
  type MessageQueue,
  refusal,
  rejection,
  type Rejection,
  type SubmissionItem,
  type SubmissionResult,
  type SubmissionService,
} from '../../core/message/index.js';
import { within } from '../../runtime/index.js';
import { holderAnswerCodec, holderRequestCodec } from './claim-wire-schemas.js';
import { claimablesOf, createHolderCheck, type Claimable } from './client-id-holders.js';
import type { FleetLink } from '../link/fleet-service.js';
import { requestRoute } from '../link/fleet-responder.js';
import { claimKey, type ClientIdClaims } from './idempotency-claims.js';
import { IntakeGate } from './intake-gate.js';

export { holderSubject } from './client-id-holders.js';

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

const merge = (result: SubmissionResult, extra: readonly Rejection[]): SubmissionResult =>
  extra.length === 0
    ? result
    : { queued: result.queued, rejected: [...result.rejected, ...extra].sort((a, b) => a.index - b.index) };

/** The items another node holds; null when the fleet could not answer in time (the check is skipped). */
function createDuplicateCheck(
  deps: FleetSubmissionsDeps,
): (entries: readonly Claimable[]) => Promise<Set<SubmissionItem> | null> {
  const { link, log } = deps;
  const heldElsewhere = createHolderCheck(deps);
  return async (entries) => {
    const nc = link.connection();
    if (nc === null || !link.connected()) return null;
    const byKey = new Map(entries.map((entry) => [entry.key, entry]));
    let answered: Set<SubmissionItem> | null = null;
    const checking = heldElsewhere(nc, byKey).then(
      (held) => (answered = new Set(entries.filter((entry) => held.has(entry.key)).map((entry) => entry.item))),
    );
    await within(
      checking.catch((error: unknown) => log.warn({ err: error }, 'fleet idempotency claim failed')),
      deps.claimTimeoutMs,
    );
    return answered;
  };
}

export function createFleetSubmissions(inner: SubmissionService, deps: FleetSubmissionsDeps) {
  const { log } = deps;
  /** Keys claimed by requests not yet committed: the holder's answer to "do you have it?" counts them. */
  const pending = new PendingKeys();
  const gate = new IntakeGate();
  const duplicates = createDuplicateCheck(deps);
  let skipped = 0;

  /** The fleet's check, then the local commit of what it let through. */
  const checked: SubmissionService['enqueue'] = async (principal, items, defaultPriority, correlationId, alongside) => {
    const entries = claimablesOf(principal, items, deps.queue);
    if (entries.length === 0) return inner.enqueue(principal, items, defaultPriority, correlationId, alongside);
    const keys = entries.map((entry) => entry.key);
    pending.add(keys);
    try {
      const held = await duplicates(entries);
      if (held === null) {
        skipped += 1;
        log.warn(
          { messages: entries.length },
          'fleet idempotency check skipped: the cluster did not answer; accepted on the local check',
        );
      }
      const extra = [...(held ?? [])].map((item) => rejection(item.index, item.id, refusal('ALREADY_SENT')));
      if (extra.length > 0)
        log.info({ ids: extra.map((entry) => entry.id) }, 'client ids accepted on another node: answered as repeats');
      const rest = extra.length === 0 ? items : items.filter((item) => !held?.has(item));
      const result = await inner.enqueue(
        principal,
        rest,
        defaultPriority,
        correlationId,
        alongside && ((own) => alongside(merge(own, extra))),
      );
      return merge(result, extra);
    } finally {
      pending.remove(keys);
    }
  };

  /** The holder's answer: does this node have (or is it committing) this client id? */
  const has = (tenantId: string, id: string): boolean =>
    pending.has(claimKey(tenantId, id)) || deps.queue.states(tenantId, [id]).has(id);

  const service: SubmissionService = {
    async enqueue(principal, items, defaultPriority, correlationId, alongside) {
      const refused = deps.refusal();
      if (refused !== null) throw refused;
      return gate.through(() => checked(principal, items, defaultPriority, correlationId, alongside));
    },
  };

  return {
    submissions: service,
    /** The holder's answer to another node: which of these client ids does this node have (or is it committing)? */
    holds: requestRoute(holderRequestCodec, holderAnswerCodec, (request) => ({
      has: request.items.map((item) => has(item.tenant_id, item.id)),
    })),
    skipped: () => skipped,
    /** Resolves once every request that passed the drain's gate has been answered. */
    settled: (): Promise<void> => gate.settled(),
  };
}

/** Keys counted once per request that claimed them, until it is answered. */
class PendingKeys {
  private readonly counts = new Map<string, number>();

  add(keys: readonly string[]): void {
    for (const key of keys) this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  remove(keys: readonly string[]): void {
    for (const key of keys) {
      const left = (this.counts.get(key) ?? 1) - 1;
      if (left <= 0) this.counts.delete(key);
      else this.counts.set(key, left);
    }
  }

  has(key: string): boolean {
    return this.counts.has(key);
  }
}
