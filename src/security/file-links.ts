/**
 * The tokens of offloaded attachments' download links (core/message/attachment-offload.ts).
 * A file's id is an HMAC of its tenant, message and attachment under a key of its own: the
 * same on every attempt to send the message (a link in a copy the relay took before a crash
 * still works once the message is sent again), and unguessable without the key. The token is
 * the id and a MAC of it, so that a forged or altered token is refused before anything is
 * looked up: whatever is wrong with it, the answer and its time are the same.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { FileLinks } from '../core/message/index.js';

const ID_BYTES = 16;
const MAC_BYTES = 16;
/** base64url of 32 bytes, unpadded. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** The links' key, derived from the key the unsubscribe links are sealed with (kept through the master's rotations). */
export function fileLinksKey(linkKey: Uint8Array): Buffer {
  return Buffer.from(hkdfSync('sha256', linkKey, Buffer.alloc(0), 'mailproxy file links', 32));
}

export function createFileLinks(key: Uint8Array): FileLinks {
  const idKey = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'file id', 32));
  const macKey = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'file token', 32));
  const macOf = (id: Buffer): Buffer => createHmac('sha256', macKey).update(id).digest().subarray(0, MAC_BYTES);
  return {
    fileId(tenantId, clientId, index) {
      // As JSON: no two (tenant, message) pairs run together into the same text.
      const fields = JSON.stringify([tenantId, clientId, index]);
      return createHmac('sha256', idKey).update(fields).digest().subarray(0, ID_BYTES).toString('hex');
    },
    token(fileId) {
      const id = Buffer.from(fileId, 'hex');
      return Buffer.concat([id, macOf(id)]).toString('base64url');
    },
    open(token) {
      if (!TOKEN.test(token)) return null;
      const bytes = Buffer.from(token, 'base64url');
      const id = bytes.subarray(0, ID_BYTES);
      return timingSafeEqual(macOf(id), bytes.subarray(ID_BYTES)) ? id.toString('hex') : null;
    },
  };
}
