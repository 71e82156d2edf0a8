/**
 * The daemon's keys at start: the key material of the data directory (created
 * on the first start, and the operator told where), the secret box it seals
 * stored credentials with, and the API keys' issuer and the admin and metrics
 * token verifiers. The issuer digests with the key the database keeps once a
 * rotation replaced the master it was derived from, so it comes second, from
 * what the store read (`withTokenDigest`).
 */
import type { Logger, AdminTokenVerifier, ApiKeyIssuer, SecretBox } from '../core/index.js';
import { createAdminTokenVerifier, createHmacApiKeyIssuer, createMetricsTokenVerifier } from './api-keys.js';
import type { BlindIndex } from '../core/index.js';
import type { BodySeal } from '../core/message/index.js';
import { createBlindIndex } from './blind-index.js';
import { createBodySeal, type KeyEncryptionKey } from './body-seal.js';
import { loadKeyMaterial, type MasterSources } from './key-material.js';
import { createAesGcmSecretBox } from './secret-box.js';
import { createUnsubscribeLinks } from './unsubscribe-links.js';
import { fileLinksKey } from './file-links.js';
import type { UnsubscribeLinks } from '../core/tenant/index.js';

export interface DaemonKeys {
  secrets: SecretBox;
  /** Seals and opens message bodies under their data keys. */
  bodies: BodySeal;
  /** The keys `bodies` wraps with (the current one first), for the threads that open them. */
  bodyKeys: KeyEncryptionKey[];
  apiKeys: ApiKeyIssuer;
  admin: AdminTokenVerifier;
  /** The token that opens GET /metrics only; matches nothing when none is configured. */
  metrics: AdminTokenVerifier;
}

/** The keys the store is opened with; the rest follows from the token digest key it keeps, if any. */
export interface DaemonKeyRing extends Pick<DaemonKeys, 'secrets' | 'bodies' | 'bodyKeys'> {
  /** `kept`: the blind index key the database keeps (null: none, the current master's serves). */
  blindIndex(kept: Buffer | null): BlindIndex;
  /** The current master's blind index key (what serves when the database keeps none). */
  blindKey: Buffer;
  /** `kept`: the unsubscribe links' key the database keeps (null: none, the current master's serves). */
  unsubscribeLinks(kept: Buffer | null): UnsubscribeLinks;
  /** The key of offloaded attachments' download links, derived from the unsubscribe links' (`kept` as there). */
  fileLinksKey(kept: Buffer | null): Buffer;
  /** `kept`: the API keys' digest key the database keeps (null: none, the current master's serves). */
  withTokenDigest(kept: Buffer | null): DaemonKeys;
}

export function openDaemonKeys(
  settings: MasterSources & { adminToken: string; metricsToken: string },
  log: Logger,
): DaemonKeyRing {
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
  if (keys.masters.length > 1)
    log.info({ previous: keys.masters.length - 1 }, 'secret keys a rotation replaced are still held');
  const ring = {
    secrets: createAesGcmSecretBox(keys.encryptionKeys),
    bodies: createBodySeal(keys.bodyKeys),
    bodyKeys: keys.bodyKeys,
  };
  return {
    ...ring,
    blindIndex: (kept) => createBlindIndex(kept ?? keys.blindKey),
    blindKey: keys.blindKey,
    unsubscribeLinks: (kept) => createUnsubscribeLinks(kept ?? keys.unsubscribeKey),
    fileLinksKey: (kept) => fileLinksKey(kept ?? keys.unsubscribeKey),
    withTokenDigest(kept) {
      const apiKeys = createHmacApiKeyIssuer(kept ?? keys.hashKey);
      return {
        ...ring,
        apiKeys,
        admin: createAdminTokenVerifier(keys.adminToken, apiKeys),
        metrics: createMetricsTokenVerifier(settings.metricsToken, apiKeys),
      };
    },
  };
}
