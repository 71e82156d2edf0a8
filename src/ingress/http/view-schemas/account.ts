/**
 * The account as the account routes answer it: its contract (core/contracts/account.ts,
 * no secret) and, on GET /accounts and GET /account/{id}, what it is doing now
 * (views/account-view.ts): usage per limit window, waiting mail, connections, last attempts.
 */
import { z } from 'zod';
import type { AccountWarning } from '../../../core/account/index.js';
import type { AccountActivityView } from '../views/account-view.js';
import { field, isoInstant, nullableSeconds, nullableText, ok, seconds } from './field.js';

const tlsMode = (description: string) => field(z.enum(['implicit', 'starttls', 'none']), description, 'starttls');
const limit = (per: string, example: number | null) =>
  field(
    z.number().int().nullable(),
    `At most this many messages per UTC ${per} through this account; null: no limit.`,
    example,
  );
const count = (description: string, example: number) => field(z.number().int(), description, example);

const window = (per: string) =>
  field(
    z.object({
      used: count(`Messages counted in the current UTC ${per}.`, 3),
      limit: limit(per, 60),
      resets_ts: seconds(`When the current ${per} ends and the count starts again`, 1764000060),
    }),
    `The current UTC ${per}.`,
    { used: 3, limit: 60, resets_ts: 1764000060 },
  );

export const ACCOUNT_EXAMPLE: AccountActivityView = {
  id: 'main',
  tenant_id: 'acme',
  host: 'smtp.example.com',
  port: 587,
  user: 'mailer@example.com',
  has_password: true,
  use_tls: true,
  tls_mode: 'starttls',
  tls_reject_unauthorized: true,
  limit_per_minute: 60,
  limit_per_hour: null,
  limit_per_day: null,
  limit_behavior: 'defer',
  fallback_accounts: [],
  failover_after_seconds: 60,
  warmup: null,
  destination_limits: [],
  max_connections: 5,
  max_messages_per_connection: 100,
  is_default: true,
  is_pec: false,
  imap_host: null,
  imap_port: null,
  imap_tls_mode: null,
  imap_user: null,
  has_imap_password: false,
  imap_folder: null,
  provider: null,
  webhook_path: null,
  state: 'active',
  paused_at: null,
  paused_reason: null,
  created_at: '2025-11-24T16:00:00.000Z',
  updated_at: '2025-11-24T16:00:00.000Z',
};

const activityExample = {
  usage: {
    minute: { used: 3, limit: 60, resets_ts: 1764000060 },
    hour: { used: 41, limit: null, resets_ts: 1764003600 },
    day: { used: 412, limit: null, resets_ts: 1764028800 },
  },
  waiting: 7,
  connections: { open: 2, in_use: 1, max: 5 },
  last_error: { text: '451 4.3.0 try again later', reply_code: 451, at_ts: 1763999990 },
  last_success_ts: 1764000001,
};

