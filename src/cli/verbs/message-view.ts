/** How `messages list` and `messages show` print a message: its row, and its state, why it waits and its timeline. */
import type { MessageDetail, MessagePage } from '../answers.js';
import { fields, withInstants } from '../fields.js';
import { clip, instant, table, text, type Column } from '../output.js';

type Summary = MessagePage['messages'][number];
type Message = MessageDetail['message'];
type Why = MessageDetail['why'];
type Reason = Why['reasons'][number];

export const MESSAGE_COLUMNS: readonly Column<Summary>[] = [
  { header: 'TENANT', value: (m) => m.tenant_id },
  { header: 'ID', value: (m) => clip(m.id, 40) },
  { header: 'STATUS', value: (m) => m.status },
  { header: 'PRI', value: (m) => m.priority },
  { header: 'ACCOUNT', value: (m) => m.account_id },
  { header: 'TO', value: (m) => clip(text(m.rcpt_to), 40) },
  { header: 'SUBJECT', value: (m) => clip(text(m.subject), 40) },
  { header: 'CREATED', value: (m) => instant(m.created_ts) },
  { header: 'TRIES', value: (m) => m.attempts },
];

/** The next page; in fleet mode the nodes that did not answer, so a short list is never taken for the whole fleet. */
export function pageFooter(page: MessagePage): string {
  const missing =
    Array.isArray(page.missing_nodes) && page.missing_nodes.length > 0
      ? `(missing nodes: ${page.missing_nodes.join(', ')})\n`
      : '';
  return (page.next_cursor === null ? '' : `(more: --cursor ${page.next_cursor})\n`) + missing;
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
] as const satisfies readonly (keyof Message)[];

/**
 * The fields that are set, each instant once: the next attempt (and `deferred_ts`,
 * the instant a deferral waits for, the same after every retry) is left to the
 * reason of `why` that says it, or shown once as `next_attempt_ts`.
 */
function stateFields(message: Message, why: Why | undefined): [string, unknown][] {
  const told = new Set<unknown>(why?.waiting === true ? why.reasons.map((reason) => reason.until_ts) : []);
  const repeated = (key: string): boolean =>
    (key === 'next_attempt_ts' && told.has(message.next_attempt_ts)) ||
    (key === 'deferred_ts' && (message.deferred_ts === message.next_attempt_ts || told.has(message.deferred_ts)));
  return DETAIL_FIELDS.filter((key) => message[key] !== null && message[key] !== undefined && !repeated(key)).map(
    (key) => [key, withInstants(message[key], key)],
  );
}

/**
 * A reason it waits, its instant once: the API's sentence names it in ISO text
 * ("next attempt at 2026-11-23T21:17:58.000Z"), shown as the other instants are;
 * `until_ts` is added only when the sentence does not say it.
 */
function reasonLine(reason: Reason): string {
  if (reason.until_ts === null || reason.until_ts === undefined) return reason.message;
  const iso = new Date(reason.until_ts * 1000).toISOString();
  return reason.message.includes(iso)
    ? reason.message.replaceAll(iso, instant(reason.until_ts))
    : `${reason.message} (until ${instant(reason.until_ts)})`;
}

/** The message's state (fields that are set), why it waits, and its timeline. */
export function messageDetail(body: MessageDetail): string {
  const { message, events } = body;
  // An answer without `why` says nothing of waiting.
  const why: Why | undefined = body.why;
  // Fleet mode: the node that holds the message.
  let out = fields([
    ...(typeof body.node_id === 'string' ? [['node', body.node_id] as [string, unknown]] : []),
    ...stateFields(message, why),
  ]);
  if (why?.waiting === true) {
    const given =
      why.expires_ts === null || why.expires_ts === undefined
        ? []
        : [['given up at', `${instant(why.expires_ts)} if not sent by then`] as const];
    out += `\nwhy it waits:\n${fields([...why.reasons.map((reason) => [reason.code, reasonLine(reason)] as const), ...given]).replace(/^(?=.)/gm, '  ')}`;
  } else if (why !== undefined) {
    out += `\nnot waiting (${message.status})\n`;
  }
  out += `\nevents:\n${table(events, [
    { header: 'AT', value: (e) => instant(e.ts) },
    { header: 'EVENT', value: (e) => e.event_type },
    { header: 'TRY', value: (e) => e.attempt },
    { header: 'REPLY', value: (e) => [e.reply_code, e.enhanced_status].filter((part) => part !== null).join(' ') },
    { header: 'TEXT', value: (e) => clip(text(e.text), 80) },
  ]).replace(/^(?=.)/gm, '  ')}`;
  return out;
}
