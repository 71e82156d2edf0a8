/**
 * A tenant as the outside sees it: the `tenant` of the tenant.created and
 * tenant.updated events (and of the HTTP answers, which show the same object).
 * Field names and order are the contract; credentials are redacted.
 */
import type { RoutingRule } from '../account/routing.js';
import type { ClientAuth, Tenant } from '../tenant/tenant.js';

export interface RouteRuleView {
  match: {
    sender_domains?: string[] | undefined;
    batch_codes?: string[] | undefined;
    priorities?: number[] | undefined;
    header?: { name: string; value: string } | undefined;
  };
  account_id: string;
}

export const viewRoute = (rule: RoutingRule): RouteRuleView => ({
  match: {
    ...(rule.match.senderDomains === undefined ? {} : { sender_domains: [...rule.match.senderDomains] }),
    ...(rule.match.batchCodes === undefined ? {} : { batch_codes: [...rule.match.batchCodes] }),
    ...(rule.match.priorities === undefined ? {} : { priorities: [...rule.match.priorities] }),
    ...(rule.match.header === undefined ? {} : { header: { ...rule.match.header } }),
  },
  account_id: rule.accountId,
});

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
  /** Its routing rules, in order, as the API spells them. */
  routes: RouteRuleView[];
  /** One-click unsubscribe links in its mail; null: none. */
  list_unsubscribe: { base_url: string; mailto: string | null; scope: 'all' | 'batches' } | null;
  /** Large attachments as download links; null: never. */
  attachment_offload: { base_url: string; over_bytes: number | null; link_lifetime_seconds: number | null } | null;
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
    routes: tenant.routes.map(viewRoute),
    list_unsubscribe:
      tenant.listUnsubscribe === null
        ? null
        : {
            base_url: tenant.listUnsubscribe.baseUrl,
            mailto: tenant.listUnsubscribe.mailto,
            scope: tenant.listUnsubscribe.scope,
          },
    attachment_offload:
      tenant.attachmentOffload === null
        ? null
        : {
            base_url: tenant.attachmentOffload.baseUrl,
            over_bytes: tenant.attachmentOffload.overBytes,
            link_lifetime_seconds: tenant.attachmentOffload.linkLifetimeSeconds,
          },
    api_key_created_at: iso(tenant.apiKeyCreatedAt),
    api_key_expires_at: tenant.apiKeyExpiresAt === null ? null : iso(tenant.apiKeyExpiresAt),
    created_at: iso(tenant.createdAt),
    updated_at: iso(tenant.updatedAt),
  };
}