const accountView = z.object({
  id: field(z.string(), 'The account id within its tenant.', 'main'),
  tenant_id: field(z.string(), 'The tenant it belongs to.', 'acme'),
  host: field(z.string(), 'The SMTP relay.', 'smtp.example.com'),
  port: field(z.number().int(), "The relay's port.", 587),
  user: nullableText('The SMTP AUTH user; null: no authentication.', 'mailer@example.com'),
  has_password: field(z.boolean(), 'Whether a relay password is stored (it is never shown).', true),
  use_tls: field(z.boolean(), "genro-mail-proxy's reading: true for either kind of TLS (implicit or STARTTLS).", true),
  tls_mode: tlsMode('`implicit` (TLS from the first byte), `starttls` (STARTTLS required) or `none`.'),
  tls_reject_unauthorized: field(z.boolean(), 'Whether a relay certificate that does not verify is refused.', true),
  limit_per_minute: limit('minute', 60),
  limit_per_hour: limit('hour', null),
  limit_per_day: limit('day', null),
  limit_behavior: field(
    z.enum(['defer', 'reject', 'failover']),
    'Over a limit: `defer` holds the message, `reject` ends it in error, `failover` sends it through the first fallback account that may send now (and holds it when none may).',
    'defer',
  ),
  fallback_accounts: field(
    z.array(z.string()),
    "Accounts of the tenant, in order, whose relays send this account's mail while it is paused (its relay refused our AUTH or TLS), unreachable for `failover_after_seconds`, or over its limits with `limit_behavior` `failover`.",
    ['backup'],
  ),
  failover_after_seconds: count(
    'How long its relay may refuse connections before its mail goes through a fallback account.',
    60,
  ),
  warmup: field(
    z
      .object({
        start_date: field(z.string(), 'The first day of the schedule, UTC.', '2026-12-01'),
        daily_caps: field(z.array(z.number().int()), 'The most it sends on each day from the start date.', [50, 100]),
      })
      .nullable(),
    'Its warm-up: from `start_date` (UTC), day by day, the most it sends that day (`daily_caps`), applied like `limit_per_day` (the lower holds); over once the list is; null: none.',
    { start_date: '2026-12-01', daily_caps: [50, 100, 200, 400, 800] },
  ),
  destination_limits: field(
    z.array(
      z.object({
        name: field(z.string(), 'How waiting reasons and fleet counters name it.', 'gmail.com'),
        domains: field(
          z.array(z.string()),
          'The recipient domains it holds (`*.example.com`: it and its subdomains).',
          ['gmail.com', 'googlemail.com'],
        ),
        limit_per_minute: field(z.number().int().nullable(), 'At most this many a UTC minute; null: none.', 100),
        limit_per_hour: field(z.number().int().nullable(), 'At most this many a UTC hour; null: none.', null),
        limit_per_day: field(z.number().int().nullable(), 'At most this many a UTC day; null: none.', null),
        max_connections: field(
          z.number().int().nullable(),
          "Sends to it in flight at once, at most; null: the account's own.",
          2,
        ),
      }),
    ),
    "Limits per recipient domain or group of domains (`*.example.com`: it and its subdomains), first match wins: a message waits as `destination_limited` until each limited destination among its recipients has budget; null limits: none; `max_connections` null: the account's own.",
    [
      {
        name: 'gmail.com',
        domains: ['gmail.com', 'googlemail.com'],
        limit_per_minute: 100,
        limit_per_hour: null,
        limit_per_day: null,
        max_connections: 2,
      },
    ],
  ),
  max_connections: count('Connections open to the relay at once, at most.', 5),
  max_messages_per_connection: count('Messages over one connection before a new one is opened.', 100),
  is_default: field(z.boolean(), "The tenant's default account (used by a message without `account_id`).", true),
  is_pec: field(z.boolean(), 'A PEC (certified mail) account, whose receipts are read from its IMAP mailbox.', false),
  imap_host: nullableText('The IMAP server of its mailbox; null: no mailbox.', null),
  imap_port: field(z.number().int().nullable(), 'The IMAP port; null: no mailbox.', null),
  imap_tls_mode: field(
    z.enum(['implicit', 'starttls', 'none']).nullable(),
    'TLS of the IMAP connection; null: no mailbox.',
    null,
  ),
  imap_user: nullableText("The IMAP login; null: the relay's `user`, or no mailbox.", null),
  has_imap_password: field(z.boolean(), 'Whether an IMAP password of its own is stored (never shown).', false),
  imap_folder: nullableText('The folder receipts are read from; null: no mailbox.', null),
  provider: nullableText(
    "The relay's provider whose webhooks report on its mail (`ses`, `sendgrid`, `mailgun`, `postmark`); null: none.",
    'mailgun',
  ),
  webhook_path: nullableText(
    "Where to point that provider's webhooks (on this daemon's HTTP address); null: no provider.",
    '/webhooks/mailgun/acme',
  ),
  state: field(
    z.enum(['active', 'paused']),
    '`paused` after an AUTH or TLS failure of the relay: its mail waits until the account is saved again.',
    'active',
  ),
  paused_at: field(z.string().nullable(), 'When it was paused, ISO 8601 UTC; null while active.', null),
  paused_reason: nullableText('Why it was paused (the relay answer); null while active.', null),
  created_at: isoInstant('When the account was created'),
  updated_at: isoInstant('When the account last changed'),
  usage: field(
    z.object({ minute: window('minute'), hour: window('hour'), day: window('day') }),
    'GET only: messages counted per limit window (kept in the database, so a restart does not reset them).',
    activityExample.usage,
  ).optional(),
  waiting: count('GET only: messages waiting for this account.', 7).optional(),
  connections: field(
    z.object({
      open: count('Connections open to the relay.', 2),
      in_use: count('Of them, carrying a message now.', 1),
      max: count('`max_connections`.', 5),
    }),
    'GET only: its relay connections now.',
    activityExample.connections,
  ).optional(),
  last_error: field(
    z
      .object({
        text: field(z.string(), 'The error: the relay reply or the connection failure.', '451 4.3.0 try again later'),
        reply_code: field(
          z.number().int().nullable(),
          'The SMTP reply code; null when the connection failed before one.',
          451,
        ),
        at_ts: seconds('When the attempt failed', 1763999990),
      })
      .nullable(),
    'GET only: the last failed attempt (kept after a later success; in memory, empty after a restart), or null.',
    activityExample.last_error,
  ).optional(),
  last_success_ts: nullableSeconds(
    'GET only: the last message it handed off (in memory, empty after a restart)',
    1764000001,
  ).optional(),
  pace: field(
    z
      .object({
        per_minute: field(z.number(), 'Messages a minute it is sent at now.', 45),
        next_ts: seconds('Its next send may go from', 1764000061),
        since_ts: seconds('The pushback that last lowered it', 1764000000),
        pushbacks: count('Pushbacks that lowered or paused it since the start.', 3),
      })
      .nullable(),
    'GET only: its pace while its relay pushed back ("too fast"; adaptive backoff, this node), or null when it goes at its limits.',
    null,
  ).optional(),
  failover: field(
    z
      .object({
        via_account_id: field(z.string(), 'The fallback account whose relay sends its mail now.', 'backup'),
        cause: field(z.enum(['paused', 'unreachable', 'over_limit']), 'Why its own relay does not.', 'unreachable'),
        since_ts: seconds('Since when', 1764000000),
      })
      .nullable(),
    'GET only: the fallback whose relay sends its mail now (failover, this node), or null when its own does.',
    null,
  ).optional(),
}) satisfies z.ZodType<AccountActivityView>;

