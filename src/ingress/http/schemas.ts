/**
 * Request schemas of the admin API (tenants, accounts). Bodies are strict:
 * an unknown field is an error, not silently dropped. Each schema maps the
 * wire's snake_case to the core's input types.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { IDENTIFIER_PATTERN } from '../../core/identifiers.js';

export const identifier = z.string().regex(IDENTIFIER_PATTERN, 'must match ^[A-Za-z0-9_-]{1,64}$');

const HOSTNAME = /^(?=.{1,253}\.?$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;
const host = z
  .string()
  .refine((text) => HOSTNAME.test(text) || isIP(text) !== 0, { message: 'must be a hostname or an IP address' })
  .describe('a hostname or an IP address');

const httpUrl = z
  .string()
  .max(2048)
  .refine(
    (text) => {
      try {
        const url = new URL(text);
        return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '' && url.search === '' && url.hash === '';
      } catch {
        return false;
      }
    },
    { message: 'must be an http(s) URL without credentials, query or fragment' },
  )
  .describe('an http(s) URL without credentials, query or fragment');

const urlPath = z
  .string()
  .max(512)
  .regex(/^\/[^\s?#]*$/, 'must start with / and contain no spaces, ? or #');
const label = z
  .string()
  .max(200)
  .refine((text) => !/[\r\n\0]/.test(text), { message: 'must not contain line breaks or NUL' })
  .describe('no line breaks or NUL');
/** An IMAP mailbox name (RFC 3501 §5.1): one line of printable text. */
const imapFolder = z
  .string()
  .min(1)
  .max(255)
  .refine((text) => !/[\u0000-\u001f\u007f]/.test(text), { message: 'must be one line without control characters' })
  .describe('one line without control characters');
const optionalLimit = z.number().int().positive().max(10_000_000).nullable().optional();

const clientAuth = z.discriminatedUnion('method', [
  z.object({ method: z.literal('none') }).strict(),
  z.object({ method: z.literal('bearer'), token: z.string().min(1).max(4096) }).strict(),
  z
    .object({
      method: z.literal('basic'),
      user: z
        .string()
        .min(1)
        .max(256)
        .refine((text) => !text.includes(':'), { message: 'must not contain ":"' }),
      password: z.string().max(4096),
    })
    .strict(),
]);

const tenantFields = {
  name: label.nullable().optional(),
  client_base_url: httpUrl.nullable().optional(),
  client_sync_path: urlPath.optional(),
  client_attachment_path: urlPath.nullable().optional(),
  client_auth: clientAuth.nullable().optional(),
  client_signing_secret: z.string().min(16).max(512).nullable().optional(),
  active: z.boolean().optional(),
};

const toTenantFields = (body: { [K in keyof typeof tenantFields]?: z.output<(typeof tenantFields)[K]> }) => ({
  name: body.name,
  clientBaseUrl: body.client_base_url,
  clientSyncPath: body.client_sync_path,
  clientAttachmentPath: body.client_attachment_path,
  clientAuth: body.client_auth,
  clientSigningSecret: body.client_signing_secret,
  active: body.active,
});

const expiresIn = z
  .number()
  .int()
  .positive()
  .max(10 * 365 * 24 * 3600)
  .optional();

export const tenantCreateBody = z
  .object({ id: identifier, ...tenantFields, api_key_expires_in_seconds: expiresIn })
  .strict()
  .transform((body) => ({ id: body.id, apiKeyExpiresInSeconds: body.api_key_expires_in_seconds, ...toTenantFields(body) }));

/** `id` may be repeated in the body (a read-modify-write client), but must then match the path. */
export const tenantUpdateBody = z
  .object({ id: identifier.optional(), ...tenantFields })
  .strict()
  .transform((body) => ({ id: body.id, fields: toTenantFields(body) }));

export const rotateKeyBody = z
  .object({ expires_in_seconds: expiresIn })
  .strict()
  .transform((body) => ({ expiresInSeconds: body.expires_in_seconds }));

