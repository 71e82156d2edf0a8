/**
 * What the operations routes answer: GET /status (views/queue-overview.ts and, for the
 * admin, daemon-health.ts), /health and /ready, and the delivery report status
 * (views/sync-status-view.ts).
 */
import { z } from 'zod';
import type { QueueOverview } from '../views/queue-overview.js';
import type { SyncStatusView } from '../views/sync-status-view.js';
import { field, nullableSeconds, nullableText } from './field.js';

const count = (description: string, example: number) => field(z.number().int(), description, example);
const waitingStatuses = <T extends z.ZodType>(value: (status: string, example: number) => T) =>
  z.object({
    queued: value('queued', 5),
    deferred: value('deferred', 6),
    sending: value('sending', 1),
    suspended: value('suspended', 0),
  });

const QUEUE_EXAMPLE: QueueOverview = {
  waiting: 12,
  by_status: { queued: 5, deferred: 6, sending: 1, suspended: 0 },
  by_priority: { 0: 0, 1: 2, 2: 10, 3: 0 },
  by_tenant: [{ tenant_id: 'acme', waiting: 12 }],
  by_account: [
    { tenant_id: 'acme', account_id: 'main', waiting: 12, by_status: { queued: 5, deferred: 6, sending: 1 } },
  ],
  oldest_due: { tenant_id: 'acme', id: 'inv-2025-001', account_id: 'main', due_ts: 1764000000, overdue_seconds: 42 },
};

const queue = z.object({
  waiting: count('Messages waiting (queued, deferred, sending or suspended).', 12),
  by_status: field(
    waitingStatuses((status, example) => count(`Waiting messages ${status}.`, example)),
    'Waiting messages by status.',
    QUEUE_EXAMPLE.by_status,
  ),
  by_priority: field(
    z.object({
      0: count('Priority 0, immediate.', 0),
      1: count('Priority 1, high.', 2),
      2: count('Priority 2, normal.', 10),
      3: count('Priority 3, low.', 0),
    }),
    'Waiting messages by priority (0 immediate ... 3 low).',
    QUEUE_EXAMPLE.by_priority,
  ),
  by_tenant: field(
    z.array(
      z.object({ tenant_id: field(z.string(), 'The tenant.', 'acme'), waiting: count('Its waiting messages.', 12) }),
    ),
    'Waiting messages per tenant, busiest first.',
    QUEUE_EXAMPLE.by_tenant,
  ),
  by_account: field(
    z.array(
      z.object({
        tenant_id: field(z.string(), 'The tenant.', 'acme'),
        account_id: field(z.string(), 'The account.', 'main'),
        waiting: count('Its waiting messages.', 12),
        by_status: field(
          waitingStatuses((status, example) => count(`Its messages ${status}.`, example).optional()),
          'Its waiting messages by status (a status with none is left out).',
          {
            queued: 5,
            deferred: 6,
          },
        ),
      }),
    ),
    'Waiting messages per account, busiest first.',
    QUEUE_EXAMPLE.by_account,
  ),
  oldest_due: field(
    z
      .object({
        tenant_id: field(z.string(), 'Its tenant.', 'acme'),
        id: field(z.string(), 'Its client id.', 'inv-2025-001'),
        account_id: field(z.string(), 'Its account.', 'main'),
        due_ts: field(z.number().int(), 'Due since, epoch seconds.', 1764000000),
        overdue_seconds: count('How long it has been due, seconds.', 42),
      })
      .nullable(),
    'The dispatchable message due longest ago; null when none is due.',
    QUEUE_EXAMPLE.oldest_due,
  ),
}) satisfies z.ZodType<QueueOverview>;

const health = (description: string, example: Record<string, unknown>) =>
  field(z.record(z.string(), z.unknown()), `Admin token only: ${description}`, example).optional();

