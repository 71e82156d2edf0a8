/**
 * One-click unsubscribe links (core/tenant/list-unsubscribe.ts) sealed with
 * AES-256-GCM under a key of their own: a token names its tenant, message,
 * recipient and list, reveals none of them, and any change to it makes it not
 * open. The key is derived from the master and kept through its rotations
 * (store/kept-keys.ts), since links live on in mail already delivered.
 */
import { normalizeAddress } from '../core/index.js';
import type { UnsubscribeClaim, UnsubscribeLinks } from '../core/tenant/index.js';
import { createAesGcmSecretBox } from './secret-box.js';

/** Bound as additional data: a value sealed for another purpose under the same key would not open. */
const CONTEXT = 'unsubscribe-link';
/** A token is some 200 characters: anything far longer is refused unread. */
const MAX_TOKEN_LENGTH = 2048;
const TOKEN = /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

const isText = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

export function createUnsubscribeLinks(key: Buffer): UnsubscribeLinks {
  const box = createAesGcmSecretBox(key);
  return {
    issue: (claim) =>
      box.seal(
        JSON.stringify([claim.tenantId, claim.messageId, normalizeAddress(claim.recipient), claim.list]),
        CONTEXT,
      ),
    open(token): UnsubscribeClaim | null {
      if (token.length > MAX_TOKEN_LENGTH || !TOKEN.test(token)) return null;
      let fields: unknown;
      try {
        fields = JSON.parse(box.open(token, CONTEXT));
      } catch {
        // Forged, altered, or sealed under another key: the same answer as a token that never was.
        return null;
      }
      if (!Array.isArray(fields) || fields.length !== 4) return null;
      const [tenantId, messageId, recipient, list] = fields as unknown[];
      if (!isText(tenantId) || !isText(messageId) || !isText(recipient) || !(list === null || isText(list)))
        return null;
      return { tenantId, messageId, recipient, list };
    },
  };
}
