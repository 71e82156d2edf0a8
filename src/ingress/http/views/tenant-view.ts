/**
 * The secrets a tenant route answers once, in the API's snake_case: a new API key
 * (creation, rotation) and a new report-signing secret. The tenant itself is
 * answered as its contract (core/contracts/tenant.ts), the object its events carry.
 */
import type { IssuedKey } from '../../../core/tenant/index.js';

export interface IssuedKeyView {
  tenant_id: string;
  api_key: string;
  api_key_expires_at: string | null;
}

export function viewIssuedKey(key: IssuedKey): IssuedKeyView {
  return {
    tenant_id: key.tenantId,
    api_key: key.apiKey,
    api_key_expires_at: key.expiresAt === null ? null : new Date(key.expiresAt).toISOString(),
  };
}

export function viewSigningSecret(rotated: { tenantId: string; secret: string }): {
  tenant_id: string;
  client_signing_secret: string;
} {
  return { tenant_id: rotated.tenantId, client_signing_secret: rotated.secret };
}