export const statusAnswer = z.object({
  queue: field(queue, 'The queue at a glance (a tenant key: its own tenant only).', QUEUE_EXAMPLE),
  dispatcher: health('whether the dispatcher runs.', { running: true }),
  store: health(
    'the database: `state` `ok` or `refusing`, `last_error` (`reason`, `at_ts`), `used_bytes` and `max_bytes` (the `max_database_mb` cap or null), `bodies`: `unsealed`, the bodies an earlier version stored in clear that are still to be sealed in the background, and `fields_unsealed`, the messages whose envelope and subject are (0 when none), and `erasure`: what erasures still leave to the background, `scrub_owed` (the full-text index merge or the WAL truncation), `search_terms_to_scrub` (erased messages whose terms are still in the index, found by no search) and `shredded_bodies_to_remove` (sealed bodies whose keys are destroyed, unreadable, whose bytes retention removes next); 0 and false once no copy is left.',
    {
      state: 'ok',
      last_error: null,
      used_bytes: 1048576,
      max_bytes: null,
      bodies: { unsealed: 0, fields_unsealed: 0 },
      erasure: { scrub_owed: false, search_terms_to_scrub: 0, shredded_bodies_to_remove: 0 },
    },
  ),
  body_store: field(
    z.record(z.string(), z.unknown()).nullable(),
    'Admin token only: the body store of large bodies (`[storage]`): `backend` (`embedded` or `s3`), `state` (`ok`, or `failing` from a failed write, read, removal or probe until one succeeds: submissions whose bodies go there are refused meanwhile), `last_error` (`reason`, `at_ts`) and `objects_to_remove` (objects no message needs any more, their keys destroyed, that the store has yet to remove); null in fleet mode and with the backend `database`, which keep bodies in the database.',
    { backend: 'embedded', state: 'ok', last_error: null, objects_to_remove: 0 },
  ).optional(),
  relays: health("connections `open` to the accounts' relays and `in_use`, in total and per account.", {
    open: 2,
    in_use: 1,
    accounts: [],
  }),
  pacing: field(
    z.array(z.unknown()),
    'Admin token only: the accounts sent slower than their limits because their relay pushed back (adaptive backoff; `dispatch.adaptive_backoff`), each with `tenant_id`, `account_id`, `per_minute` (its pace now), `next_ts` (its next send), `since_ts` (the pushback that last lowered it) and `pushbacks` (since the start); empty when none is.',
    [
      {
        tenant_id: 'acme',
        account_id: 'main',
        per_minute: 45,
        next_ts: 1764000061,
        since_ts: 1764000000,
        pushbacks: 3,
      },
    ],
  ).optional(),
  warmup: field(
    z.array(z.unknown()),
    'Admin token only: the accounts warming up now (`warmup` of an account), each with `tenant_id`, `account_id`, `day` (0: its start date) of `days`, `cap_today` and `sent_today`; empty when none.',
    [{ tenant_id: 'acme', account_id: 'main', day: 2, days: 5, cap_today: 200, sent_today: 120 }],
  ).optional(),
  domains: field(
    z.array(z.unknown()),
    "Admin token only: the sending domains whose last DNS check (the daemon's own, every `dns.check_interval_seconds` and after an account is saved) found something failing, each with `tenant_id`, `domain`, `checked_ts` and `failing` (`spf`, `dkim`, `dmarc`, `mx`, `dns`); GET /domains/{domain}/check says what and how to fix it. Empty when none.",
    [{ tenant_id: 'acme', domain: 'example.com', checked_ts: 1764000000, failing: ['dmarc'] }],
  ).optional(),
  failover: field(
    z.array(z.unknown()),
    "Admin token only: the accounts whose mail goes through a fallback account's relay now, each with `tenant_id`, `account_id`, `via_account_id`, `cause` (`paused`: its relay refused our AUTH or TLS; `unreachable`: it has not answered for its `failover_after_seconds` (it is tested as often, and takes its mail back once it answers); `over_limit`: over its limits with `limit_behavior` `failover`) and `since_ts`; empty when none.",
    [{ tenant_id: 'acme', account_id: 'main', via_account_id: 'backup', cause: 'unreachable', since_ts: 1764000000 }],
  ).optional(),
  threads: health('the worker threads: `parser` true when its threads run, null without threads.', { parser: true }),
  reports: health('delivery reports: `tenants`, `failing` (tenant ids), `backlog`.', {
    tenants: 3,
    failing: [],
    backlog: 0,
  }),
  bounce: field(
    z.array(z.unknown()),
    "Admin token only: each bounce mailbox poller's state (as GET /bounce/status).",
    [],
  ).optional(),
  fleet: health(
    "a fleet node only: this node's view of the fleet: `node_id`, `connected`, `nodes` (each with its `queue`: `waiting` and `by_status`, null when it did not answer), `alive`, `missing`, `queue_total` (the sum over the nodes that answered) and `missing_nodes` (known nodes not in that sum); `limits` (the fleet-wide limits' leases, `cut_off`); `spool` (the replicated spool: `pending_entries` not yet taken by the cluster, `held_entries` the cluster holds for waiting messages, `checked` the last check of every waiting message against the records the cluster lists (`at`, `waiting_messages`, `entries`: fewer entries than messages is a defect, mended at once), `repaired` messages found without an entry and written again since the start, `unrecorded_ends` finished messages whose end the cluster does not know yet (a survivor would send them again were this node lost now; normally 0 within a fraction of a second), `pending_erasures` erased messages whose records the cluster still holds (overwritten once it answers; normally 0 within a second), `answered_unreplicated` answers given on the local commit alone since the start, `adopted` messages adopted from lost nodes since the start); absent on a single node.",
    {
      node_id: 'node-a',
      connected: true,
      nodes: [],
      alive: 2,
      missing: [],
    },
  ),
  mirror: health('the event mirror (as GET /mirror/status).', { enabled: true, state: 'connected', backlog: 0 }),
});