export const accountBody = z
  .object({
    id: identifier,
    tenant_id: identifier.optional(),
    host,
    port: z.number().int().min(1).max(65535).optional(),
    user: z.string().min(1).max(256).nullable().optional(),
    password: z.string().max(4096).nullable().optional(),
    use_tls: z
      .boolean()
      .nullable()
      .optional()
      .describe(
        "genro-mail-proxy's spelling, read when tls_mode is absent: true = implicit TLS on port 465, STARTTLS required on any other port; false = plain; null or absent = implicit on port 465, else the stored mode (STARTTLS for a new account)",
      ),
    tls_mode: z.enum(['implicit', 'starttls', 'none']).optional(),
    tls_reject_unauthorized: z.boolean().optional(),
    limit_per_minute: optionalLimit,
    limit_per_hour: optionalLimit,
    limit_per_day: optionalLimit,
    limit_behavior: z.enum(['defer', 'reject']).optional(),
    max_connections: z.number().int().min(1).max(100).optional(),
    max_messages_per_connection: z.number().int().min(1).max(100_000).optional(),
    is_default: z
      .boolean()
      .optional()
      .meta({
        description:
          "The tenant's default account, which sends every message that names no account (no account_id; over SMTP no <tenant>/<account> user). " +
          "At most one per tenant: true here clears it on the tenant's others. Absent: as stored; a tenant's first account becomes its default",
        examples: [true],
      }),
    is_pec: z.boolean().optional(),
    imap_host: host.nullable().optional(),
    imap_port: z.number().int().min(1).max(65535).optional(),
    imap_tls_mode: z.enum(['implicit', 'starttls', 'none']).optional(),
    imap_user: z.string().min(1).max(256).nullable().optional(),
    imap_password: z.string().min(1).max(4096).nullable().optional(),
    imap_folder: imapFolder.optional(),
  })
  .strict()
  // tls_mode wins over use_tls (core/account.ts), but not over a contradiction: TLS and no TLS at once.
  .refine((body) => typeof body.use_tls !== 'boolean' || body.tls_mode === undefined || body.use_tls === (body.tls_mode !== 'none'), {
    message: 'use_tls and tls_mode disagree; send one of them',
    path: ['use_tls'],
  })
  .transform((body) => ({
    id: body.id,
    tenantId: body.tenant_id,
    host: body.host,
    port: body.port,
    user: body.user,
    password: body.password,
    tlsMode: body.tls_mode,
    useTls: body.use_tls,
    tlsRejectUnauthorized: body.tls_reject_unauthorized,
    limitPerMinute: body.limit_per_minute,
    limitPerHour: body.limit_per_hour,
    limitPerDay: body.limit_per_day,
    limitBehavior: body.limit_behavior,
    maxConnections: body.max_connections,
    maxMessagesPerConnection: body.max_messages_per_connection,
    isDefault: body.is_default,
    isPec: body.is_pec,
    imap: {
      host: body.imap_host,
      port: body.imap_port,
      tlsMode: body.imap_tls_mode,
      user: body.imap_user,
      password: body.imap_password,
      folder: body.imap_folder,
    },
  }));

const flag = z.enum(['true', 'false', '1', '0']).transform((text) => text === 'true' || text === '1');

export const tenantScopeQuery = z.object({ tenant_id: identifier.optional() }).strict();
export const deleteQuery = z.object({ force: flag.optional() }).strict();
export const accountDeleteQuery = z.object({ tenant_id: identifier.optional(), force: flag.optional() }).strict();

/** POST /account/{id}/test: the tenant scope, and how long the relay may take over the whole test. */
export const accountTestQuery = z
  .object({
    tenant_id: identifier.optional(),
    timeout_seconds: z.coerce
      .number()
      .int()
      .min(1)
      .max(120)
      .optional()
      .meta({ description: 'How long the whole test may take before it fails at the step it is in (default 15).', examples: [10] }),
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
      .meta({ description: 'How many attempts, newest first (default 50, at most the 200 kept per tenant).', examples: [20] }),
  })
  .strict();
