/**
 * PEC receipts and transport envelopes as a gestore sends them into the PEC
 * account's mailbox: multipart/signed (RFC 5751 §3.4) around a
 * multipart/mixed of the Italian text, daticert.xml and, for a full
 * ("completa") delivery receipt or an envelope, the original as postacert.eml.
 * The signature is dummy bytes: nothing here verifies it. CRLF line endings.
 */
import type { PecAddressee, PecReceiptType } from '../../src/core/pec/pec.js';
import {
  daticertXml,
  defaultError,
  receiptText,
  subjectPrefix,
  type DaticertFields,
  type DaticertType,
  type PecDate,
} from './receipt-parts.js';

export type { PecDate } from './receipt-parts.js';

export interface ReceiptOptions {
  type: PecReceiptType;
  /** Our original's Message-ID, in brackets as the headers carry it. */
  referencedMessageId?: string;
  /** X-Genro-Mail-ID of the embedded original (a completa avvenuta-consegna); null: the original has none. */
  mailId?: string | null;
  recipient?: string;
  addressees?: PecAddressee[];
  originalSubject?: string;
  /** daticert's `errore`; `virus` also picks the virus wording and X-VerificaSicurezza. */
  error?: string;
  errorDetail?: string | null;
  issuer?: string;
  issuedAt?: PecDate;
  identificativo?: string;
  /** completa (the default for avvenuta-consegna, with the original attached), breve or sintetica. */
  receiptKind?: string;
  /** The original to embed as postacert.eml instead of one built from the options. */
  original?: Buffer;
  messageId?: string;
  /** The PEC account: the original's sender and the receipt's To. */
  account?: string;
  /** The whole Subject header as written (already MIME-encoded if wanted); default prefix + original subject. */
  subject?: string;
  omitReceiptHeader?: boolean;
  omitDaticert?: boolean;
  omitReference?: boolean;
  /** daticert.xml as given instead of the one built from the options (entities, broken XML); a string is written as UTF-8. */
  daticert?: string | Buffer;
  /** More header lines, written after the PEC ones. */
  extraHeaders?: string[];
}

export const GESTORE_DOMAIN = 'pec.gestore.example';
export const ACCOUNT = 'fatture@pec.acme.example';
const DEFAULT_DATE: PecDate = { day: '15/01/2024', time: '10:30:00', zone: '+0100' };
/** A delivery-type receipt is about one recipient (<consegna>); accettazione and the rest name them all. */
const ABOUT_ONE_RECIPIENT: ReadonlySet<PecReceiptType> = new Set([
  'avvenuta-consegna',
  'errore-consegna',
  'preavviso-errore-consegna',
  'rilevazione-virus',
]);
const DEFAULT_DETAIL: Partial<Record<PecReceiptType, string>> = {
  'non-accettazione': 'Messaggio non conforme: mittente non autorizzato',
  'errore-consegna': '5.1.1 - Utente sconosciuto',
  'preavviso-errore-consegna': 'Nessuna ricevuta di presa in carico entro le 12 ore',
  'rilevazione-virus': 'Virus rilevato nel messaggio: Eicar-Test-Signature',
};

const crlf = (text: string): string => text.replace(/\r?\n/g, '\r\n');

/** Base64 in lines of 76, as MIME writes it (RFC 2045 §6.8). */
const base64Lines = (bytes: Buffer): string => bytes.toString('base64').replace(/.{1,76}/g, '$&\n');

/** Quoted-printable for short lines: every non-ASCII byte and `=` encoded (RFC 2045 §6.7). */
const quotedPrintable = (text: string): string =>
  [...Buffer.from(text, 'utf8')]
    .map((byte) =>
      byte > 126 || byte === 61 ? `=${byte.toString(16).toUpperCase().padStart(2, '0')}` : String.fromCharCode(byte),
    )
    .join('');

/** The message we sent, as the gestore attaches it in a completa receipt or an envelope. */
export function buildOriginal(options: {
  messageId: string;
  mailId: string | null;
  subject: string;
  from: string;
  to: string[];
}): Buffer {
  return Buffer.from(
    crlf(
      [
        'Date: Mon, 15 Jan 2024 10:29:58 +0100',
        `From: ${options.from}`,
        `To: ${options.to.join(', ')}`,
        `Subject: ${options.subject}`,
        `Message-ID: ${options.messageId}`,
        ...(options.mailId === null ? [] : [`X-Genro-Mail-ID: ${options.mailId}`]),
        'MIME-Version: 1.0',
        'Content-Type: text/plain; charset=UTF-8',
        'Content-Transfer-Encoding: quoted-printable',
        '',
        quotedPrintable('Gentile cliente, in allegato la fattura del mese. Cordiali saluti.'),
        '',
      ].join('\n'),
    ),
  );
}

