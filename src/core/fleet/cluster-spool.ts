/**
 * Fleet durability, the pure part: what a node keeps on the
 * cluster for each message it has not finished (its replicated spool entry),
 * which lost spools a survivor may adopt, and what an adoption lease says. A
 * message's entry is the same record a drain hands to a peer
 * (core/fleet/drain.ts), so an adoption replays it as a drain's adopt does.
 */
import type { NodeSighting } from './membership.js';
import type { StoredTransfer } from './drain.js';

/** The store's side: each message's entry as it stands now, or null once it needs none (finished, removed). */
export interface SpoolRows {
  /** Pks of the waiting messages (queued, deferred, sending) with these client ids in the tenant. */
  waitingPksOf(tenantId: string, ids: readonly string[]): number[];
  /** Which of these pks are waiting messages: whether an entry is needed, without reading it. */
  waitingOf(pks: readonly number[]): Set<number>;
  /**
   * Each pk's entry as the spool writes it (a StoredTransfer as UTF-8 JSON), null for a message
   * finished or gone. Encoded by the store: the spool only carries the bytes, it never reads them.
   */
  entriesOf(pks: readonly number[]): Map<number, Uint8Array | null>;
  /** Pks of the waiting messages after `afterPk`, in order: a start protects the whole queue page by page. */
  waitingPks(afterPk: number, limit: number): number[];
  /** Every waiting message's tenant and client id: a returning node asks the claims which of them a survivor adopted. */
  waitingIds(): Array<{ pk: number; tenantId: string; id: string }>;
  /**
   * A returning node gives up what a survivor adopted: each of these messages, if still
   * waiting here, becomes `moved` (to the node named) in one transaction, so that none is
   * sent twice. Answers how many.
   */
  surrender(moves: ReadonlyArray<{ pk: number; toNode: string }>, now: number): number;
}

/**
 * The events after which a waiting message's entry is written again: its content is new
 * (queued, updated by a repeat of a pending id) or it waits anew (resent, adopted).
 * After any other event, an entry is written only for a waiting message that has none, and
 * removed for a message that no longer waits, whatever ended it (sent, error, expired, deleted, moved).
 */
export const REWRITE_EVENTS = new Set(['message.queued', 'message.updated', 'message.resent', 'message.adopted']);

/**
 * The lease on adopting a lost node's spool, in the fleet's KV bucket under
 * `adopt.<node>.<instance>` (the instance: a node whose disk was replaced is
 * another spool). Created by the one survivor that wins it; `done` once every
 * entry was replayed. The lost node, back on its old disk, reads it and
 * surrenders what it still holds.
 */
export interface AdoptionLease {
  node: string;
  instance: string;
  by: string;
  state: 'adopting' | 'done';
  at: number;
  adopted: number;
}

/** A spool the fleet knows of: each node registers its own (node id and data directory) when it joins. */
export interface SpoolRegistration {
  node: string;
  instance: string;
}

/**
 * The spools this node may adopt now: another node's, whose node has been
 * silent or stopped for at least `adoptAfterMs`, or runs on another data
 * directory now (its disk was replaced: the old spool's node is gone for good,
 * node ids being exclusive). A drained node's spool is empty; adopting it
 * costs one read. A node with no heartbeat read is never adopted.
 */
export function adoptionCandidates(
  self: string,
  spools: readonly SpoolRegistration[],
  sightings: readonly NodeSighting[],
  now: number,
  adoptAfterMs: number,
): SpoolRegistration[] {
  return spools.filter((spool) => {
    if (spool.node === self) return false;
    const seen = sightings.find((sighting) => sighting.beat.node_id === spool.node);
    // Not read at the last heartbeat (a listing cut short, a node forgotten on leaving): nothing known, nothing adopted.
    if (seen === undefined) return false;
    if (seen.beat.instance !== spool.instance) return true;
    return now - seen.seenAt >= adoptAfterMs;
  });
}

/**
 * Whether an adoption lease found in the bucket can be taken over: one still
 * `adopting` whose adopter has itself been silent that long (it died mid-way;
 * replaying again is harmless, an adopt is idempotent by client id).
 */
export function leaseAbandoned(
  lease: AdoptionLease,
  adopter: NodeSighting | undefined,
  now: number,
  adoptAfterMs: number,
): boolean {
  if (lease.state === 'done') return false;
  return adopter === undefined || now - adopter.seenAt >= adoptAfterMs;
}

/**
 * A record of a spool as the stream holds it, with its stream sequence: the
 * entries of messages written together (one commit's, or a retry round's), or
 * the messages whose end the node recorded. Entries are written in groups, so
 * a finished message's entry cannot simply be removed: an end record says it
 * needs none any more, until the purge below the node's oldest waiting entry
 * takes both.
 */
export type SpoolRecord = { seq: number; entries: StoredTransfer[] } | { seq: number; ended: number[] };

/** A record as the replay plan reads it: which messages it holds entries of, or which it ends. */
export type SpoolRecordIndex = { seq: number; pks: readonly number[] } | { seq: number; ended: readonly number[] };

/**
 * What a survivor replays from a lost spool: for each message, the sequence of
 * the record holding its latest entry (a message written again, e.g. resent,
 * has a later one), unless the node recorded its end after that entry. The
 * records may come in any order.
 */
export function replayPlan(records: readonly SpoolRecordIndex[]): Map<number, number> {
  const plan = new Map<number, number>();
  for (const record of [...records].sort((a, b) => a.seq - b.seq)) {
    if ('pks' in record) for (const pk of record.pks) plan.set(pk, record.seq);
    else for (const pk of record.ended) plan.delete(pk);
  }
  return plan;
}

/** The index of a record read whole. */
export const indexOf = (record: SpoolRecord): SpoolRecordIndex =>
  'entries' in record ? { seq: record.seq, pks: record.entries.map((entry) => entry.origin_pk) } : record;
