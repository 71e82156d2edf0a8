/**
 * What seals a message where it is read (an /add-messages parser thread, an SMTP session
 * process), made from the key material such a thread or process is started with: a function
 * cannot cross to it, the keys can.
 */
import type { SealingKeys } from '../core/message/index.js';
import { createBlindIndex } from './blind-index.js';
import { createBodySeal, type KeyEncryptionKey } from './body-seal.js';

/** The key-encryption keys (the current one first) and the blind index's key, as they are handed over. */
export interface SealingMaterial {
  bodyKeys: KeyEncryptionKey[];
  blindKey: Uint8Array;
}

export const sealingKeys = (material: SealingMaterial): SealingKeys => ({
  seal: createBodySeal(material.bodyKeys),
  index: createBlindIndex(material.blindKey),
});
