/**
 * Replaying a lost node's spool into this node's queue, record by record in
 * the stream's order: each entry adopted as a drain's adopt is (same client id
 * and X-Genro-Mail-ID, so a receiver can tell a possible resend) unless the
 * lost node recorded its end, its client id named this node's in the claim
 * log, and only then the record removed (a second adopter, should this one
 * die, finds only what is left).
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { replayPlan, adoptedDueAt, type MessageTransferStore, type StoredTransfer } from '../../core/fleet/index.js';
import type { Clock, Logger } from '../../core/index.js';
import { deadline } from '../../runtime/index.js';
import type { ClientIdClaims } from '../claims/idempotency-claims.js';
import type { SpoolOwner, SpoolStream } from './spool-stream.js';

const ASSIGN_DEADLINE_MS = 30_000;

export interface ReplayDeps {
  stream: Pick<SpoolStream, 'indexes' | 'read' | 'removeRecord'>;
  transfers: Pick<MessageTransferStore, 'adopt'>;
  claims: ClientIdClaims;
  wake: () => void;
  /** A stopping node replays no further (what is left stays for the next check or another survivor). */
  stopped: () => boolean;
  /** Called for each message queued here, as soon as it is. */
  counted: () => void;
  clock: Clock;
  log: Logger;
}

/** Adopts one entry into this node's queue, then claims its client id; false when it could not be queued. */
async function adoptEntry(entry: StoredTransfer, owner: SpoolOwner, deps: ReplayDeps): Promise<boolean> {
  const { clock } = deps;
  const transfer = { ...entry, origin_node: owner.node };
  try {
    const now = clock.now();
    const result = deps.transfers.adopt(transfer, adoptedDueAt(transfer, now), now);
    if (!result.already) deps.wake();
  } catch (error) {
    // An account this node does not have: the record stays for another pass (or another survivor).
    deps.log.error(
      { err: error, node: owner.node, pk: entry.origin_pk, tenantId: entry.tenant_id, id: entry.id },
      'could not adopt a lost node’s message',
    );
    return false;
  }
  // Counted once queued here: should a later step fail, the lease still says something was adopted.
  deps.counted();
  // A claim log that stopped applying would hold the adoption (and the returning node) for ever.
  await deadline(
    deps.claims.assign(entry.tenant_id, entry.id, clock.now()),
    ASSIGN_DEADLINE_MS,
    'the claim of an adopted message',
  );
  return true;
}

/** Replays the lost node's unfinished entries; answers how many were adopted and how many could not be. */
export async function replaySpool(
  nc: NatsConnection,
  owner: SpoolOwner,
  deps: ReplayDeps,
): Promise<{ adopted: number; failed: number }> {
  const { stream } = deps;
  const indexes = await stream.indexes(nc, owner);
  const plan = replayPlan(indexes.map(({ index }) => index));
  let adopted = 0;
  let failed = 0;
  for (const { subject, index } of indexes) {
    if (!('pks' in index)) continue;
    if (deps.stopped()) return { adopted, failed: failed + 1 };
    const held = await stream.read(nc, subject);
    if (held === null || !('entries' in held.record)) continue;
    let kept = false;
    for (const entry of held.record.entries) {
      // An older entry of a message written again later, or one whose end was recorded.
      if (plan.get(entry.origin_pk) !== index.seq) continue;
      if (await adoptEntry(entry, owner, deps)) adopted += 1;
      else {
        failed += 1;
        kept = true;
      }
    }
    if (!kept) await stream.removeRecord(nc, held);
  }
  // The ends recorded go last: while a record is left, they still say what not to send.
  if (failed === 0)
    for (const { subject, index } of indexes)
      if ('ended' in index) await stream.removeRecord(nc, { subject, objects: [] });
  return { adopted, failed };
}
