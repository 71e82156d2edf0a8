/**
 * Amazon SES event notifications delivered by email (through SNS): a JSON
 * document, sometimes wrapped once more as an escaped string in an SNS
 * envelope, that reports a bounce, a complaint or a delivery. Read by its
 * field names rather than parsed whole, because mail transport may have broken
 * its long lines (RFC 5322 §2.1.1 limits a line to 998 characters).
 */
import { dsnAction, type DsnRecipientFields } from './dsn-fields.js';

export interface SesNotification {
  type: 'bounce' | 'complaint' | 'delivery';
  /** SES's own judgement: Permanent, Transient or Undetermined. */
  bounceType: string | null;
  /** SES's finer judgement (NoEmail, MailboxFull, MessageTooLarge, ContentRejected, ...). */
  bounceSubType: string | null;
  recipients: DsnRecipientFields[];
}

const MAX_NOTIFICATION_CHARS = 256 * 1024;
const stringField = (text: string, name: string): string | null =>
  new RegExp(`"${name}"\\s{0,4}:\\s{0,4}"([^"]{0,2000})"`).exec(text)?.[1] ?? null;

export function readSesNotification(text: string): SesNotification | null {
  // The SNS envelope escapes the inner document's quotes; a broken line ends in `!` and a folded space.
  const json = text
    .slice(0, MAX_NOTIFICATION_CHARS)
    .replace(/\\"/g, '"')
    .replace(/!?\r?\n /g, '');
  const kind = stringField(json, 'notificationType')?.toLowerCase() ?? stringField(json, 'eventType')?.toLowerCase();
  if (kind !== 'bounce' && kind !== 'complaint' && kind !== 'delivery') return null;
  const list = /"bouncedRecipients"\s{0,4}:\s{0,4}\[([^\]]{0,100000})\]/.exec(json)?.[1] ?? '';
  const recipients = list
    .split('}')
    .map((entry) => ({
      recipient: stringField(entry, 'emailAddress')?.toLowerCase() ?? null,
      action: dsnAction(stringField(entry, 'action') ?? undefined),
      status: stringField(entry, 'status'),
      diagnostic: stringField(entry, 'diagnosticCode')?.replace(/^[a-z-]{1,20};\s*/i, '') ?? null,
      remoteMta: null,
    }))
    .filter((entry) => entry.recipient !== null);
  return {
    type: kind,
    bounceType: stringField(json, 'bounceType'),
    bounceSubType: stringField(json, 'bounceSubType'),
    recipients,
  };
}