interface Signed {
  headers: string[];
  text: string;
  daticert: string | Buffer | null;
  original: Buffer | null;
  boundary: string;
}

/** multipart/signed around the multipart/mixed the gestore signs, then the smime.p7s signature. */
function signedMessage(parts: Signed): Buffer {
  const mixed = `mix-${parts.boundary}`;
  const signed = `sig-${parts.boundary}`;
  const body = [
    ...parts.headers,
    'MIME-Version: 1.0',
    `Content-Type: multipart/signed; protocol="application/pkcs7-signature"; micalg=sha-256; boundary="${signed}"`,
    '',
    'This is an S/MIME signed message',
    '',
    `--${signed}`,
    `Content-Type: multipart/mixed; boundary="${mixed}"`,
    '',
    `--${mixed}`,
    'Content-Type: text/plain; charset=UTF-8',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    quotedPrintable(parts.text),
    ...(parts.daticert === null
      ? []
      : [
          `--${mixed}`,
          'Content-Type: application/xml; name="daticert.xml"',
          'Content-Disposition: inline; filename="daticert.xml"',
          'Content-Transfer-Encoding: base64',
          '',
          base64Lines(typeof parts.daticert === 'string' ? Buffer.from(parts.daticert, 'utf8') : parts.daticert),
        ]),
    ...(parts.original === null
      ? []
      : [
          `--${mixed}`,
          'Content-Type: message/rfc822; name="postacert.eml"',
          'Content-Disposition: inline; filename="postacert.eml"',
          '',
          parts.original.toString('utf8').replace(/\r\n/g, '\n'),
        ]),
    `--${mixed}--`,
    '',
    `--${signed}`,
    'Content-Type: application/pkcs7-signature; name="smime.p7s"',
    'Content-Transfer-Encoding: base64',
    'Content-Disposition: attachment; filename="smime.p7s"',
    '',
    base64Lines(Buffer.from(`dummy PKCS#7 signature ${parts.boundary} `.repeat(24), 'utf8')),
    `--${signed}--`,
    '',
  ];
  return Buffer.from(crlf(body.join('\n')), 'utf8');
}

const rfc2822Date = (date: PecDate): string => {
  const [day, month, year] = date.day.split('/');
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  return `${Number(day)} ${months[Number(month) - 1] ?? 'Jan'} ${year ?? '2024'} ${date.time} ${date.zone}`;
};

export function buildReceipt(options: ReceiptOptions): Buffer {
  const type = options.type;
  const account = options.account ?? ACCOUNT;
  const referencedMessageId = options.referencedMessageId ?? '<fattura-2024-001@acme.example>';
  const recipient = options.recipient ?? 'mario.rossi@pec.cliente.example';
  const error = options.error ?? defaultError(type);
  const originalSubject = options.originalSubject ?? 'Fattura n. 2024/001';
  const issuedAt = options.issuedAt ?? DEFAULT_DATE;
  const identificativo = options.identificativo ?? `opec21.20240115103000.04711.101.1.53@${GESTORE_DOMAIN}`;
  const receiptKind = type === 'avvenuta-consegna' ? (options.receiptKind ?? 'completa') : null;
  const fields: DaticertFields = {
    tipo: type,
    error,
    sender: account,
    addressees: options.addressees ?? [{ address: recipient, certified: true }],
    originalSubject,
    issuer: options.issuer ?? 'Gestore Esempio S.p.A.',
    issuedAt,
    identificativo,
    msgid: referencedMessageId,
    receiptKind,
    recipient: ABOUT_ONE_RECIPIENT.has(type) ? recipient : null,
    errorDetail: options.errorDetail === undefined ? (DEFAULT_DETAIL[type] ?? null) : options.errorDetail,
  };
  const original =
    receiptKind === 'completa'
      ? (options.original ??
        buildOriginal({
          messageId: referencedMessageId,
          mailId: options.mailId === undefined ? 'genro-mail-1' : options.mailId,
          subject: originalSubject,
          from: account,
          to: fields.addressees.map((addressee) => addressee.address),
        }))
      : null;
  const virusCheck = error === 'virus' && (type === 'non-accettazione' || type === 'errore-consegna');
  const headers = [
    `Received: from mx.${GESTORE_DOMAIN} by imap.${GESTORE_DOMAIN} with LMTP; ${rfc2822Date(issuedAt)}`,
    `Date: ${rfc2822Date(issuedAt)}`,
    `From: "Per conto di: ${account}" <posta-certificata@${GESTORE_DOMAIN}>`,
    `To: ${account}`,
    `Subject: ${options.subject ?? subjectPrefix(type, error) + originalSubject}`,
    `Message-ID: ${options.messageId ?? `<${type}.${identificativo}>`}`,
    ...(options.omitReceiptHeader === true ? [] : [`X-Ricevuta: ${type}`]),
    ...(options.omitReference === true ? [] : [`X-Riferimento-Message-ID: ${referencedMessageId}`]),
    ...(receiptKind === null ? [] : [`X-TipoRicevuta: ${receiptKind}`]),
    ...(virusCheck ? ['X-VerificaSicurezza: errore'] : []),
    ...(options.extraHeaders ?? []),
  ];
  return signedMessage({
    headers,
    text: receiptText(type, fields),
    daticert: options.omitDaticert === true ? null : (options.daticert ?? daticertXml(fields)),
    original,
    boundary: identificativo.replace(/[^A-Za-z0-9]/g, '').slice(0, 40),
  });
}

