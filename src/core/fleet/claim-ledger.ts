/**
 * Fleet-wide idempotency as a log: which node holds each client id
 * is decided by the order of the fleet's claim records on one replicated
 * stream, the same order on every node, so every node's index reaches the same
 * answer with no coordination of its own. A request's ids travel in one record,
 * not one replicated write each. Pure: the stream (fleet/) and the index
 * (store/) are adapters behind the ports below.
 */

/**
 * One record of the claim log (src/fleet/claims/claim-wire-schemas.ts reads it off the log and refuses what
 * is not one: an unknown kind, a malformed node id or key, more keys than a request carries).
 * - `claim`: `node` holds each key nobody held before it in the log.
 * - `take`: `node` takes each key over from `from` (which answered that it has no such message), if `from` still holds it.
 * - `assign`: `node` holds each key, whoever held it (a message adopted from a draining node now lives there).
 */
export type ClaimRecord =
  | { kind: 'claim'; node: string; at: number; keys: string[] }
  | { kind: 'take'; node: string; from: string; at: number; keys: string[] }
  | { kind: 'assign'; node: string; at: number; keys: string[] };

/** This node's index of the log: every record applied in log order, with the last log sequence applied. */
export interface ClaimIndex {
  /** The log sequence of the last record applied; 0 when none. */
  appliedSeq(): number;
  /** Applies records in log order, in one transaction with `throughSeq`, the log sequence they end at (entries that were no record count too). */
  apply(throughSeq: number, records: readonly ClaimRecord[]): void;
  /** The holder of each key that has one. */
  holders(keys: readonly string[]): Map<string, string>;
  /** Forgets claims made before `before` (epoch ms): the log keeps them no longer either. Answers how many. */
  prune(before: number): number;
}

/** What a record does to one key's holder: the rule every node's index applies in log order. */
export function holderAfter(record: ClaimRecord, holder: string | undefined): string | undefined {
  switch (record.kind) {
    case 'claim':
      return holder ?? record.node;
    case 'take':
      return holder === record.from ? record.node : holder;
    case 'assign':
      return record.node;
  }
}
