/**
 * The machine-readable part of a delivery status notification (RFC 3464 §2):
 * per-message fields, then one group of fields per recipient. Found in the
 * message/delivery-status part, in the raw message when mailparser did not
 * keep that part apart, or in plain text when the MIME structure is broken or
 * the report was forwarded inline. Knows nothing of what the fields mean.
 */
import { normaliseRecipient } from './recipient-address.js';

/** RFC 3464 §2.3.3's five actions. */
export type DsnAction = 'failed' | 'delayed' | 'delivered' | 'relayed' | 'expanded';

/** One recipient's group, its values as the report wrote them (typed values stripped of their type). */
export interface DsnRecipientFields {
  recipient: string | null;
  /** Other addresses the report gives for the same recipient (a Final-Recipient after forwarding). */
  alternates?: string[];
  /** One of the five, read leniently (dsnAction); null when absent or unreadable. */
  action: DsnAction | null;
  status: string | null;
  diagnostic: string | null;
  remoteMta: string | null;
}

/** More than any real report; what lies beyond is not read (keeps every scan linear and small). */
const MAX_REPORT_CHARS = 256 * 1024;

/** `Name: value` blocks (folded lines unfolded), separated by blank lines. */
export function fieldGroups(text: string): Array<Map<string, string>> {
  return text
    .slice(0, MAX_REPORT_CHARS)
    .replace(/\r\n?/g, '\n')
    .split(/\n[ \t]*\n/)
    .map((block) => {
      const fields = new Map<string, string>();
      for (const line of block.replace(/\n[ \t]+/g, ' ').split('\n')) {
        const colon = line.indexOf(':');
        if (colon > 0 && colon < 40)
          fields.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
      }
      return fields;
    })
    .filter((fields) => fields.size > 0);
}

/** `rfc822; user@example.com` -> `user@example.com` (RFC 3464 §2.1.2: address-type ";" address). */
export function typedValue(value: string | undefined): string | null {
  if (value === undefined) return null;
  const semicolon = value.indexOf(';');
  const bare = (semicolon >= 0 ? value.slice(semicolon + 1) : value).trim().replace(/^<|>$/g, '').trim();
  return bare === '' ? null : bare;
}

/**
 * The recipient a group names, normalised (recipient-address.ts), and the
 * group's other address for it. RFC 3464 §2.3.1: Original-Recipient is the
 * address as the sender gave it (the ORCPT, xtext per RFC 3461 §4); §2.3.2:
 * Final-Recipient is the one the reporting MTA tried, after any forwarding or
 * aliasing. The address we sent to is the original one. A value that holds
 * no mailbox (a bare local part, a spool file, a pipe) names nobody.
 */
function recipientOf(fields: Map<string, string>): { recipient: string | null; alternates: string[] } {
  const final = normaliseRecipient(fields.get('final-recipient'));
  const original = normaliseRecipient(fields.get('original-recipient'), true);
  const recipient = original ?? final;
  return { recipient, alternates: final !== null && final !== recipient ? [final] : [] };
}

const ACTIONS: ReadonlySet<string> = new Set(['failed', 'delayed', 'delivered', 'relayed', 'expanded']);

/**
 * Vendors' words for the five actions ("Failure (permanent)", "bounce",
 * "Transient-Failure"), tried in this order: a transient failure is a delay,
 * "not delivered" a failure.
 */
const ACTION_WORDS: ReadonlyArray<readonly [DsnAction, RegExp]> = [
  ['delayed', /\b(?:delay(?:ed)?|defer(?:red|ral)?|transient|temporar(?:y|ily)|warning|retrying)\b/i],
  [
    'failed',
    /\b(?:fail(?:ed|ure|s)?|bounced?|undeliver(?:able|ed)|not\s+delivered|reject(?:ed)?|refused|error|permanent|dropped|blocked|abandoned)\b/i,
  ],
  ['delivered', /\b(?:delivered|success(?:ful)?|sent|ok)\b/i],
  ['relayed', /\brelayed\b/i],
  ['expanded', /\bexpanded\b/i],
];

