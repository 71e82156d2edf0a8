/** Tenant rows: the columns, and the mapping to and from Tenant that seals and opens the client's credentials. */
import type { SecretBox } from '../core/index.js';
import type { RoutingRule } from '../core/account/index.js';
import type { AttachmentOffload } from '../core/message/index.js';
import type { ClientAuth, ListUnsubscribe, SendingDomain, Tenant } from '../core/tenant/index.js';

export interface TenantRow {
  id: string;
  name: string | null;
  client_base_url: string | null;
  client_sync_path: string;
  client_attachment_path: string | null;
  client_auth_sealed: string | null;
  client_signing_secret_sealed: string | null;
  active: number;
  /** JSON RoutingRule[]; null: none. */
  routes: string | null;
  /** JSON SendingDomain[] (their DKIM private keys inside), sealed; null: none. */
  sending_domains_sealed: string | null;
  /** JSON ListUnsubscribe; null: none. */
  list_unsubscribe: string | null;
  /** JSON AttachmentOffload; null: none. */
  attachment_offload: string | null;
  api_key_created_at: number;
  api_key_expires_at: number | null;
  created_at: number;
  updated_at: number;
}

export const TENANT_COLUMNS = `id, name, client_base_url, client_sync_path, client_attachment_path, client_auth_sealed,
  client_signing_secret_sealed, active, routes, sending_domains_sealed, list_unsubscribe, attachment_offload, api_key_created_at, api_key_expires_at, created_at, updated_at`;

const authContext = (id: string): string => `tenant:${id}:client_auth`;
const signingContext = (id: string): string => `tenant:${id}:client_signing_secret`;
const domainsContext = (id: string): string => `tenant:${id}:sending_domains`;

/** Each sealed column and the context its values are sealed under (a key rotation reseals them). */
export const TENANT_SEALED_COLUMNS = [
  { column: 'client_auth_sealed', context: (row: { id: string }) => authContext(row.id) },
  { column: 'client_signing_secret_sealed', context: (row: { id: string }) => signingContext(row.id) },
  { column: 'sending_domains_sealed', context: (row: { id: string }) => domainsContext(row.id) },
] as const;

/** Client credentials are sealed under the tenant's id: a sealed value copied to another tenant does not open. */
export function createTenantRowMapper(secrets: SecretBox) {
  const toTenant = (row: TenantRow): Tenant => ({
    id: row.id,
    name: row.name,
    clientBaseUrl: row.client_base_url,
    clientSyncPath: row.client_sync_path,
    clientAttachmentPath: row.client_attachment_path,
    clientAuth:
      row.client_auth_sealed === null
        ? null
        : (JSON.parse(secrets.open(row.client_auth_sealed, authContext(row.id))) as ClientAuth),
    clientSigningSecret:
      row.client_signing_secret_sealed === null
        ? null
        : secrets.open(row.client_signing_secret_sealed, signingContext(row.id)),
    active: row.active === 1,
    routes: row.routes === null ? [] : (JSON.parse(row.routes) as RoutingRule[]),
    sendingDomains:
      row.sending_domains_sealed === null
        ? []
        : (JSON.parse(secrets.open(row.sending_domains_sealed, domainsContext(row.id))) as SendingDomain[]),
    listUnsubscribe: row.list_unsubscribe === null ? null : (JSON.parse(row.list_unsubscribe) as ListUnsubscribe),
    attachmentOffload:
      row.attachment_offload === null ? null : (JSON.parse(row.attachment_offload) as AttachmentOffload),
    apiKeyCreatedAt: row.api_key_created_at,
    apiKeyExpiresAt: row.api_key_expires_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  });

  const toParams = (tenant: Tenant) => ({
    id: tenant.id,
    name: tenant.name,
    client_base_url: tenant.clientBaseUrl,
    client_sync_path: tenant.clientSyncPath,
    client_attachment_path: tenant.clientAttachmentPath,
    client_auth_sealed:
      tenant.clientAuth === null ? null : secrets.seal(JSON.stringify(tenant.clientAuth), authContext(tenant.id)),
    client_signing_secret_sealed:
      tenant.clientSigningSecret === null ? null : secrets.seal(tenant.clientSigningSecret, signingContext(tenant.id)),
    active: tenant.active ? 1 : 0,
    routes: tenant.routes.length === 0 ? null : JSON.stringify(tenant.routes),
    sending_domains_sealed:
      tenant.sendingDomains.length === 0
        ? null
        : secrets.seal(JSON.stringify(tenant.sendingDomains), domainsContext(tenant.id)),
    list_unsubscribe: tenant.listUnsubscribe === null ? null : JSON.stringify(tenant.listUnsubscribe),
    attachment_offload: tenant.attachmentOffload === null ? null : JSON.stringify(tenant.attachmentOffload),
    updated_at: tenant.updatedAt,
  });

  return { toTenant, toParams };
}
