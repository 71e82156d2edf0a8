/**
 * Request schemas of the account routes. Bodies are strict: an unknown field
 * is an error, not silently dropped. The body maps the wire's snake_case to the
 * core's account input.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { MAX_FALLBACK_ACCOUNTS, MAX_WARM_UP_DAYS } from '../../core/account/index.js';
import { destinationLimitsBody, toDestinationLimits } from './destination-limits-schema.js';
import { providerBody, toWebhookSettings } from './provider-schema.js';
import { force, identifier, tenantScope } from './schemas.js';

const HOSTNAME =
  /^(?=.{1,253}\.?$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;
const host = z
  .string()
  .refine((text) => HOSTNAME.test(text) || isIP(text) !== 0, { message: 'must be a hostname or an IP address' })
  .describe('a hostname or an IP address');

/** An IMAP mailbox name (RFC 3501 §5.1): one line of printable text. */
const imapFolder = z
  .string()
  .min(1)
  .max(255)
  .refine((text) => !/[\u0000-\u001f\u007f]/.test(text), { message: 'must be one line without control characters' })
  .describe('one line without control characters');
const optionalLimit = z.number().int().positive().max(10_000_000).nullable().optional();

export const accountBody = z
  .object({
    id: identifier.meta({
      description: 'The account id within its tenant, chosen by you; the same id updates it.',
      examples: ['main'],
    }),
    tenant_id: identifier.optional().meta({
      description: 'The tenant it belongs to: required with the admin token, implied by a tenant key.',
      examples: ['acme'],
    }),
    host: host.meta({
      description: 'The SMTP relay this account sends through: a hostname or an IP address.',
      examples: ['smtp.example.com'],
    }),
    port: z
      .number()
      .int()
      .min(1)
      .max(65535)
      .optional()
      .meta({
        description:
          "The relay's port. Default for a new account by TLS mode: 465 implicit, 587 STARTTLS, 25 none; an update keeps the stored one.",
        examples: [587],
      }),
    user: z
      .string()
      .min(1)
      .max(256)
      .nullable()
      .optional()
      .meta({ description: 'The SMTP AUTH user; null: no authentication.', examples: ['mailer@example.com'] }),
    password: z
      .string()
      .max(4096)
      .nullable()
      .optional()
      .meta({
        description:
          'The SMTP AUTH password; omit it to keep the stored one, null to remove it. Never shown back (`has_password`).',
        examples: ['app-password-1'],
      }),
    use_tls: z
      .boolean()
      .nullable()
      .optional()
      .meta({
        description:
          "genro-mail-proxy's spelling, read when tls_mode is absent: true = implicit TLS on port 465, STARTTLS required on any other port; false = plain; null or absent = implicit on port 465, else the stored mode (STARTTLS for a new account)",
        examples: [true],
      }),
    tls_mode: z
      .enum(['implicit', 'starttls', 'none'])
      .optional()
      .meta({
        description:
          '`implicit`: TLS from the first byte (port 465); `starttls`: STARTTLS required; `none`: plain text. Wins over `use_tls`.',
        examples: ['starttls'],
      }),
    tls_reject_unauthorized: z
      .boolean()
      .optional()
      .meta({
        description:
          'Refuse a relay whose TLS certificate does not verify. Default true; false only for a relay you trust with a self-signed certificate.',
        examples: [true],
      }),
    limit_per_minute: optionalLimit.meta({
      description: 'At most this many messages per UTC minute through this account; null: no limit.',
      examples: [60],
    }),
    limit_per_hour: optionalLimit.meta({
      description: 'At most this many messages per UTC hour through this account; null: no limit.',
      examples: [1000],
    }),
    limit_per_day: optionalLimit.meta({
      description: 'At most this many messages per UTC day through this account; null: no limit.',
      examples: [10000],
    }),
    limit_behavior: z
      .enum(['defer', 'reject', 'failover'])
      .optional()
      .meta({
        description:
          'Over a limit: `defer` holds the message until the window reopens, `reject` ends it in error `rate_limit_exceeded`, `failover` sends it through the first of `fallback_accounts` that may send now (and holds it when none may). Default `defer`.',
        examples: ['defer'],
      }),
    fallback_accounts: z
      .array(identifier)
      .max(MAX_FALLBACK_ACCOUNTS)
      .optional()
      .meta({
        description: `Accounts of the same tenant, in order, whose relays send this account's mail while it is paused (its relay refused our AUTH or TLS), unreachable for \`failover_after_seconds\`, or over its limits with \`limit_behavior\` \`failover\`. Each must exist and be of the same kind (PEC or not). At most ${MAX_FALLBACK_ACCOUNTS}; [] clears them. Default none.`,
        examples: [['backup']],
      }),
    warmup: z
      .object({
        start_date: z.iso.date().meta({ description: 'The first day of the schedule, UTC.', examples: ['2026-12-01'] }),
        daily_caps: z
          .array(z.number().int().min(1).max(10_000_000))
          .min(1)
          .max(MAX_WARM_UP_DAYS)
          .meta({
            description: 'The most it sends on each day from the start date, in order.',
            examples: [[50, 100, 200, 400, 800]],
          }),
      })
      .strict()
      .nullable()
      .optional()
      .meta({
        description: `A warm-up schedule: day by day from \`start_date\` (UTC), the most it sends that day, applied like \`limit_per_day\` (the lower of the two holds); once the list is over only its own limits remain. At most ${MAX_WARM_UP_DAYS} days; null clears it. Default none.`,
        examples: [{ start_date: '2026-12-01', daily_caps: [50, 100, 200, 400, 800] }],
      }),
    destination_limits: destinationLimitsBody,
    failover_after_seconds: z
      .number()
      .int()
      .min(5)
      .max(86_400)
      .optional()
      .meta({
        description:
          'How long its relay may refuse connections (or not answer) before its mail goes through a fallback account; the relay is tested again as often, and takes its mail back once it answers. Default 60.',
        examples: [60],
      }),
    max_connections: z
      .number()
      .int()
      .min(1)
      .max(100)
      .optional()
      .meta({ description: 'Connections open to the relay at once, at most. Default 5.', examples: [5] }),
    max_messages_per_connection: z
      .number()
      .int()
      .min(1)
      .max(100_000)
      .optional()
      .meta({
        description: 'Messages sent over one connection before it is closed and a new one opened. Default 100.',
        examples: [100],
      }),
    is_default: z
      .boolean()
      .optional()
      .meta({
        description:
          "The tenant's default account, which sends every message that names no account (no account_id; over SMTP no <tenant>/<account> user). " +
          "At most one per tenant: true here clears it on the tenant's others. Absent: as stored; a tenant's first account becomes its default",
        examples: [true],
      }),
    is_pec: z
      .boolean()
      .optional()
      .meta({
        description:
          "A PEC (Italian certified mail) account: its provider's receipts are read from its IMAP mailbox (`imap_*`), which it then needs. Default false.",
        examples: [false],
      }),
    imap_host: host
      .nullable()
      .optional()
      .meta({
        description:
          "The IMAP server of the account's own mailbox, where PEC receipts arrive; null removes the mailbox.",
        examples: ['imap.pec.example.it'],
      }),
    imap_port: z
      .number()
      .int()
      .min(1)
      .max(65535)
      .optional()
      .meta({ description: 'The IMAP port. Default 993 for implicit TLS, 143 otherwise.', examples: [993] }),
    imap_tls_mode: z
      .enum(['implicit', 'starttls', 'none'])
      .optional()
      .meta({ description: 'TLS of the IMAP connection, as `tls_mode`. Default `implicit`.', examples: ['implicit'] }),
    imap_user: z
      .string()
      .min(1)
      .max(256)
      .nullable()
      .optional()
      .meta({ description: "The IMAP login; null: the relay's `user`.", examples: ['mailer@pec.example.it'] }),
    imap_password: z
      .string()
      .min(1)
      .max(4096)
      .nullable()
      .optional()
      .meta({
        description:
          "The IMAP password; null: the relay's `password`; omit it to keep the stored one. Never shown back.",
        examples: ['imap-password-1'],
      }),
    imap_folder: imapFolder.optional().meta({
      description: 'The mailbox folder receipts are read from: one line without control characters. Default `INBOX`.',
      examples: ['INBOX'],
    }),
    provider: providerBody,
  })
  .strict()
  // tls_mode wins over use_tls (core/account/account.ts), but not over a contradiction: TLS and no TLS at once.
  .refine(
    (body) =>
      typeof body.use_tls !== 'boolean' || body.tls_mode === undefined || body.use_tls === (body.tls_mode !== 'none'),
    {
      message: 'use_tls and tls_mode disagree; send one of them',
      path: ['use_tls'],
    },
  )
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
    fallbackAccounts: body.fallback_accounts,
    failoverAfterSeconds: body.failover_after_seconds,
    warmUp:
      body.warmup === undefined
        ? undefined
        : body.warmup === null
          ? null
          : { startDate: body.warmup.start_date, dailyCaps: body.warmup.daily_caps },
    destinationLimits: toDestinationLimits(body.destination_limits),
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
    provider: toWebhookSettings(body.provider),
  }));

export const accountDeleteQuery = z.object({ tenant_id: tenantScope('required'), force: force() }).strict();
