/**
 * Fleet intake over the replicated spool: a submission is answered
 * once its messages are committed here and the cluster holds their entries.
 * The wait rides out a reconnection or a stream's leader election; a cluster
 * away longer than `ackTimeoutMs` does not stop intake (FLEET.md: a node cut
 * off goes on alone): the answer then goes out on the local commit, logged
 * and counted, and the entries follow once the cluster answers.
 */
import type { SpoolRows } from '../../core/fleet/index.js';
import type { Logger } from '../../core/index.js';
import type { Principal } from '../../core/tenant/index.js';
import type { SubmissionItem, SubmissionService } from '../../core/message/index.js';
import { deadline } from '../../runtime/index.js';
import type { ReplicatedSpool } from './replicated-spool.js';

/** The tenant each accepted item was queued in, with its client ids. */
function acceptedIds(
  principal: Principal,
  items: readonly SubmissionItem[],
  rejected: ReadonlySet<number>,
): Map<string, string[]> {
  const byTenant = new Map<string, string[]>();
  for (const item of items) {
    const tenantId = principal.kind === 'tenant' ? principal.tenantId : item.tenantId;
    if (rejected.has(item.index) || item.id === null || tenantId === undefined) continue;
    const ids = byTenant.get(tenantId);
    if (ids === undefined) byTenant.set(tenantId, [item.id]);
    else ids.push(item.id);
  }
  return byTenant;
}

export function createSpoolIntake(
  inner: SubmissionService,
  deps: { spool: ReplicatedSpool; rows: Pick<SpoolRows, 'waitingPksOf'>; ackTimeoutMs: number; log: Logger },
) {
  let answeredUnreplicated = 0;
  const submissions: SubmissionService = {
    async enqueue(principal, items, defaultPriority, correlationId, alongside) {
      const result = await inner.enqueue(principal, items, defaultPriority, correlationId, alongside);
      const rejected = new Set(result.rejected.map((rejection) => rejection.index));
      const pks = [...acceptedIds(principal, items, rejected)].flatMap(([tenantId, ids]) =>
        deps.rows.waitingPksOf(tenantId, ids),
      );
      if (pks.length === 0) return result;
      const replicated = await deadline(
        deps.spool.held(pks),
        deps.ackTimeoutMs,
        'the cluster holding the spool entries',
      ).then(
        () => true,
        () => false,
      );
      if (!replicated) {
        answeredUnreplicated += 1;
        deps.log.warn(
          { messages: pks.length },
          'answered before the cluster held the messages: replicated once it answers',
        );
      }
      return result;
    },
  };
  return { submissions, answeredUnreplicated: () => answeredUnreplicated };
}
