/**
 * The resource table: each resource's reading verbs, one row each, saying which
 * route to GET, which options become its query and which columns or fields to
 * print (read-verbs.ts builds the verbs). A new resource to list or show is one
 * row here; its command takes the verbs with `...READ_VERBS.<resource>`.
 */
import type {
  AccountAnswer,
  AccountList,
  AccountView,
  MessageDetail,
  MessagePage,
  ReportLog,
  SuppressionPage,
  TenantAnswer,
  TenantList,
} from '../answers.js';
import type { Verb } from '../command.js';
import { objectFields } from '../fields.js';
import { instant, text } from '../output.js';
import { listVerb, showVerb } from '../read-verbs.js';
import { MESSAGE_COLUMNS, messageDetail, pageFooter } from './message-view.js';

export const tenantPath = (id: string): string => `/tenant/${encodeURIComponent(id)}`;
export const accountPath = (id: string): string => `/account/${encodeURIComponent(id)}`;

/** --option -> the parameter of POST /commands/bulk (and of GET /messages) it sets. */
export const BULK_FILTERS: Readonly<Record<string, string>> = {
  tenant: 'tenant_id',
  status: 'status',
  account: 'account_id',
  batch: 'batch_code',
  recipient: 'recipient',
  sender: 'sender',
  'from-ts': 'from_ts',
  'to-ts': 'to_ts',
  q: 'q',
  priority: 'priority',
};

/** `10/min 100/h -/day`: an account's limits in one cell. */
const limits = (account: AccountView): string =>
  account.limit_per_minute === null && account.limit_per_hour === null && account.limit_per_day === null
    ? '-'
    : `${text(account.limit_per_minute)}/min ${text(account.limit_per_hour)}/h ${text(account.limit_per_day)}/day`;

/** A PEC account's mailbox in one cell: `imap.example:993 INBOX`. */
const mailbox = (account: AccountView): string =>
  account.imap_host === null || account.imap_host === undefined
    ? '-'
    : `${account.imap_host}:${account.imap_port} ${account.imap_folder}`;

/** Each limit window in one line: `0 of 30, resets 2026-11-23 21:18:00Z`. */
const usageLines = (usage: NonNullable<AccountView['usage']>): Record<string, string> =>
  Object.fromEntries(
    Object.entries(usage).map(([window, value]) => [
      window,
      `${value.used}${value.limit === null ? '' : ` of ${value.limit}`}, resets ${instant(value.resets_ts)}`,
    ]),
  );

export const READ_VERBS = {
  tenants: {
    list: listVerb({
      usage: '',
      summary: 'every tenant',
      path: '/tenants',
      rows: (answer: TenantList) => answer.tenants,
      columns: [
        { header: 'ID', value: (t) => t.id },
        { header: 'NAME', value: (t) => t.name },
        { header: 'ACTIVE', value: (t) => t.active },
        { header: 'CLIENT URL', value: (t) => t.client_base_url },
        { header: 'KEY EXPIRES', value: (t) => (t.api_key_expires_at === null ? null : instant(t.api_key_expires_at)) },
        { header: 'CREATED', value: (t) => instant(t.created_at) },
      ],
    }),
    'report-log': listVerb({
      usage: 'ID [--limit N]',
      summary:
        "the last attempts of posting delivery reports to the tenant's client: time, HTTP status or error, latency, items",
      path: (id) => `${tenantPath(id)}/report-log`,
      counts: { limit: 'limit' },
      rows: (answer: ReportLog) => answer.report_log,
      columns: [
        { header: 'AT', value: (a) => instant(a.at_ts) },
        { header: 'RESULT', value: (a) => (a.ok ? 'ok' : 'FAILED') },
        { header: 'STATUS', value: (a) => a.http_status },
        { header: 'ERROR', value: (a) => a.error },
        { header: 'LATENCY', value: (a) => `${a.latency_ms} ms` },
        { header: 'ITEMS', value: (a) => a.items },
        { header: 'REPORT ID', value: (a) => a.report_id },
      ],
    }),
    show: showVerb({
      usage: 'ID',
      summary: 'one tenant (secrets are never shown)',
      path: tenantPath,
      render: (answer: TenantAnswer) => objectFields(answer.tenant),
    }),
  },
  accounts: {
    list: listVerb({
      usage: '[--tenant T]',
      summary: 'every account (the admin: of every tenant, or of T), with its state and waiting mail',
      path: '/accounts',
      query: { tenant: 'tenant_id' },
      rows: (answer: AccountList) => answer.accounts,
      columns: [
        { header: 'TENANT', value: (a) => a.tenant_id },
        { header: 'ID', value: (a) => a.id },
        { header: 'HOST', value: (a) => `${a.host}:${a.port}` },
        { header: 'TLS', value: (a) => a.tls_mode },
        { header: 'DEFAULT', value: (a) => a.is_default },
        { header: 'STATE', value: (a) => (a.paused_reason ? `${a.state} (${a.paused_reason})` : a.state) },
        { header: 'WAITING', value: (a) => a.waiting },
        { header: 'LIMITS', value: limits },
        { header: 'PEC', value: (a) => a.is_pec },
        { header: 'MAILBOX', value: mailbox },
      ],
    }),
    show: showVerb({
      usage: 'ID [--tenant T]',
      summary: 'one account, with its usage in each limit window',
      path: accountPath,
      perTenant: true,
      render: ({ account }: AccountAnswer) =>
        objectFields(account.usage === undefined ? account : { ...account, usage: usageLines(account.usage) }),
    }),
  },
  messages: {
    list: listVerb({
      usage:
        '[--tenant T] [--status S] [--account A] [--batch B] [--recipient ADDR] [--sender ADDR] [--from-ts N] [--to-ts N] [--q WORDS] [--priority P] [--sort newest|next_attempt] [--limit N] [--cursor C]',
      summary:
        'newest first; --status queued|deferred|sending|sent|error|suspended|bounced; --q finds words of subject and addresses',
      path: '/messages',
      query: { ...BULK_FILTERS, sort: 'sort', cursor: 'cursor' },
      counts: { limit: 'limit' },
      rows: (answer: MessagePage) => answer.messages,
      columns: MESSAGE_COLUMNS,
      footer: pageFooter,
    }),
    show: showVerb({
      usage: 'ID [--tenant T]',
      summary: "one message (ID is the client's id): its state, why it waits, its events",
      path: (id) => `/messages/${encodeURIComponent(id)}`,
      perTenant: true,
      render: (answer: MessageDetail) => messageDetail(answer),
    }),
  },
  suppressions: {
    list: listVerb({
      usage: '[--tenant T] [--address ADDR] [--after DIGEST] [--limit N]',
      summary: "the list in the order of the addresses' digests (kept sealed: --address finds one address, any case)",
      path: '/suppressions',
      perTenant: true,
      query: { address: 'address', after: 'after' },
      counts: { limit: 'limit' },
      rows: (answer: SuppressionPage) => answer.suppressions,
      columns: [
        { header: 'ADDRESS', value: (s) => s.address },
        { header: 'SOURCE', value: (s) => s.source },
        { header: 'REASON', value: (s) => s.reason },
        { header: 'CREATED', value: (s) => instant(s.created_ts) },
        { header: 'EXPIRES', value: (s) => (s.expires_ts === null ? 'never' : instant(s.expires_ts)) },
      ],
      footer: (answer) => (answer.next === null ? '' : `(more: --after ${answer.next})\n`),
    }),
  },
} as const satisfies Record<string, Record<string, Verb>>;
