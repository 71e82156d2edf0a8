/**
 * A tenant as the outside sees it: the `tenant` of the tenant.created and
 * tenant.updated events (and of the HTTP answers, which show the same object).
 * Field names and order are the contract; credentials are redacted.
 */
import type { ClientAuth, Tenant } from '../tenant/tenant.js';

/** What may be shown to anyone allowed to see the tenant: no secret material. */
export interface TenantView {
  id: string;
  name: string | null;
  client_base_url: string | null;
  client_sync_path: string;
  client_attachment_path: string | null;
  client_auth: { method: 'none' } | { method: 'bearer' } | { method: 'basic'; user: string } | null;
  /** Whether reports are signed; the secret itself is shown once, when it is set or generated. */
  client_signing_secret_set: boolean;
  active: boolean;
  api_key_created_at: string;
  api_key_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export function redactClientAuth(auth: ClientAuth | null): TenantView['client_auth'] {
  if (auth === null) return null;
  if (auth.method === 'basic') return { method: 'basic', user: auth.user };
  return { method: auth.method };
}

const iso = (at: number): string => new Date(at).toISOString();

export function viewTenant(tenant: Tenant): TenantView {
  return {
    id: tenant.id,
    name: tenant.name,
    client_base_url: tenant.clientBaseUrl,
    client_sync_path: tenant.clientSyncPath,
    client_attachment_path: tenant.clientAttachmentPath,
    client_auth: redactClientAuth(tenant.clientAuth),
    client_signing_secret_set: tenant.clientSigningSecret !== null,
    active: tenant.active,
    api_key_created_at: iso(tenant.apiKeyCreatedAt),
    api_key_expires_at: tenant.apiKeyExpiresAt === null ? null : iso(tenant.apiKeyExpiresAt),
    created_at: iso(tenant.createdAt),
    updated_at: iso(tenant.updatedAt),
  };
}
