/**
 * The daemon's keys at start: the key material of the data directory (created
 * on the first start, and the operator told where), the secret box it seals
 * stored credentials with, and the API keys' issuer and the admin and metrics
 * token verifiers.
 */
import type { Logger, AdminTokenVerifier, ApiKeyIssuer, SecretBox } from '../core/index.js';
import { createAdminTokenVerifier, createHmacApiKeyIssuer, createMetricsTokenVerifier } from './api-keys.js';
import { loadKeyMaterial } from './key-material.js';
import { createAesGcmSecretBox } from './secret-box.js';

export interface DaemonKeys {
  secrets: SecretBox;
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
    apiKeys,
    admin: createAdminTokenVerifier(keys.adminToken, apiKeys),
    metrics: createMetricsTokenVerifier(settings.metricsToken, apiKeys),
  };
}
