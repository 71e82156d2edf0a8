/**
 * The configuration schema: the one source of truth for keys, types and
 * defaults. `config.example.toml` documents every key (a test holds it to this).
 */
import { z } from 'zod';
import { verpTemplateProblem } from '../core/bounce/index.js';
import { parseListenAddress } from './listen-address.js';
import { fleetSection, natsSection } from './nats-schema.js';
import { mcpSection } from './mcp-schema.js';
import { smtpSection } from './smtp-schema.js';
import { storageSection } from './storage-schema.js';

const listen = z.string().refine((text) => parseListenAddress(text) !== null, {
  message: 'expected host:port, e.g. 127.0.0.1:8000 or [::1]:8000',
});

const optionalSecret = (minLength: number, what: string) =>
  z.string().refine((text) => text === '' || text.length >= minLength, {
    message: `${what} must be empty or at least ${minLength} characters`,
  });

const base64Key32 = z
  .string()
  .refine(
    (text) => text === '' || (/^[A-Za-z0-9+/]+={0,2}$/.test(text.trim()) && Buffer.from(text, 'base64').length === 32),
    {
      message: 'expected 32 random bytes, base64-encoded (openssl rand -base64 32), or empty',
    },
  );

const positiveInt = z.number().int().positive();

/** An IMAP folder name, or empty for "flag the message where it is". */
const folderName = z
  .string()
  .max(255)
  .regex(/^[^\r\n\0]*$/, 'one line, no control characters');

/** Where an IMAP bounce mailbox is and where handled messages go; the instance's and each tenant's. */
const mailboxFields = {
  host: z.string().default(''),
  port: z.number().int().min(1).max(65_535).default(993),
  tls: z.enum(['implicit', 'starttls', 'none']).default('implicit'),
  tls_reject_unauthorized: z.boolean().default(true),
  user: z.string().default(''),
  password: z.string().default(''),
  folder: folderName.min(1).default('INBOX'),
  processed_folder: folderName.default(''),
  unmatched_folder: folderName.default(''),
  not_bounce_folder: folderName.default(''),
  verp_return_path: z
    .string()
    .default('')
    .superRefine((text, ctx) => {
      const problem = verpTemplateProblem(text);
      if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
    }),
};

const tenantMailbox = z.object({ tenant_id: z.string().min(1), ...mailboxFields, host: z.string().min(1) }).strict();

