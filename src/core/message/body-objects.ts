/**
 * Where large sealed bodies live outside the database (issue 46): files beside it in the data
 * directory, or an S3-compatible bucket. The database keeps small bodies, and for a large one
 * its data key and the object's name: the object holds only sealed bytes, so whoever reads the
 * bucket or the files learns nothing without the keys, and destroying the key shreds the body
 * wherever the object still lies until it is removed.
 */

/** A body store's last word, for GET /status and /ready. */
export interface BodyStoreHealth {
  backend: 'embedded' | 's3' | 'jetstream';
  /** `failing` from a failed operation until one succeeds again. */
  state: 'ok' | 'failing';
  last_error: { reason: string; at_ts: number } | null;
}

export interface BodyObjects {
  /** Resolves once the object is durable (fsynced, or acknowledged by the bucket); replaces one of the same name. */
  put(name: string, bytes: Uint8Array): Promise<void>;
  /** The object's bytes; null when there is none of that name. */
  get(name: string): Promise<Buffer | null>;
  /** Resolves when the object is gone, also when it was gone already. */
  remove(name: string): Promise<void>;
  /** The names of the objects last written before `before` (epoch ms), for the sweep of those no message names. */
  list(before: number): Promise<string[]>;
  /** Whether the store answers now (a cheap round trip); records the answer in health(). */
  probe(): Promise<boolean>;
  health(): BodyStoreHealth;
  /** Lets go of the store's connections, at the daemon's stop. */
  close(): Promise<void>;
}

/**
 * Port: what the database knows of the body store's objects (migration 29): those no message needs
 * any more (listed for removal), which objects a message names, and the mail that waits on one.
 */
export interface BodyObjectRows {
  /** Up to `limit` names listed for removal, oldest listing first. */
  listed(limit: number): string[];
  /** These are gone from the store: no longer listed. */
  removed(names: readonly string[]): void;
  /**
   * Of `names`, those no message names (written for a submission that was then not committed), nor
   * a message handed to a fleet peer that shares the store (migration 31).
   */
  unnamed(names: readonly string[]): string[];
  /**
   * Forgets the objects handed to a peer before `before` that the store no longer holds: `present`
   * is every object it holds that was written before then (the peer removed the others when it was done).
   */
  forgetHandedGone(present: readonly string[], before: number): void;
  /** How many are listed. */
  count(): number;
  /**
   * How many messages still to be sent have their bodies in the body store: in any object (`all`),
   * or in objects a daemon wrote alone (`alone`: their names carry no node id, as a fleet node's do).
   */
  waiting(written: 'all' | 'alone'): number;
}

/**
 * A body's sealed parts as one object: each part after its length (4 bytes, big-endian). A body
 * sealed whole is one part; one that arrived spooled keeps the parts it was sealed in, each
 * bound to its place.
 */
export function framedParts(parts: readonly Uint8Array[]): Buffer {
  const framed: Uint8Array[] = [];
  for (const part of parts) {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(part.byteLength);
    framed.push(length, part);
  }
  return Buffer.concat(framed);
}

/** The parts of an object `framedParts` made (views of its memory); throws when it is not one. */
export function partsOf(object: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let at = 0;
  while (at < object.length) {
    if (at + 4 > object.length) throw new Error('a body object ends inside a part length');
    const end = at + 4 + object.readUInt32BE(at);
    if (end > object.length) throw new Error('a body object ends inside a part');
    parts.push(object.subarray(at + 4, end));
    at = end;
  }
  return parts;
}
