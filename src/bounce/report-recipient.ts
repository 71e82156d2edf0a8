/**
 * Which address of a report's recipient group is the one the message was
 * sent to. A report names the mailbox its MTA tried, which after forwarding or
 * aliasing is not ours; the address we relayed to is then in the group's
 * Original-Recipient (dsn-fields.ts), in the returned original's envelope, or,
 * when the group names nobody, in a header listing the failed addresses or in
 * the SMTP transcript the prose quotes. Addresses only: never a pipe, a file
 * or a host (addresses.ts).
 */
import { addressesIn } from './addresses.js';
import type { DsnRecipientFields } from './dsn-fields.js';
import type { OriginalAddresses } from './original-message.js';
import { normaliseRecipient } from './recipient-address.js';

/** What the rest of a bounce says about its recipients. */
export interface RecipientHints {
  /** X-Failed-Recipients (Exim, Gmail). */
  failedHeader: string[];
  /** Addresses of `RCPT TO:<…>` lines in the prose's SMTP transcript. */
  rcptTo: string[];
  /** The returned original's addressees, when it is returned. */
  original: OriginalAddresses;
  /** Addresses that are never the failed recipient: the bounce's own, the original's sender. */
  own: ReadonlySet<string>;
}

/** `RCPT TO:<x>` as an SMTP transcript quotes it (RFC 5321 §4.1.1.3), with or without a `>>>` prefix. */
const RCPT_TO = /\brcpt to:[ \t]*<([^<>\r\n]{1,400})>/gi;

export function rcptToIn(text: string): string[] {
  const found = [...text.matchAll(RCPT_TO)].map((match) => normaliseRecipient(match[1] as string));
  return [...new Set(found.filter((address): address is string => address !== null))];
}

/**
 * The address a group without a recipient field fails for, from what else the
 * bounce says, the address we sent to first. With several groups only a header
 * listing them tells them apart (the others would give every group the same one).
 */
function unnamedRecipient(fields: DsnRecipientFields, hints: RecipientHints, groups: number): string | null {
  if (groups > 1) return hints.failedHeader[0] ?? null;
  const inDiagnostic = addressesIn(fields.diagnostic ?? '').find(({ address }) => !hints.own.has(address))?.address;
  const onlyAddressee = hints.original.recipients.length === 1 ? hints.original.recipients[0] : undefined;
  const quoted = hints.rcptTo.find((address) => !hints.own.has(address));
  return hints.original.firstEnvelope ?? hints.failedHeader[0] ?? quoted ?? onlyAddressee ?? inDiagnostic ?? null;
}

/**
 * The group with the recipient we sent to, and the report's other addresses
 * for it kept as alternates (correlation matches them against the message's
 * envelope). A report of one recipient whose returned original was addressed
 * to another mailbox, in its header and in its first hop's envelope alike, was
 * forwarded or aliased on the way: that mailbox is ours.
 */
export function ourRecipientIn(fields: DsnRecipientFields, hints: RecipientHints, groups: number): DsnRecipientFields {
  const alternates = fields.alternates ?? [];
  if (fields.recipient === null) return { ...fields, recipient: unnamedRecipient(fields, hints, groups), alternates };
  const envelope = hints.original.firstEnvelope;
  const addressed =
    envelope !== null &&
    envelope !== fields.recipient &&
    hints.original.addressees.includes(envelope) &&
    !hints.own.has(envelope);
  if (groups === 1 && addressed && !alternates.includes(envelope))
    return { ...fields, recipient: envelope, alternates: [fields.recipient, ...alternates] };
  return { ...fields, alternates };
}