export const configSchema = z
  .object({
    data_dir: z.string().min(1).default('./data'),
    shutdown_timeout_seconds: positiveInt.max(3600).default(15),
    max_database_mb: z.number().int().min(0).default(0),
    log: z
      .object({
        level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
      })
      .strict()
      .prefault({}),
    http: z
      .object({
        listen: listen.default('127.0.0.1:8000'),
        admin_token: optionalSecret(16, 'admin_token').default(''),
        metrics_token: optionalSecret(16, 'metrics_token').default(''),
        max_body_bytes: positiveInt.default(64 * 1024 * 1024),
        max_batch_messages: positiveInt.max(100_000).default(1000),
        max_message_bytes: positiveInt.default(25 * 1024 * 1024),
        max_recipients: positiveInt.max(100_000).default(1000),
        auth_max_failures: positiveInt.default(10),
        auth_failure_window_seconds: positiveInt.default(60),
        parse_threads: z.number().int().min(0).max(64).default(1),
      })
      .strict()
      // The scraper's token must not be the admin's: holding it would then open everything.
      .refine((http) => http.metrics_token === '' || http.metrics_token !== http.admin_token, {
        message: 'must differ from admin_token (whoever holds it could then do everything)',
        path: ['metrics_token'],
      })
      .prefault({}),
    security: z
      .object({
        secret_key: base64Key32.default(''),
        // Master keys `mailproxy keys rotate` moved away from, still opening what they sealed meanwhile.
        previous_secret_keys: z
          .array(base64Key32.refine((text) => text !== '', { message: 'expected a key, not an empty string' }))
          .default([]),
      })
      .strict()
      .prefault({}),
    smtp: smtpSection,
    nats: natsSection,
    dispatch: z
      .object({
        lease_seconds: positiveInt.min(10).default(300),
        send_timeout_seconds: positiveInt.default(60),
        retry_schedule_seconds: z.array(positiveInt).min(1).max(50).default([60, 300, 900, 1800, 3600, 7200, 14400]),
        retry_jitter: z.number().min(0).max(1).default(0.2),
        max_age_seconds: positiveInt.default(5 * 24 * 3600),
        claim_batch: positiveInt.max(1000).default(100),
        attachment_timeout_seconds: positiveInt.default(30),
        attachment_max_bytes: positiveInt.default(25 * 1024 * 1024),
        allow_private_attachment_urls: z.boolean().default(false),
        compose_threads: z.number().int().min(0).max(64).default(1),
        relay_threads: z.number().int().min(0).max(64).default(1),
        // A relay that pushes back (421/451 "too fast") slows its account down at once, then up step by step.
        adaptive_backoff: z.boolean().default(true),
      })
      .strict()
      .prefault({}),
    reports: z
      .object({
        sync_interval_seconds: positiveInt.max(86_400).default(300),
        request_timeout_seconds: z.number().positive().max(600).default(30),
        batch_size: positiveInt.max(10_000).default(500),
        batch_delay_ms: z.number().int().min(0).max(10_000).default(200),
        retry_initial_seconds: z.number().positive().max(3600).default(2),
        retry_max_seconds: z.number().positive().max(86_400).default(300),
        retry_jitter: z.number().min(0).max(1).default(0.2),
        max_followup_rounds: z.number().int().min(0).max(1000).default(10),
        max_hold_seconds: z.number().positive().max(86_400).default(60),
      })
      .strict()
      .prefault({}),
    bounce: z
      .object({
        ...mailboxFields,
        poll_interval_seconds: positiveInt.max(86_400).default(60),
        max_message_bytes: positiveInt
          .min(16_384)
          .max(64 * 1024 * 1024)
          .default(2 * 1024 * 1024),
        parse_timeout_seconds: z.number().positive().max(600).default(10),
        batch_size: positiveInt.max(10_000).default(100),
        reconnect_initial_seconds: z.number().positive().max(3600).default(1),
        reconnect_max_seconds: z.number().positive().max(86_400).default(300),
        suppress_hard_bounces: z.boolean().default(true),
        suppress_complaints: z.boolean().default(true),
        suppression_ttl_seconds: z.number().int().min(0).default(0),
        tenant_mailboxes: z.array(tenantMailbox).default([]),
      })
      .strict()
      .prefault({}),
    // Provider webhooks: POST /webhooks/{provider}/{tenant_id}, verified by each provider's own scheme.
    webhooks: z
      .object({
        // SES's SNS signing certificates (and subscription URLs) are fetched only from hosts this pattern matches.
        sns_certificate_host: z
          .string()
          .min(1)
          .refine((pattern) => {
            try {
              new RegExp(pattern);
              return true;
            } catch {
              return false;
            }
          }, 'not a regular expression')
          .default(String.raw`^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$`),
        // A PEM file of extra CAs for those fetches (a private SNS-compatible endpoint); empty: the system's.
        sns_ca_file: z.string().default(''),
        // How far from now a signed timestamp may be (SendGrid, Mailgun); SNS messages allow an hour.
        replay_window_seconds: positiveInt.max(86_400).default(600),
        // The largest body a provider's notification may have. The route is public: this bounds what a
        // stranger can make the daemon hold. The largest documented ones: a SendGrid Event Webhook batch
        // is posted once it reaches 768 KB; an SNS notification to an HTTP(S) endpoint carries a message
        // of at most 256 KiB, JSON-escaped in its envelope (at worst twice that); a Mailgun or Postmark
        // webhook carries one event, a few KiB. 1 MiB leaves a third over SendGrid's batch.
        max_body_bytes: positiveInt.max(64 * 1024 * 1024).default(1024 * 1024),
      })
      .strict()
      .prefault({}),
    pec: z
      .object({
        acceptance_timeout_seconds: positiveInt.max(30 * 86_400).default(1800),
        poll_interval_seconds: positiveInt.max(86_400).default(60),
        max_receipt_bytes: positiveInt
          .min(65_536)
          .max(256 * 1024 * 1024)
          .default(64 * 1024 * 1024),
        parse_timeout_seconds: z.number().positive().max(600).default(30),
        sweep_interval_seconds: positiveInt.max(3600).default(30),
        receipt_retention_days: z.number().int().min(0).max(36_500).default(0),
      })
      .strict()
      .prefault({}),
    retention: z
      .object({
        report_retention_seconds: positiveInt.default(7 * 24 * 3600),
        // A final message's body is shredded (its data key destroyed) this long after it was sent
        // or failed, once its outcome was reported; 0 keeps bodies as long as their messages.
        body_retention_seconds: z
          .number()
          .int()
          .min(0)
          .default(24 * 3600),
        outbox_retention_seconds: positiveInt.default(7 * 24 * 3600),
        interval_seconds: positiveInt.default(300),
      })
      .strict()
      .prefault({}),
    dns: z
      .object({
        // The DNS servers the sending-domain checks ask, `host:port` or `host`; empty: the system's.
        servers: z
          .array(
            z.string().refine((text) => parseListenAddress(text.includes(':') ? text : `${text}:53`) !== null, {
              message: 'must be host:port or host',
            }),
          )
          .default([]),
        // How often every sending domain is checked again (its DNS records may change under it).
        check_interval_seconds: positiveInt.min(60).default(86_400),
      })
      .strict()
      .prefault({}),
    storage: storageSection,
    // Attachments offloaded to download links (a tenant's attachment_offload): how long a link lives
    // at most, and by default; its file goes from the body store when it expires.
    files: z
      .object({
        retention_seconds: positiveInt
          .min(60)
          .max(10 * 365 * 86_400)
          .default(30 * 86_400),
      })
      .strict()
      .prefault({}),
    mcp: mcpSection,
    fleet: fleetSection,
  })
  .strict()
  .superRefine((config, ctx) => {
    if (config.fleet.enabled && config.nats.url === '')
      ctx.addIssue({ code: 'custom', path: ['fleet', 'enabled'], message: 'fleet mode needs nats.url (the cluster)' });
    if (config.storage.backend === 'jetstream' && !config.fleet.enabled)
      ctx.addIssue({
        code: 'custom',
        path: ['storage', 'backend'],
        message:
          'the jetstream body store is the fleet cluster’s object store: it needs [fleet] (alone: embedded or s3)',
      });
  });

export type Config = z.infer<typeof configSchema>;
