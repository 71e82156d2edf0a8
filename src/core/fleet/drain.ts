/**
 * Drain and leave, the pure part: a node's drain phases, which live
 * peer takes each waiting message, and when an adopted message becomes due on
 * its new node. The adapter in src/fleet/ moves the messages over NATS.
 */

/**
 * `active`: takes mail. `draining`: intake refused, sends finishing, waiting
 * mail being moved. `drained`: nothing waiting is left here; the node may stop.
 */
export type DrainPhase = 'active' | 'draining' | 'drained';

export interface DrainProgress {
  phase: DrainPhase;
  /** Messages moved to a peer, by peer node id. */
  moved: Record<string, number>;
  /** Messages still waiting here (after the last pass). */
  waiting: number;
  /** Why the last pass could not move everything (no live peer, a peer refusing). */
  last_error: string | null;
}

/**
 * A sealed body as it travels: opened by no node on the way, only by the one that sends it. Its
 * parts (base64) when it lives in the database; or, in a fleet whose nodes share an S3 body store,
 * the name of its object there, which the adopter reads itself (the body is written once).
 */
export type SealedTransfer = { key: string; parts: string[] } | { key: string; object: string };

/**
 * Personal fields as they travel (issue 45, migration 19): sealed under their own data key,
 * with the search terms (blind-index digests) the adopting node matches on; hex.
 */
export interface PersonalTransfer {
  key: string;
  sealed: string;
  terms: string;
}

/** A message as stored, carried to the peer that adopts it (JSON-safe). */
export interface MessageTransfer {
  origin_node: string;
  origin_pk: number;
  tenant_id: string;
  id: string;
  account_id: string;
  priority: number;
  batch_code: string | null;
  source: 'http' | 'smtp';
  /** The body sealed under its data key as stored (issue 45): the wrapped key and the parts, base64. */
  sealed?: SealedTransfer | null | undefined;
  /** A body stored in clear before bodies were sealed: an HTTP submission's payload JSON... */
  payload: string | null;
  /** ...or the RFC 5322 bytes of an SMTP submission (spooled ones read back whole), base64. */
  raw_base64: string | null;
  /** The envelope and subject sealed (written since they are); the clear fields below are then empty. */
  personal?: PersonalTransfer | null | undefined;
  mail_from: string;
  rcpt_to: string;
  subject: string | null;
  message_id_header: string | null;
  size_bytes: number;
  state: 'queued' | 'deferred';
  attempts: number;
  next_attempt_at: number;
  created_at: number;
  deferred_at: number | null;
  deferred_reason: string | null;
  /** The recipients' domains (per-destination limits); absent from a node older than them. */
  rcpt_domains?: string | null | undefined;
}

/** What a peer answers to an adopt request. */
export type AdoptAnswer = { ok: true; pk: number; already: boolean } | { ok: false; code: string; message: string };

/**
 * The peers a draining node may hand mail to: alive, not itself, in a stable
 * order, so that the spread over them is even and repeatable.
 */
export function drainTargets(self: string, alive: readonly string[]): string[] {
  return [...new Set(alive)].filter((node) => node !== self).sort();
}

/** The peer for the `index`-th message of a pass: round robin, so each peer gets its share. */
export function peerFor(targets: readonly string[], index: number): string | null {
  return targets.length === 0 ? null : (targets[index % targets.length] ?? null);
}

/** The same round robin starting at `index`'s peer: the ones to try in turn when the first refuses. */
export function peersInTurn(targets: readonly string[], index: number): string[] {
  if (targets.length === 0) return [];
  const start = index % targets.length;
  return [...targets.slice(start), ...targets.slice(0, start)];
}

/**
 * When an adopted message is next due on its new node. A message scheduled by
 * the client (never attempted, deferred_ts ahead) keeps its time; one waiting
 * for a retry after failed attempts is due at once: the new node has its own
 * connection to the relay, and the backoff was earned on the old one.
 */
export function adoptedDueAt(transfer: Pick<MessageTransfer, 'attempts' | 'next_attempt_at'>, now: number): number {
  return transfer.attempts === 0 ? Math.max(transfer.next_attempt_at, now) : now;
}

/** The phase after a pass: drained once nothing waits; draining while something does. */
export function phaseAfterPass(waiting: number): DrainPhase {
  return waiting === 0 ? 'drained' : 'draining';
}

/** A waiting message as the store hands it over, before this node names itself as its origin. */
export type StoredTransfer = Omit<MessageTransfer, 'origin_node'>;

/**
 * The store's side of a drain. Each method is one transaction with its event:
 * `adopt` inserts the message with an `adopted` event (or finds it already
 * there: a retried adopt), `moved` removes the original with a `moved` event.
 */
export interface MessageTransferStore {
  /** Waiting messages (queued or deferred, suspended or not) not leased by a send, oldest first. */
  waiting(limit: number): StoredTransfer[];
  /** How many messages wait here (queued, deferred, sending). */
  waitingCount(): number;
  adopt(transfer: MessageTransfer, dueAt: number, now: number): { pk: number; already: boolean };
  /** False when the message is no longer waiting here (a send took it meanwhile): it was not removed. */
  moved(originPk: number, toNode: string, peerPk: number, now: number): boolean;
}
