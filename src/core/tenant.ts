/** The tenant aggregate: one client application, its callback settings and its API key. */

/** How we authenticate to the tenant's own endpoints (delivery reports, attachments). */
export type ClientAuth =
  | { method: 'none' }
  | { method: 'bearer'; token: string }
  | { method: 'basic'; user: string; password: string };

export const DEFAULT_CLIENT_SYNC_PATH = '/mail-proxy/sync';

export interface Tenant {
  id: string;
  name: string | null;
  clientBaseUrl: string | null;
  clientSyncPath: string;
  clientAttachmentPath: string | null;
  /** Decrypted only inside the process; never leaves it through an API. */
  clientAuth: ClientAuth | null;
  /** HMAC key that signs the tenant's delivery reports; decrypted only inside the process. */
  clientSigningSecret: string | null;
  /** False holds the tenant's mail; its key keeps working. */
  active: boolean;
  apiKeyCreatedAt: number;
  apiKeyExpiresAt: number | null;
  createdAt: number;
  updatedAt: number;
}

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
