/**
 * PEC (Posta Elettronica Certificata, Italy's certified mail): a PEC account
 * relays through a PEC provider (a "gestore"), which proves what happened to
 * each message with signed receipts ("ricevute") that arrive by mail in the
 * account's own mailbox. This module names them in core terms; the bounce room
 * reads them (bounce/pec-receipt-parser.ts) and the store records them.
 *
 * The receipt types are the values of the `X-Ricevuta` header of the technical
 * rules (DM 2 novembre 2005) and of the `tipo` attribute of their daticert.xml.
 */

export const PEC_RECEIPT_TYPES = [
  /** The sender's gestore accepted the message (ricevuta di accettazione). */
  'accettazione',
  /** The sender's gestore refused it (formal problem, virus): it left nobody's outbox. */
  'non-accettazione',
  /** The recipient's gestore took charge of it (presa in carico). */
  'presa-in-carico',
  /** Delivered into one recipient's mailbox (ricevuta di avvenuta consegna): the proof. */
  'avvenuta-consegna',
  /** Not delivered to one recipient (avviso di mancata consegna). */
  'errore-consegna',
  /** No delivery confirmed within 12 hours for one recipient: a warning, the error follows at 24. */
  'preavviso-errore-consegna',
  /** The recipient's gestore found a virus and did not deliver. */
  'rilevazione-virus',
] as const;
export type PecReceiptType = (typeof PEC_RECEIPT_TYPES)[number];

export const isPecReceiptType = (value: string): value is PecReceiptType =>
  (PEC_RECEIPT_TYPES as readonly string[]).includes(value);

/** One recipient daticert.xml names: `certificato` (a PEC mailbox) or `esterno` (ordinary mail). */
export interface PecAddressee {
  address: string;
  certified: boolean;
}

/** What the PEC parser finds in one message of a PEC mailbox. Every field is null when the receipt does not say. */
export interface PecReceiptFindings {
  /** Null: not a receipt (mail received by the PEC mailbox, a transport envelope, anything else). */
  type: PecReceiptType | null;
  /** How the type was known: the X-Ricevuta header, daticert.xml's `tipo`, or the subject's prefix (the fallback). */
  recognisedBy: 'header' | 'daticert' | 'subject' | null;
  /** The Message-ID of our original, in angle brackets: X-Riferimento-Message-ID, else daticert's <msgid>. */
  referencedMessageId: string | null;
  /** X-Genro-Mail-ID of our original: on the receipt itself or in the original a full receipt carries. */
  mailId: string | null;
  /** The gestore's own identifier of the message (daticert <identificativo>). */
  identificativo: string | null;
  /** The recipient the receipt is about (daticert <consegna>): consegna, errore, preavviso, virus; null for accettazione. */
  recipient: string | null;
  /** Every recipient daticert names (<destinatari>). */
  addressees: PecAddressee[];
  /** daticert's `errore` attribute when not `nessuno`: no-dest, no-dominio, virus, altro. */
  error: string | null;
  /** daticert <errore-esteso>: the gestore's words for it. */
  errorDetail: string | null;
  /** daticert <gestore-emittente>. */
  issuer: string | null;
  /** When the gestore says the event happened (daticert <data>), epoch ms. */
  issuedAt: number | null;
  /** X-TipoRicevuta or daticert <ricevuta tipo>: completa, breve, sintetica. */
  receiptKind: string | null;
  /** The original's subject as the receipt names it (daticert <oggetto>). */
  originalSubject: string | null;
}

export const NOT_A_RECEIPT: PecReceiptFindings = {
  type: null,
  recognisedBy: null,
  referencedMessageId: null,
  mailId: null,
  identificativo: null,
  recipient: null,
  addressees: [],
  error: null,
  errorDetail: null,
  issuer: null,
  issuedAt: null,
  receiptKind: null,
  originalSubject: null,
};

/** How a receipt was tied to our message (core/pec/plan.ts decides). */
export type PecMatchedBy = 'mail_id' | 'message_id' | 'identificativo';

/** One receipt as it is kept: the evidence, with what it was found to be about. */
export interface PecReceiptRecord {
  /** Names it in the API and in its event (a UUID). */
  receiptId: string;
  tenantId: string;
  accountId: string;
  mailbox: string;
  uidValidity: number;
  uid: number;
  receivedAt: number;
  findings: PecReceiptFindings;
  headerMessageId: string | null;
  subject: string | null;
  sizeBytes: number;
  /** The original bytes as the mailbox gave them; the first ones only when `complete` is false. */
  raw: Uint8Array;
  complete: boolean;
}

/** A receipt as it is read back (without its bytes). Instants are epoch ms. */
export interface PecReceiptListing {
  receiptId: string;
  tenantId: string;
  accountId: string;
  /** The client id of the message it is about, or null when none of ours fits it. */
  clientId: string | null;
  receiptType: string;
  recognisedBy: string;
  matchedBy: string | null;
  recipient: string | null;
  error: string | null;
  errorDetail: string | null;
  issuer: string | null;
  identificativo: string | null;
  /** The Message-ID header the receipt names as the one it is about. */
  referencedMessageId: string | null;
  /** The receipt's own Message-ID header. */
  headerMessageId: string | null;
  subject: string | null;
  issuedAt: number | null;
  receivedAt: number;
  sizeBytes: number;
  complete: boolean;
  sha256: string;
}

/** Which receipts a list reads. */
export interface PecReceiptFilter {
  /** Null: every tenant's (the admin token). */
  tenantId: string | null;
  /** The client id of the message; null for every receipt. */
  clientId: string | null;
  /** Older than this `seq` (paging), or null. */
  before: number | null;
  limit: number;
}

/** What the API and the console read of receipts (store/pec-receipts.ts). */
export interface PecReceiptReader {
  /** Newest first, each with its `seq` for paging; `tenantId` null: every tenant's. */
  list(filter: PecReceiptFilter): Array<PecReceiptListing & { seq: number }>;
  /** One receipt and its original bytes, within `tenantId` when given. */
  raw(receiptId: string, tenantId: string | null): { receipt: PecReceiptListing; raw: Buffer } | null;
}