const account = field(accountView, 'The account, without secrets.', ACCOUNT_EXAMPLE);

const warnings = field(
  z.array(
    z.object({
      code: field(
        z.enum(['NO_DEFAULT_ACCOUNT', 'DEFAULT_ACCOUNT_CHANGED']),
        '`NO_DEFAULT_ACCOUNT`: the tenant is left without a default account (messages naming no account are refused); `DEFAULT_ACCOUNT_CHANGED`: the default moved.',
        'DEFAULT_ACCOUNT_CHANGED',
      ),
      message: field(
        z.string(),
        'The same in words.',
        'messages of tenant acme that name no account now go through second (before: main)',
      ),
    }) satisfies z.ZodType<AccountWarning>,
  ),
  "What the change did to the tenant's default account; empty when nothing.",
  [],
);

export const accountUpserted = z.object({
  ok,
  created: field(z.boolean(), 'True when the account was created (201), false when updated (200).', true),
  account,
  warnings,
});
export const accountDeleted = z.object({ ok, warnings });
export const accountAnswer = z.object({
  account: field(accountView, 'The account with what it is doing now.', { ...ACCOUNT_EXAMPLE, ...activityExample }),
});
export const accountList = z.object({
  accounts: field(z.array(accountView), 'The accounts with their state, usage and waiting mail.', [
    { ...ACCOUNT_EXAMPLE, ...activityExample },
  ]),
});
