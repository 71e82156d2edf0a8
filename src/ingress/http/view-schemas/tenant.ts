/**
 * The tenant as the tenant routes answer it: its contract (core/contracts/tenant.ts),
 * never a secret; and the secrets answered once (a new API key, a new signing secret).
 */
import { z } from 'zod';
import type { TenantView } from '../../../core/contracts/index.js';
import type { IssuedKeyView } from '../views/tenant-view.js';
import { field, isoInstant, nullableText, ok } from './field.js';

const authMethod = <M extends string>(method: M) =>
  field(z.literal(method), 'How mailproxy authenticates to the client application.', method);

const tenantView = z.object({
  id: field(z.string(), 'The tenant id.', 'acme'),
  name: nullableText('A name for people.', 'ACME Ltd'),
  client_base_url: nullableText(
    'Where delivery reports and endpoint attachments are fetched from; null: none.',
    'https://app.example.com',
  ),
  client_sync_path: field(
    z.string(),
    'Path of the delivery-report endpoint under `client_base_url`.',
    '/mail-proxy/sync',
  ),
  client_attachment_path: nullableText(
    'Path of the attachment endpoint under `client_base_url`; null: none.',
    '/mail-proxy/attachment',
  ),
  client_auth: field(
    z
      .union([
        z.object({ method: authMethod('none') }),
        z.object({ method: authMethod('bearer') }),
        z.object({
          method: authMethod('basic'),
          user: field(z.string(), 'The Basic user (the password is never shown).', 'mailproxy'),
        }),
      ])
      .nullable(),
    'How mailproxy authenticates to the client application, without its secrets; null: not set.',
    { method: 'bearer' },
  ),
  client_signing_secret_set: field(
    z.boolean(),
    'Whether delivery reports are signed (the secret itself is shown once, when set or generated).',
    true,
  ),
  active: field(z.boolean(), 'False: nothing of the tenant is sent until it is active again.', true),
  routes: field(
    z.array(
      z.object({
        match: field(
          z.object({
            sender_domains: field(
              z.array(z.string()),
              "The sender's domain is one of these (`*.` also its subdomains).",
              ['news.example.com'],
            ).optional(),
            batch_codes: field(z.array(z.string()), 'The batch code is one of these.', ['newsletter']).optional(),
            priorities: field(z.array(z.number().int()), 'The priority is one of these.', [3]).optional(),
            header: field(
              z.object({
                name: field(z.string(), 'The header name (any case).', 'X-Stream'),
                value: field(z.string(), 'Its value, exactly.', 'bulk'),
              }),
              'A header of the message has this value.',
              { name: 'X-Stream', value: 'bulk' },
            ).optional(),
          }),
          'What a message must have: every condition given holds.',
          { batch_codes: ['newsletter'] },
        ),
        account_id: field(z.string(), 'The account such a message goes through.', 'bulk'),
      }),
    ),
    'Its routing rules, in order: a message that names no account goes through the account of the first it matches, else the default account.',
    [{ match: { batch_codes: ['newsletter'] }, account_id: 'bulk' }],
  ),
  list_unsubscribe: field(
    z
      .object({
        base_url: field(z.string(), 'The public https URL its links are made under.', 'https://mail.example.com'),
        mailto: nullableText(
          'The address of the `mailto:` form beside the link; null: none.',
          'unsubscribe@acme.example',
        ),
        scope: field(
          z.enum(['all', 'batches']),
          '`all`: every single-recipient message; `batches`: only mail with a batch code.',
          'batches',
        ),
      })
      .nullable(),
    'One-click unsubscribe (RFC 8058) in its single-recipient mail; null: no link is added.',
    { base_url: 'https://mail.example.com', mailto: null, scope: 'batches' },
  ),
  attachment_offload: field(
    z
      .object({
        base_url: field(z.string(), 'The public URL its links are made under.', 'https://mail.example.com'),
        over_bytes: field(
          z.number().nullable(),
          'Attachments larger than this go as links; null: only those of messages that ask.',
          5_000_000,
        ),
        link_lifetime_seconds: field(
          z.number().nullable(),
          "How long a link works once sent; null: the daemon's files.retention_seconds.",
          604_800,
        ),
      })
      .nullable(),
    'Large attachments relayed as download links; null: always whole.',
    { base_url: 'https://mail.example.com', over_bytes: 5_000_000, link_lifetime_seconds: 604_800 },
  ),
  api_key_created_at: isoInstant('When the current API key was issued'),
  api_key_expires_at: field(
    z.string().nullable(),
    'When the current API key stops working, ISO 8601 UTC; null: never.',
    '2026-11-24T16:00:00.000Z',
  ),
  created_at: isoInstant('When the tenant was created'),
  updated_at: isoInstant('When the tenant last changed'),
}) satisfies z.ZodType<TenantView>;

