/**
 * A message sealed where it is read (an /add-messages parser thread, an SMTP session process),
 * before it reaches the main thread: see sealedWhereRead.
 */
import type { BlindIndex } from '../blind-index.js';
import { newSealedEnvelope } from './envelope-seal.js';
import type { NewMessage } from './message.js';
import type { BodySeal } from './sealed-body.js';

/** What seals a message where it is read: data keys and ciphers, and the search terms' key. */
export interface SealingKeys {
  seal: BodySeal;
  index: BlindIndex;
}

/**
 * `message` sealed where it was read, for `tenantId`: its body (`bytes`, an HTTP payload's JSON or
 * SMTP's bytes as received) under a new data key, its envelope and subject under another with
 * their search terms. The main thread, which owns SQLite and limits intake, then stores the
 * sealed bytes without a cipher of its own.
 */
export function sealedWhereRead<M extends Pick<NewMessage, 'content' | 'mailFrom' | 'rcptTo' | 'subject'>>(
  message: M,
  tenantId: string,
  keys: SealingKeys,
  bytes: Uint8Array,
  source: 'http' | 'smtp',
): M {
  const key = keys.seal.newKey();
  const body = keys.seal.seal(key, tenantId, 0, bytes);
  return {
    ...message,
    content: { kind: 'sealed', tenantId, key: key.wrapped, body, ...(source === 'smtp' ? { source } : {}) },
    envelope: newSealedEnvelope(keys.seal, keys.index, tenantId, message),
  };
}
