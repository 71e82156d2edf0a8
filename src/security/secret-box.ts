/**
 * AES-256-GCM secret box. Sealed form: `v1.<iv>.<tag>.<ciphertext>` (base64url).
 * The context (table, row, field) is bound as additional data, so a ciphertext
 * copied into another row or field fails to open instead of leaking there.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SecretBox } from '../core/ports.js';

const VERSION = 'v1';
const IV_BYTES = 12;
/** How many opened secrets are remembered: far more than the tenants and accounts a daemon serves. */
const OPENED_KEPT = 4096;

export function createAesGcmSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error('secret box key must be 32 bytes');
  const opened = new Map<string, string>();
  return {
    seal(plaintext, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [VERSION, iv, cipher.getAuthTag(), body].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
    },
    open(sealed, context) {
      // A sealed value always opens to the same text, and the same few are opened again and again
      // (a tenant's or an account's secrets at each read of its row; a decipher is tens of µs).
      const memo = `${context}\n${sealed}`;
      const known = opened.get(memo);
      if (known !== undefined) return known;
      const plaintext = openSealed(sealed, context);
      if (opened.size >= OPENED_KEPT) opened.clear();
      opened.set(memo, plaintext);
      return plaintext;
    },
  };

  function openSealed(sealed: string, context: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== VERSION || iv === undefined || tag === undefined || body === undefined) {
      throw new Error('sealed secret has an unknown format');
    }
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }
}