export interface EnvelopeOptions {
  /** The message carried (the original someone sent to the PEC account). */
  messageId?: string;
  subject?: string;
  sender?: string;
  /** `errore`: an anomaly envelope (ANOMALIA MESSAGGIO), mail the gestore could not certify. */
  transport?: 'posta-certificata' | 'errore';
  /** daticert's tipo; default posta-certificata (an anomaly carries none). */
  daticertType?: DaticertType | null;
  mailId?: string | null;
}

/** A transport envelope ("busta di trasporto"): mail the PEC mailbox receives, not a receipt. */
export function buildEnvelope(options: EnvelopeOptions = {}): Buffer {
  const transport = options.transport ?? 'posta-certificata';
  const sender = options.sender ?? 'ufficio@pec.fornitore.example';
  const subject = options.subject ?? 'Ordine n. 77';
  const messageId = options.messageId ?? '<ordine-77@fornitore.example>';
  const identificativo = `opec21.20240116091500.11111.202.1.9@${GESTORE_DOMAIN}`;
  const daticertType =
    options.daticertType === undefined ? (transport === 'errore' ? null : 'posta-certificata') : options.daticertType;
  const issuedAt: PecDate = { day: '16/01/2024', time: '09:15:00', zone: '+0100' };
  const original = buildOriginal({ messageId, mailId: options.mailId ?? null, subject, from: sender, to: [ACCOUNT] });
  const fields: DaticertFields = {
    tipo: daticertType ?? 'posta-certificata',
    error: 'nessuno',
    sender,
    addressees: [{ address: ACCOUNT, certified: true }],
    originalSubject: subject,
    issuer: 'Gestore Esempio S.p.A.',
    issuedAt,
    identificativo,
    msgid: messageId,
    receiptKind: null,
    recipient: null,
    errorDetail: null,
  };
  const prefix = transport === 'errore' ? 'ANOMALIA MESSAGGIO: ' : 'POSTA CERTIFICATA: ';
  const text =
    transport === 'errore'
      ? `Anomalia nel messaggio\n\nIl giorno ${issuedAt.day} alle ore ${issuedAt.time} (${issuedAt.zone}) è stato ricevuto\nil messaggio "${subject}" proveniente da "${sender}".\nI dati non sono stati certificati: il messaggio originale è in allegato.\n`
      : `Messaggio di posta certificata\n\nIl giorno ${issuedAt.day} alle ore ${issuedAt.time} (${issuedAt.zone}) il messaggio\n"${subject}" è stato inviato da "${sender}"\nindirizzato a: ${ACCOUNT}\nIl messaggio originale è incluso in allegato.\nIdentificativo messaggio: ${identificativo}\n`;
  const headers = [
    `Date: ${rfc2822Date(issuedAt)}`,
    `From: "Per conto di: ${sender}" <posta-certificata@${GESTORE_DOMAIN}>`,
    `Reply-To: ${sender}`,
    `To: ${ACCOUNT}`,
    `Subject: ${prefix}${subject}`,
    `Message-ID: <${identificativo}>`,
    `X-Trasporto: ${transport}`,
    `X-Riferimento-Message-ID: ${messageId}`,
  ];
  return signedMessage({
    headers,
    text,
    daticert: daticertType === null ? null : daticertXml(fields),
    original,
    boundary: identificativo.replace(/[^A-Za-z0-9]/g, '').slice(0, 40),
  });
}
