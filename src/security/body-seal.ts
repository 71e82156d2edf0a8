/**
 * Bodies sealed under per-message data keys (core/message/sealed-body.ts), with
 * AES-256-GCM from node:crypto (OpenSSL, AES-NI).
 *
 *   wrapped key: kek id (4) | AES-256-ECB(kek, key) (32)
 *   sealed part: iv (12) | ciphertext | tag (16)
 *
 * A part is authenticated under its data key with the tenant and its index as associated data:
 * parts cannot be altered, reordered or moved to another tenant. The data key is a fresh random
 * 256-bit value used for one body only, so it is wrapped by direct encryption under the
 * key-encryption key, two independent AES blocks: ECB's weaknesses (no IV, equal blocks showing as
 * equal) reveal nothing of random, never-repeated blocks, and no IV means no bound on how many keys
 * one key-encryption key may wrap (GCM's random IVs run out at about 2^32, some weeks of a busy
 * relay). Integrity comes from the parts: a changed wrapped key unwraps to a key under which no part
 * opens. One ECB cipher per key-encryption key lives as long as the seal (ECB keeps no state between
 * blocks), and random bytes come from a pool refilled by one call: the per-message cost was three
 * CSPRNG calls, three cipher set-ups and an HMAC, a third of HTTP intake's time on the main thread
 * (bench/results/HISTORY.md). Now about 7 us for a 2 KB body.
 *
 * The key-encryption key is derived from the master secret; its id (a digest of it, which reveals
 * nothing) lets a ring of keys open what an older one wrapped while `mailproxy keys rotate` rewraps them.
 */
import { createCipheriv, createDecipheriv, createHmac, randomFillSync, type Cipher, type Decipher } from 'node:crypto';
import type { BodySeal, DataKey, SealedBody } from '../core/message/index.js';

const KEY_ID_BYTES = 4;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
export const WRAPPED_KEY_BYTES = KEY_ID_BYTES + KEY_BYTES;
/** What sealing adds to each part. */
export const PART_OVERHEAD_BYTES = IV_BYTES + TAG_BYTES;

/** A key-encryption key; the first of a ring wraps, any opens. */
export interface KeyEncryptionKey {
  id: Uint8Array;
  key: Uint8Array;
}

export function keyEncryptionKey(key: Uint8Array): KeyEncryptionKey {
  if (key.length !== KEY_BYTES) throw new Error('a key-encryption key must be 32 bytes');
  const id = createHmac('sha256', key).update('mailproxy:kek-id').digest().subarray(0, KEY_ID_BYTES);
  return { id, key };
}

const partContext = (tenantId: string, part: number): Buffer =>
  Buffer.from(`mailproxy:body:v1\0${tenantId}\0${part}`, 'utf8');
const fieldContext = (context: string): Buffer => Buffer.from(`mailproxy:field:v1\0${context}`, 'utf8');

/** CSPRNG bytes a few at a time, from a buffer refilled whole when used up. */
function randomPool(size = 16 * 1024): (bytes: number) => Buffer {
  const pool = Buffer.alloc(size);
  let at = size;
  return (bytes) => {
    if (at + bytes > size) {
      randomFillSync(pool);
      at = 0;
    }
    at += bytes;
    return pool.subarray(at - bytes, at);
  };
}

function decrypt(key: Uint8Array, sealed: Uint8Array, aad: Buffer): Buffer {
  if (sealed.length < IV_BYTES + TAG_BYTES) throw new Error('a sealed body part is too short');
  const view = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
  const decipher = createDecipheriv('aes-256-gcm', key, view.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
  decipher.setAAD(aad);
  decipher.setAuthTag(view.subarray(view.length - TAG_BYTES));
  return Buffer.concat([decipher.update(view.subarray(IV_BYTES, view.length - TAG_BYTES)), decipher.final()]);
}

/** A key-encryption key's long-lived ECB pair (no padding: whole blocks in, whole blocks out at once). */
function blockCiphers(kek: KeyEncryptionKey): { id: Buffer; wrap: Cipher; unwrap: Decipher } {
  const wrap = createCipheriv('aes-256-ecb', kek.key, null).setAutoPadding(false);
  const unwrap = createDecipheriv('aes-256-ecb', kek.key, null).setAutoPadding(false);
  return { id: Buffer.from(kek.id), wrap, unwrap };
}

export function createBodySeal(ring: readonly KeyEncryptionKey[]): BodySeal {
  const ciphers = ring.map(blockCiphers);
  const current = ciphers[0];
  if (current === undefined) throw new Error('a body seal needs a key-encryption key');
  const random = randomPool();
  const cipherOf = (wrapped: Uint8Array) => {
    if (wrapped.length !== WRAPPED_KEY_BYTES) throw new Error('a wrapped body key has the wrong length');
    const id = Buffer.from(wrapped.buffer, wrapped.byteOffset, KEY_ID_BYTES);
    const found = ciphers.find((candidate) => id.equals(candidate.id));
    if (found === undefined)
      throw new Error('a body key is wrapped by a key this daemon does not hold (was the secret key changed?)');
    return found;
  };
  const unwrap = (wrapped: Uint8Array): Buffer => cipherOf(wrapped).unwrap.update(wrapped.subarray(KEY_ID_BYTES));
  const wrap = (plain: Uint8Array): Buffer => Buffer.concat([current.id, current.wrap.update(plain)]);

  const sealUnder = (key: Uint8Array, aad: Buffer, bytes: Uint8Array): Buffer => {
    const iv = random(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad);
    return Buffer.concat([iv, cipher.update(bytes), cipher.final(), cipher.getAuthTag()]);
  };

  return {
    newKey(): DataKey {
      // A copy: the pool is refilled, and a spool keeps its key while its parts arrive.
      const plain = Buffer.from(random(KEY_BYTES));
      return { plain, wrapped: wrap(plain) };
    },
    seal: (key, tenantId, part, bytes) => sealUnder(key.plain, partContext(tenantId, part), bytes),
    sealField: (key, context, bytes) => sealUnder(key.plain, fieldContext(context), bytes),
    openField: (wrapped, context, sealed) => decrypt(unwrap(wrapped), sealed, fieldContext(context)),
    reopen: (wrapped) => ({ plain: unwrap(wrapped), wrapped: Buffer.from(wrapped) }),
    open(body: SealedBody): Buffer {
      const key = unwrap(body.key);
      const parts = body.parts.map((part, index) => decrypt(key, part, partContext(body.tenantId, index)));
      return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
    },
    rewrap(wrapped) {
      if (Buffer.from(wrapped.buffer, wrapped.byteOffset, KEY_ID_BYTES).equals(current.id)) return null;
      return wrap(unwrap(wrapped));
    },
  };
}
