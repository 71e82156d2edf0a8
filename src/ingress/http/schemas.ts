/**
 * Request schemas of the admin API (tenants; accounts are in account-schemas.ts). Bodies are strict:
 * an unknown field is an error, not silently dropped. Each schema maps the
 * wire's snake_case to the core's input types.
 */
import { z } from 'zod';
import { MAX_ROUTING_RULES } from '../../core/account/index.js';
import { identifier } from './identifier.js';
import { routeRule, toRoutingRule } from './routing-schema.js';
import { attachmentOffload, httpUrl, listUnsubscribe } from './tenant-link-schemas.js';

export { identifier };

const urlPath = z
  .string()
  .max(512)
  .regex(/^\/[^\s?#]*$/, 'must start with / and contain no spaces, ? or #');
const label = z
  .string()
  .max(200)
  .refine((text) => !/[\r\n\0]/.test(text), { message: 'must not contain line breaks or NUL' })
  .describe('no line breaks or NUL');
const authMethod = <M extends string>(method: M) =>
  z.literal(method).meta({ description: 'How mailproxy authenticates to the client application.', examples: [method] });
const clientAuth = z.discriminatedUnion('method', [
  z.object({ method: authMethod('none') }).strict(),
  z
    .object({
      method: authMethod('bearer'),
      token: z
        .string()
        .min(1)
        .max(4096)
        .meta({ description: 'Sent as `Authorization: Bearer <token>`.', examples: ['client-app-token-4f9c2a'] }),
    })
    .strict(),
  z
    .object({
      method: authMethod('basic'),
      user: z
        .string()
        .min(1)
        .max(256)
        .refine((text) => !text.includes(':'), { message: 'must not contain ":"' })
        .meta({ description: 'The user of `Authorization: Basic`; no `:`.', examples: ['mailproxy'] }),
      password: z
        .string()
        .max(4096)
        .meta({ description: 'The password of `Authorization: Basic`.', examples: ['s3cret-pass'] }),
    })
    .strict(),
]);

const tenantFields = {
  name: label
    .nullable()
    .optional()
    .meta({ description: 'A name for people (the console, logs); null clears it.', examples: ['ACME Ltd'] }),
  client_base_url: httpUrl
    .nullable()
    .optional()
    .meta({
      description:
        "The client application's base URL: delivery reports are posted to it + `client_sync_path`, endpoint attachments fetched from it + `client_attachment_path`. Null: nobody to report to (outcomes are marked reported as they happen).",
      examples: ['https://app.example.com'],
    }),
  client_sync_path: urlPath.optional().meta({
    description:
      'Path of the delivery-report endpoint under `client_base_url` (see the `deliveryReport` webhook). Default `/mail-proxy/sync`.',
    examples: ['/mail-proxy/sync'],
  }),
  client_attachment_path: urlPath
    .nullable()
    .optional()
    .meta({
      description:
        'Path under `client_base_url` that serves attachments of `fetch_mode` `endpoint`: it gets `POST {"storage_path": "..."}` and answers the bytes, or JSON `{"content": "<base64>"}`. Null: endpoint attachments cannot be fetched.',
      examples: ['/mail-proxy/attachment'],
    }),
  client_auth: clientAuth
    .nullable()
    .optional()
    .meta({
      description:
        'How mailproxy authenticates to the client application (delivery reports and endpoint attachments): `none`, `bearer` with a token, or `basic` with user and password. Shown back without its secrets.',
      examples: [{ method: 'bearer', token: 'client-app-token-4f9c2a' }],
    }),
  client_signing_secret: z
    .string()
    .min(16)
    .max(512)
    .nullable()
    .optional()
    .meta({
      description:
        'The HMAC-SHA256 key of the `X-Mailproxy-Signature` header of delivery reports. Omitted on creation: one is generated and answered once. Null: reports are not signed.',
      examples: ['a-long-random-secret-0123456789'],
    }),
  active: z
    .boolean()
    .optional()
    .meta({
      description: 'False holds every message of the tenant (nothing is sent) until it is true again. Default true.',
      examples: [true],
    }),
  routes: z
    .array(routeRule)
    .max(MAX_ROUTING_RULES)
    .optional()
    .meta({
      description: `Routing rules, whole and in order: a message that names no \`account_id\` goes through the account of the first rule it matches (by sender domain, batch code, priority, header), else the default account. Each rule's account must exist (a rule whose account is deleted later is passed over). At most ${MAX_ROUTING_RULES}; [] clears them. POST /tenant/{id}/routes/test shows where a message would go.`,
      examples: [[{ match: { batch_codes: ['newsletter'] }, account_id: 'bulk' }]],
    }),
  list_unsubscribe: listUnsubscribe
    .nullable()
    .optional()
    .meta({
      description:
        'One-click unsubscribe (RFC 8058, what Gmail, Yahoo and Outlook.com require of bulk senders): each message to a single recipient gets `List-Unsubscribe: <{base_url}/unsubscribe/{token}>` (and the `mailto:` form when given) and `List-Unsubscribe-Post: List-Unsubscribe=One-Click`, unless it carries a `List-Unsubscribe` of its own. The token is sealed: it names the recipient, the message and its batch, and reveals nothing. A POST to the link suppresses the recipient for the tenant and reports an `unsubscribed` item; a GET only shows a confirmation page. Null: no link.',
      examples: [{ base_url: 'https://mail.example.com', scope: 'batches' }],
    }),
  attachment_offload: attachmentOffload
    .nullable()
    .optional()
    .meta({
      description:
        "Attachment offload: in its messages sent over HTTP, each attachment larger than `over_bytes` is taken out and replaced by one short text and HTML part naming each file, its size and a link `{base_url}/files/{token}` that serves it (range requests too) until the link expires or the message is erased, each download reported as a `downloaded` item. A message may set its own size and lifetime, or ask to be relayed whole (`relay_whole`); a PEC account's mail is always relayed whole. Needs a body store (`[storage]` backend `embedded` or `s3`): without one, attachments are relayed whole. Null: never.",
      examples: [{ base_url: 'https://mail.example.com', over_bytes: 5_000_000, link_lifetime_seconds: 604_800 }],
    }),
};

const toTenantFields = (body: { [K in keyof typeof tenantFields]?: z.output<(typeof tenantFields)[K]> }) => ({
  name: body.name,
  clientBaseUrl: body.client_base_url,
  clientSyncPath: body.client_sync_path,
  clientAttachmentPath: body.client_attachment_path,
  clientAuth: body.client_auth,
  clientSigningSecret: body.client_signing_secret,
  active: body.active,
  routes: body.routes?.map(toRoutingRule),
  listUnsubscribe:
    body.list_unsubscribe === undefined || body.list_unsubscribe === null
      ? body.list_unsubscribe
      : {
          baseUrl: body.list_unsubscribe.base_url,
          mailto: body.list_unsubscribe.mailto ?? null,
          scope: body.list_unsubscribe.scope ?? 'all',
        },
  attachmentOffload:
    body.attachment_offload === undefined || body.attachment_offload === null
      ? body.attachment_offload
      : {
          baseUrl: body.attachment_offload.base_url,
          overBytes: body.attachment_offload.over_bytes ?? null,
          linkLifetimeSeconds: body.attachment_offload.link_lifetime_seconds ?? null,
        },
});

const expiresIn = z
  .number()
  .int()
  .positive()
  .max(10 * 365 * 24 * 3600)
  .optional()
  .meta({
    description: 'Seconds from now until the API key stops working (at most ten years). Absent: it never expires.',
    examples: [31536000],
  });

export const tenantCreateBody = z
  .object({
    id: identifier.meta({ description: 'The tenant id, chosen by you; fixed for good.', examples: ['acme'] }),
    ...tenantFields,
    api_key_expires_in_seconds: expiresIn,
  })
  .strict()
  .transform((body) => ({
    id: body.id,
    apiKeyExpiresInSeconds: body.api_key_expires_in_seconds,
    ...toTenantFields(body),
  }));

/** `id` may be repeated in the body (a read-modify-write client), but must then match the path. */
export const tenantUpdateBody = z
  .object({
    id: identifier
      .optional()
      .meta({ description: 'The tenant id; optional, but when given it must match the path.', examples: ['acme'] }),
    ...tenantFields,
  })
  .strict()
  .transform((body) => ({ id: body.id, fields: toTenantFields(body) }));

export const rotateKeyBody = z
  .object({
    expires_in_seconds: expiresIn.meta({
      description: 'Seconds from now until the new key stops working (at most ten years). Absent: it never expires.',
      examples: [31536000],
    }),
  })
  .strict()
  .transform((body) => ({ expiresInSeconds: body.expires_in_seconds }));

const flag = (description: string) =>
  z
    .enum(['true', 'false', '1', '0'])
    .meta({ description, examples: ['true'] })
    .transform((text) => text === 'true' || text === '1');
export const force = () =>
  flag(
    '`true` or `1`: delete even while it has undelivered mail, that mail with it. Default false: refused with 409 CONFLICT.',
  ).optional();
/**
 * The `tenant_id` of a request: a tenant key implies it (and may name only its own); the admin token
 * must name it, except on a list, where naming none means every tenant.
 */
export const tenantScope = (withoutOne: 'required' | 'every tenant') =>
  identifier.optional().meta({
    description:
      withoutOne === 'required'
        ? 'The tenant: implied by a tenant key (naming another tenant answers 404); required with the admin token.'
        : 'The tenant: implied by a tenant key (naming another tenant answers 404); with the admin token, absent means every tenant.',
    examples: ['acme'],
  });

/** A list's scope: one tenant, or every tenant for the admin token. */
export const tenantScopeQuery = z.object({ tenant_id: tenantScope('every tenant') }).strict();
/** One tenant's resource. */
export const tenantQuery = z.object({ tenant_id: tenantScope('required') }).strict();
export const deleteQuery = z.object({ force: force() }).strict();

/** POST /account/{id}/test: the tenant scope, and how long the relay may take over the whole test. */
export const accountTestQuery = z
  .object({
    tenant_id: tenantScope('required'),
    timeout_seconds: z.coerce
      .number()
      .int()
      .min(1)
      .max(120)
      .optional()
      .meta({
        description: 'How long the whole test may take before it fails at the step it is in (default 15).',
        examples: [10],
      }),
  })
  .strict();

/** GET /tenant/{id}/report-log: how many attempts, newest first. */
export const reportLogQuery = z
  .object({
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(200)
      .optional()
      .meta({
        description: 'How many attempts, newest first (default 50, at most the 200 kept per tenant).',
        examples: [20],
      }),
  })
  .strict();
