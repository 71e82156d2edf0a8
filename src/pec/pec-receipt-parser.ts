/**
 * What a message in a PEC account's mailbox is, read with mailparser: one of
 * the gestore's receipts (core/pec/pec.ts), or not (a transport envelope, an
 * anomaly, any other mail). The receipt's type comes from X-Ricevuta, else
 * daticert.xml, else the subject's prefix; its facts from daticert.xml and the
 * headers. Never throws: a message it cannot read is NOT_A_RECEIPT.
 */
import { simpleParser, type Attachment, type ParsedMail } from 'mailparser';
import { MAIL_ID_FIELD } from '../core/message/index.js';
import { NOT_A_RECEIPT, isPecReceiptType, type PecReceiptFindings, type PecReceiptType } from '../core/pec/index.js';
import { readDaticert, type Daticert } from './pec-daticert.js';
import { embeddedHeader, normaliseMessageId } from './pec-headers.js';
import { receiptTypeBySubject } from './pec-subject.js';

const ORIGINAL_TYPES = new Set(['message/rfc822', 'message/global']);
const XML_TYPES = new Set(['application/xml', 'text/xml']);
/** Where a daticert.xml under another name would say so. */
const XML_SNIFF_BYTES = 4096;

type Recognised = Pick<PecReceiptFindings, 'type' | 'recognisedBy'>;

/** A copy each time: NOT_A_RECEIPT's addressees array is shared, and a caller may push to its own. */
const notAReceipt = (): PecReceiptFindings => ({ ...NOT_A_RECEIPT, addressees: [] });

export async function analysePecReceipt(raw: Buffer): Promise<PecReceiptFindings> {
  let mail: ParsedMail;
  try {
    // ignoreEmbedded: the original a receipt carries stays one attachment, so
    // nothing inside it (a PEC message someone forwarded) is taken for the receipt's own.
    mail = await simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true, ignoreEmbedded: true });
  } catch {
    return notAReceipt();
  }
  try {
    return findingsOf(mail);
  } catch {
    return notAReceipt();
  }
}

const filenameOf = (attachment: Attachment): string => (attachment.filename ?? '').trim().toLowerCase();
/** mailparser leaves contentType unset on a part whose Content-Type header is cut short. */
const typeOf = (attachment: Attachment): string =>
  typeof attachment.contentType === 'string' ? attachment.contentType.toLowerCase() : '';

/** daticert.xml by name, else an XML part whose root is postacert. */
function daticertPart(mail: ParsedMail): Attachment | undefined {
  return (
    mail.attachments.find((attachment) => filenameOf(attachment) === 'daticert.xml') ??
    mail.attachments.find(
      (attachment) =>
        XML_TYPES.has(typeOf(attachment)) && attachment.content.subarray(0, XML_SNIFF_BYTES).includes('<postacert'),
    )
  );
}

/** The original a full receipt carries: postacert.eml by name, else the first attached message. */
function originalPart(mail: ParsedMail): Attachment | undefined {
  const originals = mail.attachments.filter((attachment) => ORIGINAL_TYPES.has(typeOf(attachment)));
  return originals.find((attachment) => filenameOf(attachment) === 'postacert.eml') ?? originals[0];
}

/**
 * A header of the receipt itself as mailparser holds it: text as it stands, a structured value by
 * its `text` or `value`. The bounce room reads headers the same way; PEC keeps its own copy so
 * that its parser's thread loads nothing of bounces.
 */
function headerText(mail: ParsedMail, name: string): string | null {
  const value: unknown = mail.headers.get(name);
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && 'text' in value && typeof value.text === 'string') return value.text;
  if (typeof value === 'object' && 'value' in value) return String(value.value);
  return String(value);
}

const trimmedHeader = (mail: ParsedMail, name: string): string | null => {
  const value = headerText(mail, name)?.trim() ?? '';
  return value === '' ? null : value;
};

interface Evidence {
  mail: ParsedMail;
  daticert: Daticert | null;
  hasDaticert: boolean;
  reference: string | null;
  originalMailId: string | null;
}

/**
 * X-Ricevuta first, daticert's tipo second, the subject last, and the subject
 * only beside some PEC reference: ordinary mail whose subject starts
 * "CONSEGNA:" is no receipt. An envelope (daticert tipo posta-certificata, or
 * X-Trasporto) is mail received, whatever its subject.
 */
function recognise(evidence: Evidence): Recognised | null {
  const header = trimmedHeader(evidence.mail, 'x-ricevuta')?.toLowerCase() ?? null;
  if (header !== null && isPecReceiptType(header)) return { type: header, recognisedBy: 'header' };
  const tipo = evidence.daticert?.tipo ?? null;
  if (tipo !== null && isPecReceiptType(tipo)) return { type: tipo, recognisedBy: 'daticert' };
  if (tipo === 'posta-certificata' || trimmedHeader(evidence.mail, 'x-trasporto') !== null) return null;
  const hasReference = evidence.reference !== null || evidence.hasDaticert || evidence.originalMailId !== null;
  const bySubject: PecReceiptType | null = hasReference ? receiptTypeBySubject(evidence.mail.subject ?? '') : null;
  return bySubject === null ? null : { type: bySubject, recognisedBy: 'subject' };
}

/** A part that cannot be read is evidence missing, not the whole message lost: the headers may still say it all. */
function attempt<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}

function findingsOf(mail: ParsedMail): PecReceiptFindings {
  const datiPart = attempt(() => daticertPart(mail), undefined);
  const daticert = datiPart === undefined ? null : attempt(() => readDaticert(datiPart.content), null);
  const original = attempt(() => originalPart(mail), undefined);
  const originalMailId =
    original === undefined ? null : attempt(() => embeddedHeader(original.content, MAIL_ID_FIELD), null);
  const reference = trimmedHeader(mail, 'x-riferimento-message-id');
  const recognised = recognise({ mail, daticert, hasDaticert: datiPart !== undefined, reference, originalMailId });
  if (recognised === null) return notAReceipt();
  return {
    ...recognised,
    referencedMessageId: normaliseMessageId(reference) ?? normaliseMessageId(daticert?.msgid ?? null),
    mailId: trimmedHeader(mail, MAIL_ID_FIELD) ?? originalMailId,
    identificativo: daticert?.identificativo ?? null,
    recipient: daticert?.recipient ?? null,
    addressees: daticert?.addressees ?? [],
    error: daticert?.error ?? null,
    errorDetail: daticert?.errorDetail ?? null,
    issuer: daticert?.issuer ?? null,
    issuedAt: daticert?.issuedAt ?? null,
    receiptKind: daticert?.receiptKind ?? trimmedHeader(mail, 'x-tiporicevuta')?.toLowerCase() ?? null,
    originalSubject: daticert?.originalSubject ?? null,
  };
}
