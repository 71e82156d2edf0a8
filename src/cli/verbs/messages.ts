/** `mailproxy messages`: finding messages, and why one waits; retry and bulk actions in message-actions.ts. */
import { integerOption, stringOption } from '../args.js';
import { report } from '../cli-error.js';
import { apiCall, tenantCall, type Command } from '../command.js';
import { fields, withInstants } from '../fields.js';
import { clip, instant, table, text } from '../output.js';
import { BULK_FILTERS, bulkVerb, retryVerb } from './message-actions.js';

/** --option -> the query parameter of GET /messages it sets: the filters bulk actions share, and the page. */
const FILTERS: Record<string, string> = {
  ...BULK_FILTERS,
  sort: 'sort',
  cursor: 'cursor',
};

function listing(body: any): string {
  const rows = table(body.messages, [
    { header: 'TENANT', value: (m: any) => m.tenant_id },
    { header: 'ID', value: (m: any) => clip(m.id, 40) },
    { header: 'STATUS', value: (m: any) => m.status },
    { header: 'PRI', value: (m: any) => m.priority },
    { header: 'ACCOUNT', value: (m: any) => m.account_id },
    { header: 'TO', value: (m: any) => clip(text(m.rcpt_to), 40) },
    { header: 'SUBJECT', value: (m: any) => clip(text(m.subject), 40) },
    { header: 'CREATED', value: (m: any) => instant(m.created_ts) },
    { header: 'TRIES', value: (m: any) => m.attempts },
  ]);
  // Fleet mode: nodes that did not answer are said, so a short list is never taken for the whole fleet.
  const missing = Array.isArray(body.missing_nodes) && body.missing_nodes.length > 0 ? `(missing nodes: ${body.missing_nodes.join(', ')})\n` : '';
  return (body.next_cursor === null ? rows : `${rows}(more: --cursor ${body.next_cursor})\n`) + missing;
}

const DETAIL_FIELDS = [
  'id',
  'tenant_id',
  'account_id',
  'status',
  'priority',
  'batch_code',
  'mail_from',
  'rcpt_to',
  'subject',
  'message_id',
  'size_bytes',
  'attempts',
  'created_ts',
  'next_attempt_ts',
  'deferred_ts',
  'deferred_reason',
  'sent_ts',
  'error_ts',
  'error',
  'last_reply_code',
  'refused_recipients',
  'reported_ts',
  'bounce_type',
  'bounce_code',
  'bounce_reason',
  'bounce_ts',
  'complaint_ts',
  'complaint_type',
  'provider_state',
  'provider_state_ts',
  'provider_message_id',
];

/**
 * The fields that are set, each instant once: the next attempt (and `deferred_ts`,
 * the instant a deferral waits for, the same after every retry) is left to the
 * reason of `why` that says it, or shown once as `next_attempt_ts`.
 */
function stateFields(message: any, why: any): [string, unknown][] {
  const told = new Set<unknown>(why?.waiting === true ? why.reasons.map((reason: any) => reason.until_ts) : []);
  const repeated = (key: string): boolean =>
    (key === 'next_attempt_ts' && told.has(message.next_attempt_ts)) ||
    (key === 'deferred_ts' && (message.deferred_ts === message.next_attempt_ts || told.has(message.deferred_ts)));
  return DETAIL_FIELDS.filter((key) => message[key] !== null && message[key] !== undefined && !repeated(key)).map((key) => [
    key,
    withInstants(message[key], key),
  ]);
}

/**
 * A reason it waits, its instant once: the API's sentence names it in ISO text
 * ("next attempt at 2026-11-23T21:17:58.000Z"), shown as the other instants are;
 * `until_ts` is added only when the sentence does not say it.
 */
function reasonLine(reason: any): string {
  if (reason.until_ts === null || reason.until_ts === undefined) return reason.message;
  const iso = new Date(reason.until_ts * 1000).toISOString();
  return reason.message.includes(iso) ? reason.message.replaceAll(iso, instant(reason.until_ts)) : `${reason.message} (until ${instant(reason.until_ts)})`;
}

/** The message's state (fields that are set), why it waits, and its timeline. */
function detail(body: any): string {
  const { message, events, why } = body;
  // Fleet mode: the node that holds the message.
  let out = fields([...(typeof body.node_id === 'string' ? [['node', body.node_id] as [string, unknown]] : []), ...stateFields(message, why)]);
  if (why?.waiting === true) {
    const given = why.expires_ts === null || why.expires_ts === undefined ? [] : [['given up at', `${instant(why.expires_ts)} if not sent by then`] as const];
    out += `\nwhy it waits:\n${fields([...why.reasons.map((reason: any) => [reason.code, reasonLine(reason)] as const), ...given]).replace(/^(?=.)/gm, '  ')}`;
  } else if (why !== undefined) {
    out += `\nnot waiting (${message.status})\n`;
  }
  out += `\nevents:\n${table(events, [
    { header: 'AT', value: (e: any) => instant(e.ts) },
    { header: 'EVENT', value: (e: any) => e.event_type },
    { header: 'TRY', value: (e: any) => e.attempt },
    { header: 'REPLY', value: (e: any) => [e.reply_code, e.enhanced_status].filter((part) => part !== null).join(' ') },
    { header: 'TEXT', value: (e: any) => clip(text(e.text), 80) },
  ]).replace(/^(?=.)/gm, '  ')}`;
  return out;
}

export const messagesCommand: Command = {
  name: 'messages',
  summary: 'Messages: find them, see where one stands and why it waits, retry them now, act on all a filter finds.',
  verbs: {
    list: {
      usage:
        '[--tenant T] [--status S] [--account A] [--batch B] [--recipient ADDR] [--sender ADDR] [--from-ts N] [--to-ts N] [--q WORDS] [--priority P] [--sort newest|next_attempt] [--limit N] [--cursor C]',
      summary: 'newest first; --status queued|deferred|sending|sent|error|suspended|bounced; --q finds words of subject and addresses',
      options: Object.fromEntries([...Object.keys(FILTERS), 'limit'].map((name) => [name, { type: 'string' as const }])),
      positionals: [0, 0],
      api: true,
      run: async (input) => {
        const limit = integerOption(input.values, 'limit', 1);
        if (!limit.ok) return report(input.cli.stderr, limit.error);
        const query = Object.fromEntries(Object.entries(FILTERS).map(([option, parameter]) => [parameter, stringOption(input.values, option)]));
        return apiCall(input, (client) => client.request('GET', '/messages', { query: { ...query, limit: limit.value } }), listing);
      },
    },
    show: {
      usage: 'ID [--tenant T]',
      summary: "one message (ID is the client's id): its state, why it waits, its events",
      options: { tenant: { type: 'string' } },
      positionals: [1, 1],
      api: true,
      run: (input) =>
        tenantCall(
          input,
          (client, tenantId) => client.request('GET', `/messages/${encodeURIComponent(input.positionals[0] ?? '')}`, { query: { tenant_id: tenantId } }),
          detail,
        ),
    },
    retry: retryVerb,
    bulk: bulkVerb,
  },
};