export const healthAnswer = z.object({ status: field(z.literal('ok'), 'The process answers.', 'ok') });

const checks = field(
  z.record(z.string(), z.string()),
  'Each readiness check by name: `ok`, or what is wrong. `body_store` is not ready while the body store of large bodies fails (see GET /status).',
  { store: 'ok', dispatcher: 'ok', parser: 'ok', body_store: 'ok' },
);
const details = field(
  z.record(z.string(), z.unknown()),
  "Beside readiness, not deciding it: `mirror` (the event mirror's state), `bounce` (each mailbox's `state` and `connected`).",
  {
    mirror: { state: 'connected' },
    bounce: [],
  },
);
export const readyAnswer = z.object({ ready: field(z.literal(true), 'Every check is ok.', true), checks, details });
export const notReadyAnswer = field(
  z.object({ ready: field(z.literal(false), 'Some check is not ok: `checks` names it.', false), checks, details }),
  'Not ready: the daemon answers, but cannot take mail now.',
  {
    ready: false,
    checks: { store: 'ok', dispatcher: 'not ready', parser: 'ok' },
    details: { mirror: { state: 'connected' }, bounce: [] },
  },
);

const SYNC_EXAMPLE: SyncStatusView = {
  tenant_id: 'acme',
  client_sync_url: 'https://app.example.com/mail-proxy/sync',
  in_flight: false,
  last_attempt_ts: 1764000062,
  last_success_ts: 1764000062,
  last_error: null,
  last_error_ts: null,
  consecutive_failures: 0,
  next_due_ts: 1764000362,
  do_not_disturb_until_ts: null,
  backlog: 0,
  oldest_unreported_ts: null,
  oldest_unreported_age_seconds: null,
};

const syncStatus = z.object({
  tenant_id: field(z.string(), 'The tenant.', 'acme'),
  client_sync_url: nullableText(
    'Where reports go; null when the tenant has no endpoint (outcomes are then marked reported as they happen).',
    SYNC_EXAMPLE.client_sync_url,
  ),
  in_flight: field(z.boolean(), 'A round is being posted now.', false),
  last_attempt_ts: nullableSeconds('The last round posted', SYNC_EXAMPLE.last_attempt_ts),
  last_success_ts: nullableSeconds('The last round acknowledged', SYNC_EXAMPLE.last_success_ts),
  last_error: nullableText('Why the last failed round failed.', null),
  last_error_ts: nullableSeconds('When it failed', null),
  consecutive_failures: count('Rounds failed in a row (0 once one is acknowledged).', 0),
  next_due_ts: nullableSeconds(
    'When the next round is due (a retry, a held report or a heartbeat)',
    SYNC_EXAMPLE.next_due_ts,
  ),
  do_not_disturb_until_ts: nullableSeconds("The client's `next_sync_after`, while it holds", null),
  backlog: count('Events not yet acknowledged.', 0),
  oldest_unreported_ts: nullableSeconds('The oldest event not yet acknowledged', null),
  oldest_unreported_age_seconds: field(z.number().int().nullable(), 'Its age, seconds; null when none.', null),
}) satisfies z.ZodType<SyncStatusView>;

export const syncStatusAnswer = z.object({
  sync_status: field(syncStatus, "The tenant's delivery report status.", SYNC_EXAMPLE),
});
export const syncStatusList = z.object({
  tenants: field(z.array(syncStatus), "Every tenant's delivery report status.", [SYNC_EXAMPLE]),
});
