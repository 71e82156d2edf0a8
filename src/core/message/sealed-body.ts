/**
 * A message body as it is kept: sealed under a data key of its own (seed 000,
 * "Retention, PII & GDPR"), the key kept only wrapped by the key-encryption
 * key. Destroying the data key erases the body wherever a copy of the sealed
 * bytes lives (the database's free pages and WAL, a backup, the fleet's spool
 * stream), which no delete of the bytes themselves can promise.
 */

export interface SealedBody {
  /** Bound into every part as associated data: a body moved to another tenant does not open. */
  tenantId: string;
  /** The data key, wrapped by the key-encryption key (whose id it carries: a ring opens older ones). */
  key: Uint8Array;
  /** The sealed parts in order: one, unless the body was spooled while it arrived. */
  parts: Uint8Array[];
}

/** A body on its way to be built or relayed: sealed, or in clear when it was stored before bodies were sealed. */
export type BodyBytes = { sealed: SealedBody } | { clear: Uint8Array };

/** A fresh data key: `plain` seals the body's parts and is never stored; `wrapped` is what is stored. */
export interface DataKey {
  readonly plain: Uint8Array;
  readonly wrapped: Uint8Array;
}

/** Authenticated encryption of bodies under per-message keys (security/body-seal.ts). */
export interface BodySeal {
  newKey(): DataKey;
  /** Part `part` (from 0) of a body under its key. */
  seal(key: DataKey, tenantId: string, part: number, bytes: Uint8Array): Buffer;
  /** The body in clear; throws when a part or the key was altered, moved or wrapped by an unknown key. */
  open(body: SealedBody): Buffer;
  /** The wrapped key under the current key-encryption key, or null when it already is. */
  rewrap(wrapped: Uint8Array): Buffer | null;
  /**
   * A small personal value under a data key (a message's envelope, an event's recipients), bound
   * to `context` (its tenant, record and field) as associated data: moved elsewhere, it does not open.
   */
  sealField(key: DataKey, context: string, bytes: Uint8Array): Buffer;
  /** The value sealField sealed; throws when altered, moved, or its key is wrapped by an unknown key. */
  openField(wrapped: Uint8Array, context: string, sealed: Uint8Array): Buffer;
  /** The data key a wrapped key holds, to seal more under it (a message's later events). */
  reopen(wrapped: Uint8Array): DataKey;
}

/** Sealed personal fields as a row keeps them: the thread that holds the body keys opens them (openEnvelope). */
export interface SealedFields {
  tenantId: string;
  /** Their data key, wrapped. */
  key: Uint8Array;
  sealed: Uint8Array;
}
