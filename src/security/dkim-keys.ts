/**
 * DKIM key pairs (core/tenant/sending-domain.ts DkimKeyMaker) from node:crypto: RSA 2048 (the
 * size receivers require and verify everywhere) and Ed25519 (RFC 8463). The private half as
 * PKCS#8 PEM; the public half as the DNS record's `p=` wants it: the SPKI DER for RSA, the raw
 * 32-byte key for Ed25519 (the last 32 bytes of its SPKI DER).
 */
import { generateKeyPairSync } from 'node:crypto';
import type { DkimKeyMaker } from '../core/tenant/index.js';

const ED25519_RAW_BYTES = 32;

export const dkimKeyMaker: DkimKeyMaker = {
  generate(algorithm) {
    if (algorithm === 'rsa-sha256') {
      const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      return {
        privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        publicKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
      };
    }
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const der = publicKey.export({ type: 'spki', format: 'der' });
    return {
      privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      publicKey: der.subarray(der.length - ED25519_RAW_BYTES).toString('base64'),
    };
  },
};
