/**
 * The daemon's keys at start: the key material of the data directory (created
 * on the first start, and the operator told where), the secret box it seals
 * stored credentials with, and the API keys' issuer and the admin and metrics
 * token verifiers.
 */
import type { Logger, AdminTokenVerifier, ApiKeyIssuer, SecretBox } from '../core/index.js';
import { createAdminTokenVerifier, createHmacApiKeyIssuer, createMetricsTokenVerifier } from './api-keys.js';
import type { BodySeal } from '../core/message/index.js';
import { createBodySeal, type KeyEncryptionKey } from './body-seal.js';
import { loadKeyMaterial } from './key-material.js';
import { createAesGcmSecretBox } from './secret-box.js';

export interface DaemonKeys {
  secrets: SecretBox;
  /** Seals and opens message bodies under their data keys. */
  bodies: BodySeal;
  /** The keys `bodies` wraps with (the current one first), for the threads that open bodies. */
  bodyKeys: KeyEncryptionKey[];
  apiKeys: ApiKeyIssuer;
  admin: AdminTokenVerifier;
  /** The token that opens GET /metrics only; matches nothing when none is configured. */
  metrics: AdminTokenVerifier;
}

export function openDaemonKeys(
  settings: { dataDir: string; secretKey: string; adminToken: string; metricsToken: string },
  log: Logger,
): DaemonKeys {
  const keys = loadKeyMaterial(settings);
  if (keys.created.secretKeyFile !== undefined) {
    log.warn(
      { path: keys.created.secretKeyFile },
      'secret key created: back it up, stored credentials cannot be read without it',
    );
  }
  if (keys.created.adminTokenFile !== undefined) {
    log.warn(
      { path: keys.created.adminTokenFile },
      'admin token created: read it from this file and send it as Authorization: Bearer <token>',
    );
  }
  const apiKeys = createHmacApiKeyIssuer(keys.hashKey);
  return {
    secrets: createAesGcmSecretBox(keys.encryptionKey),
    bodies: createBodySeal(keys.bodyKeys),
    bodyKeys: keys.bodyKeys,
    apiKeys,
    admin: createAdminTokenVerifier(keys.adminToken, apiKeys),
    metrics: createMetricsTokenVerifier(settings.metricsToken, apiKeys),
  };
}
