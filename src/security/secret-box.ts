/**
 * AES-256-GCM secret box. Sealed form: `v1.<iv>.<tag>.<ciphertext>` (base64url).
 * The context (table, row, field) is bound as additional data, so a ciphertext
 * copied into another row or field fails to open instead of leaking there.
 *
 * A box holds a ring of keys: it seals with the first and opens with any, so that
 * secrets sealed under a master key that `mailproxy keys rotate` replaced still
 * open until they are resealed. The sealed form names no key: GCM's tag tells
 * the right one from the others.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SecretBox } from '../core/index.js';

const VERSION = 'v1';
const IV_BYTES = 12;

function openWith(key: Buffer, parts: { iv: Buffer; tag: Buffer; body: Buffer }, context: string): string {
  const decipher = createDecipheriv('aes-256-gcm', key, parts.iv, { authTagLength: 16 });
  decipher.setAAD(Buffer.from(context, 'utf8'));
  decipher.setAuthTag(parts.tag);
  return Buffer.concat([decipher.update(parts.body), decipher.final()]).toString('utf8');
}

export function createAesGcmSecretBox(keys: Buffer | readonly Buffer[]): SecretBox {
  const ring = Buffer.isBuffer(keys) ? [keys] : [...keys];
  const current = ring[0];
  if (current === undefined) throw new Error('a secret box needs a key');
  if (ring.some((key) => key.length !== 32)) throw new Error('secret box key must be 32 bytes');
  return {
    seal(plaintext, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', current, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [VERSION, iv, cipher.getAuthTag(), body]
        .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
        .join('.');
    },
    open(sealed, context) {
      const [version, iv, tag, body] = sealed.split('.');
      if (version !== VERSION || iv === undefined || tag === undefined || body === undefined) {
        throw new Error('sealed secret has an unknown format');
      }
      const parts = {
        iv: Buffer.from(iv, 'base64url'),
        tag: Buffer.from(tag, 'base64url'),
        body: Buffer.from(body, 'base64url'),
      };
      let failure: unknown;
      for (const key of ring) {
        try {
          return openWith(key, parts, context);
        } catch (error) {
          failure ??= error;
        }
      }
      throw failure;
    },
  };
}
