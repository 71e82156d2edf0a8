/**
 * The blind index (core/blind-index.ts) as AES-256 applied to one block per value,
 * a keyed pseudorandom permutation: a value of up to 14 bytes is its own block
 * (kind, length, bytes, zeros), a longer one the first 15 bytes of its SHA-256
 * behind a marker byte no short block starts with, so no two values share a block.
 * A digest is the first 8 bytes of the enciphered block (64 bits), in hex behind
 * a letter of its kind. One long-lived ECB cipher enciphers all of a call's new
 * values in one update, and the digests of values seen lately are remembered (a
 * sender, its domain, a template's words come with every message): the search terms
 * of a message cost a few microseconds, where an HMAC per term would cost one each.
 */
import { createCipheriv, createHash } from 'node:crypto';
import type { BlindIndex, BlindKind } from '../core/index.js';

const BLOCK = 16;
const SHORT_MAX = BLOCK - 2;
const DIGEST_BYTES = 8;
const KINDS: Record<BlindKind, { tag: number; letter: string }> = {
  address: { tag: 1, letter: 'a' },
  word: { tag: 2, letter: 'w' },
  prefix: { tag: 3, letter: 'p' },
};
/** A long value's block starts with this plus its kind's tag; a short one's with the tag alone. */
const HASHED = 0x80;
/**
 * Digests remembered in two generations of at most this many: when the young one is full it
 * becomes the old one and the old one is forgotten, so what keeps coming stays and the rest
 * goes. A bound on memory, and on how long a value stays in it.
 */
const GENERATION = 4096;

type Group = { kind: BlindKind; values: readonly string[] };

/** Remembered digests of one kind, by value. */
function memory() {
  let young = new Map<string, string>();
  let old = new Map<string, string>();
  return {
    get(key: string): string | undefined {
      const found = young.get(key);
      if (found !== undefined) return found;
      const aged = old.get(key);
      if (aged !== undefined) young.set(key, aged);
      return aged;
    },
    set(key: string, digest: string): void {
      if (young.size >= GENERATION) {
        old = young;
        young = new Map();
      }
      young.set(key, digest);
    },
  };
}

export function createBlindIndex(key: Uint8Array): BlindIndex {
  if (key.length !== 32) throw new Error('a blind index key must be 32 bytes');
  const cipher = createCipheriv('aes-256-ecb', key, null).setAutoPadding(false);
  const remembered: Record<BlindKind, ReturnType<typeof memory>> = {
    address: memory(),
    word: memory(),
    prefix: memory(),
  };

  /** The digests of values none of which is remembered, in one update of the cipher. */
  const encipher = (missing: ReadonlyArray<{ kind: BlindKind; value: string }>): string[] => {
    const blocks = Buffer.alloc(missing.length * BLOCK);
    missing.forEach(({ kind, value }, index) => {
      const at = index * BLOCK;
      const length = Buffer.byteLength(value, 'utf8');
      if (length <= SHORT_MAX) {
        blocks[at] = KINDS[kind].tag;
        blocks[at + 1] = length;
        blocks.write(value, at + 2, 'utf8');
      } else {
        blocks[at] = HASHED | KINDS[kind].tag;
        createHash('sha256')
          .update(value, 'utf8')
          .digest()
          .copy(blocks, at + 1, 0, BLOCK - 1);
      }
    });
    const enciphered = cipher.update(blocks);
    return missing.map(
      ({ kind }, index) => KINDS[kind].letter + enciphered.toString('hex', index * BLOCK, index * BLOCK + DIGEST_BYTES),
    );
  };

  const digestGroups = (groups: readonly Group[]): string[][] => {
    const answers = groups.map(({ kind, values }) => values.map((value) => remembered[kind].get(value)));
    const missing: Array<{ kind: BlindKind; value: string }> = [];
    groups.forEach(({ kind, values }, group) =>
      values.forEach((value, index) => {
        if (answers[group]?.[index] === undefined) missing.push({ kind, value });
      }),
    );
    if (missing.length === 0) return answers as string[][];
    const fresh = encipher(missing);
    let next = 0;
    // In the order `missing` was made: a value missing twice was enciphered twice, alike.
    return groups.map(({ kind, values }, group) =>
      values.map((value, index) => {
        const known = answers[group]?.[index];
        if (known !== undefined) return known;
        const digest = fresh[next++] as string;
        remembered[kind].set(value, digest);
        return digest;
      }),
    );
  };

  return {
    digest: (kind, values) => digestGroups([{ kind, values }])[0] as string[],
    digestGroups,
  };
}