/** The Action field as one of the five: its first word when that is one, else the words it uses; null when neither. */
export function dsnAction(value: string | undefined): DsnAction | null {
  if (value === undefined) return null;
  const first =
    value
      .trim()
      .toLowerCase()
      .split(/[\s(;,:-]/)[0] ?? '';
  if (ACTIONS.has(first)) return first as DsnAction;
  return ACTION_WORDS.find(([, pattern]) => pattern.test(value))?.[0] ?? null;
}

const isRecipientGroup = (fields: Map<string, string>): boolean =>
  fields.has('final-recipient') || fields.has('original-recipient');

/**
 * An ISO-2022-JP run (RFC 1468: ESC $ B ... ESC ( B), which some servers write
 * into a report's field as it is, being 7-bit (Domino's Japanese "ユーザー ...
 * は Domino ディレクトリには見つかりません"). Bounded: a run longer than any
 * field is left as it is.
 */
const ISO_2022_JP_RUN = /\u001b\$[@B][^\u001b]{0,4000}(?:\u001b\([BJ]|$)/g;

/** A field's value with its ISO-2022-JP runs decoded, so the reason rules and the report read Japanese, not escapes. */
function decodedJapanese(value: string | null): string | null {
  if (value === null || !value.includes('\u001b')) return value;
  const decoder = new TextDecoder('iso-2022-jp');
  return value.replace(ISO_2022_JP_RUN, (run) => decoder.decode(Buffer.from(run, 'latin1')));
}

/** RFC 3464: per-message fields, then one group per recipient. */
export function readDsn(text: string): { recipients: DsnRecipientFields[]; envelopeId: string | null } {
  const groups = fieldGroups(text);
  const envelopeId = groups.find((fields) => fields.has('original-envelope-id'))?.get('original-envelope-id') ?? null;
  const recipients = groups
    .filter((fields) => isRecipientGroup(fields) || (fields.has('action') && fields.has('status')))
    .map((fields) => ({
      ...recipientOf(fields),
      action: dsnAction(fields.get('action')),
      status: fields.get('status') ?? null,
      diagnostic: decodedJapanese(typedValue(fields.get('diagnostic-code'))),
      remoteMta: typedValue(fields.get('remote-mta')),
    }));
  return { recipients, envelopeId };
}

/**
 * The delivery-status part straight from the raw message: mailparser keeps it
 * as an attachment only when it is marked as one, and otherwise folds it into
 * the text, where its fields could not be told apart from prose.
 */
export function dsnFromRaw(raw: string): string | null {
  const header = /^content-type:[ \t]*message\/(?:global-)?delivery-status\b/im.exec(raw);
  if (header === null) return null;
  const rest = raw.slice(header.index, header.index + MAX_REPORT_CHARS);
  const blank = /\r?\n[ \t]*\r?\n/.exec(rest);
  if (blank === null) return null;
  const headers = rest.slice(0, blank.index);
  const afterHeaders = rest.slice(blank.index + blank[0].length);
  const boundary = /\r?\n--/.exec(afterHeaders);
  const body = boundary === null ? afterHeaders : afterHeaders.slice(0, boundary.index);
  return /content-transfer-encoding:[ \t]*base64/i.test(headers)
    ? Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8')
    : body;
}

/**
 * Recipient groups written as plain text: a report whose MIME boundaries are
 * missing, or one forwarded inline with `> ` quoting. Only groups that name a
 * recipient and say what happened count, so prose with colons is not mistaken
 * for a report.
 */
export function dsnFromText(text: string): string | null {
  const unquoted = text
    .slice(0, MAX_REPORT_CHARS)
    .replace(/\r\n?/g, '\n')
    .replace(/^[ \t]{0,4}(?:>[ \t]?){1,4}/gm, '');
  const start = /^(?:final|original)-recipient:/im.exec(unquoted);
  if (start === null) return null;
  const groups = fieldGroups(unquoted.slice(start.index));
  return groups.some((fields) => isRecipientGroup(fields) && (fields.has('action') || fields.has('status')))
    ? unquoted.slice(start.index)
    : null;
}