export const TENANT_EXAMPLE: TenantView = {
  id: 'acme',
  name: 'ACME Ltd',
  client_base_url: 'https://app.example.com',
  client_sync_path: '/mail-proxy/sync',
  client_attachment_path: '/mail-proxy/attachment',
  client_auth: { method: 'bearer' },
  client_signing_secret_set: true,
  active: true,
  routes: [],
  list_unsubscribe: null,
  attachment_offload: null,
  api_key_created_at: '2025-11-24T16:00:00.000Z',
  api_key_expires_at: null,
  created_at: '2025-11-24T16:00:00.000Z',
  updated_at: '2025-11-24T16:00:00.000Z',
};
const tenant = field(tenantView, 'The tenant, without secret material.', TENANT_EXAMPLE);

const apiKey = field(
  z.string(),
  'The API key: shown this once, only its hash is kept. Send it as `Authorization: Bearer <key>`.',
  'mpk_Wm9vLWJhci1iYXotcXV4LTAxMjM0NTY3ODlhYmNkZWY',
);

export const tenantCreated = z.object({
  ok,
  tenant,
  api_key: apiKey,
  client_signing_secret: field(
    z.string().optional(),
    'The generated report-signing secret, shown this once: present only when the request gave no `client_signing_secret`.',
    'mps_Q2hhbmdlIG1lIHRvIGEgcmFuZG9tIHNlY3JldA',
  ),
});

export const tenantAnswer = z.object({ tenant });
export const tenantUpdated = z.object({ ok, tenant });
export const routeTested = z.object({
  account_id: field(
    z.string().nullable(),
    'The account the message would go through; null: it would be refused.',
    'bulk',
  ),
  chosen_by: field(
    z.enum(['named', 'rule', 'default', 'none']),
    '`named`: the message names it; `rule`: a routing rule chose it; `default`: the default account; `none`: no account (refused).',
    'rule',
  ),
  rule: field(z.number().int().nullable(), 'The index of the rule that chose it (from 0); null otherwise.', 0),
  why: field(z.string(), 'The same in words.', 'rule 0 matches'),
});
export const tenantList = z.object({
  tenants: field(z.array(tenantView), 'Every tenant, secrets never shown.', [TENANT_EXAMPLE]),
});

export const issuedKey = z.object({
  ok,
  tenant_id: field(z.string(), 'The tenant id.', 'acme'),
  api_key: apiKey,
  api_key_expires_at: field(z.string().nullable(), 'When the new key stops working, ISO 8601 UTC; null: never.', null),
}) satisfies z.ZodType<IssuedKeyView & { ok: true }>;

export const signingSecret = z.object({
  ok,
  tenant_id: field(z.string(), 'The tenant id.', 'acme'),
  client_signing_secret: field(
    z.string(),
    'The new report-signing secret, shown this once; the old one stops signing at once.',
    'mps_Q2hhbmdlIG1lIHRvIGEgcmFuZG9tIHNlY3JldA',
  ),
});
