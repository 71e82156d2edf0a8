/** `mailproxy messages`: finding messages, and why one waits; retry and bulk actions in message-actions.ts. */
import { integerOption, stringOption } from '../args.js';
import { report } from '../cli-error.js';
import { apiCall, type Command } from '../command.js';
import { clip, fields, instant, table, text } from '../output.js';
import { bulkVerb, retryVerb } from './message-actions.js';

/** --option -> the query parameter of GET /messages it sets. */
const FILTERS: Record<string, string> = {
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
  return body.next_cursor === null ? rows : `${rows}(more: --cursor ${body.next_cursor})\n`;
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
];

/** The message's state (fields that are set), why it waits, and its timeline. */
function detail(body: any): string {
  const { message, events, why } = body;
  const pairs = DETAIL_FIELDS.filter((key) => message[key] !== null && message[key] !== undefined).map(
    (key) => [key, key.endsWith('_ts') ? instant(message[key]) : message[key]] as const,
  );
  let out = fields(pairs);
  if (why?.waiting === true) {
    out += '\nwhy it waits:\n';
    for (const reason of why.reasons) out += `  ${reason.code}: ${reason.message}${reason.until_ts === null ? '' : ` (until ${instant(reason.until_ts)})`}\n`;
    if (why.expires_ts !== null && why.expires_ts !== undefined) out += `  given up at ${instant(why.expires_ts)} if not sent by then\n`;
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
      usage: 'ID --tenant T',
      summary: "one message (ID is the client's id): its state, why it waits, its events",
      options: { tenant: { type: 'string' } },
      positionals: [1, 1],
      api: true,
      run: (input) =>
        apiCall(
          input,
          (client) =>
            client.request('GET', `/messages/${encodeURIComponent(input.positionals[0] ?? '')}`, {
              query: { tenant_id: stringOption(input.values, 'tenant') },
            }),
          detail,
        ),
    },
    retry: retryVerb,
    bulk: bulkVerb,
  },
};
