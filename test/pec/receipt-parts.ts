/**
 * The parts of a PEC receipt as the technical rules (DM 2 novembre 2005)
 * describe them: the certification data (daticert.xml), the Italian words of
 * the human-readable part, and the subject prefixes. Written for this project
 * from the published format; no real provider's or person's mail.
 */
import type { PecAddressee, PecReceiptType } from '../../src/core/pec/pec.js';

/** daticert's `<data>`: as the gestore writes it, so tests can state zones and days exactly. */
export interface PecDate {
  day: string;
  time: string;
  zone: string;
}

export type DaticertType = PecReceiptType | 'posta-certificata' | (string & {});

export interface DaticertFields {
  tipo: DaticertType;
  error: string;
  sender: string;
  addressees: PecAddressee[];
  originalSubject: string;
  issuer: string;
  issuedAt: PecDate;
  identificativo: string;
  msgid: string;
  receiptKind: string | null;
  recipient: string | null;
  errorDetail: string | null;
}

export const xmlEscape = (text: string): string =>
  text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');

/** The order of elements is the DTD's (postacert.dtd): intestazione, then dati. */
export function daticertXml(fields: DaticertFields): string {
  const addressees = fields.addressees.map(
    (addressee) =>
      `    <destinatari tipo="${addressee.certified ? 'certificato' : 'esterno'}">${xmlEscape(addressee.address)}</destinatari>`,
  );
  const optional = [
    fields.receiptKind === null ? null : `    <ricevuta tipo="${xmlEscape(fields.receiptKind)}" />`,
    fields.recipient === null ? null : `    <consegna>${xmlEscape(fields.recipient)}</consegna>`,
    fields.errorDetail === null ? null : `    <errore-esteso>${xmlEscape(fields.errorDetail)}</errore-esteso>`,
  ].filter((line): line is string => line !== null);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE postacert SYSTEM "Postacert.dtd">',
    `<postacert tipo="${xmlEscape(fields.tipo)}" errore="${xmlEscape(fields.error)}">`,
    '  <intestazione>',
    `    <mittente>${xmlEscape(fields.sender)}</mittente>`,
    ...addressees,
    `    <risposte>${xmlEscape(fields.sender)}</risposte>`,
    `    <oggetto>${xmlEscape(fields.originalSubject)}</oggetto>`,
    '  </intestazione>',
    '  <dati>',
    `    <gestore-emittente>${xmlEscape(fields.issuer)}</gestore-emittente>`,
    `    <data zona="${xmlEscape(fields.issuedAt.zone)}">`,
    `      <giorno>${xmlEscape(fields.issuedAt.day)}</giorno>`,
    `      <ora>${xmlEscape(fields.issuedAt.time)}</ora>`,
    '    </data>',
    `    <identificativo>${xmlEscape(fields.identificativo)}</identificativo>`,
    `    <msgid>${xmlEscape(fields.msgid)}</msgid>`,
    ...optional,
    '  </dati>',
    '</postacert>',
    '',
  ].join('\n');
}

/** The subject prefix the gestore writes for each type; a virus error has its own wording. */
export function subjectPrefix(type: PecReceiptType, error: string): string {
  const virus = error === 'virus';
  switch (type) {
    case 'accettazione':
      return 'ACCETTAZIONE: ';
    case 'non-accettazione':
      return virus ? 'AVVISO DI NON ACCETTAZIONE PER VIRUS: ' : 'AVVISO DI NON ACCETTAZIONE: ';
    case 'presa-in-carico':
      return 'PRESA IN CARICO: ';
    case 'avvenuta-consegna':
      return 'CONSEGNA: ';
    case 'errore-consegna':
      return virus ? 'AVVISO DI MANCATA CONSEGNA PER VIRUS: ' : 'AVVISO DI MANCATA CONSEGNA: ';
    case 'preavviso-errore-consegna':
      return 'AVVISO DI MANCATA CONSEGNA PER SUP. TEMPO MASSIMO: ';
    case 'rilevazione-virus':
      return 'PROBLEMA DI SICUREZZA: ';
  }
}

/** What daticert's `errore` says when the test does not choose. */
export function defaultError(type: PecReceiptType): string {
  switch (type) {
    case 'non-accettazione':
      return 'altro';
    case 'errore-consegna':
      return 'no-dest';
    case 'preavviso-errore-consegna':
      return 'altro';
    case 'rilevazione-virus':
      return 'virus';
    default:
      return 'nessuno';
  }
}

const TITLES: Record<PecReceiptType, string> = {
  accettazione: 'Ricevuta di accettazione',
  'non-accettazione': 'Avviso di non accettazione',
  'presa-in-carico': 'Ricevuta di presa in carico',
  'avvenuta-consegna': 'Ricevuta di avvenuta consegna',
  'errore-consegna': 'Avviso di mancata consegna',
  'preavviso-errore-consegna': 'Avviso di mancata consegna entro le 12 ore',
  'rilevazione-virus': 'Avviso di rilevazione virus',
};

const OUTCOMES: Record<PecReceiptType, string> = {
  accettazione: 'è stato accettato dal sistema ed inoltrato.',
  'non-accettazione': 'non è stato accettato dal sistema e non è stato inoltrato.',
  'presa-in-carico': 'è stato preso in carico dal gestore del destinatario.',
  'avvenuta-consegna': 'è stato consegnato nella casella di destinazione.',
  'errore-consegna': 'non è stato consegnato nella casella di destinazione per il seguente errore:',
  'preavviso-errore-consegna':
    "non risulta ancora consegnato nella casella di destinazione entro le 12 ore dall'invio.",
  'rilevazione-virus': 'contiene un virus informatico e non è stato consegnato.',
};

/** The human-readable part: what a person reading the PEC mailbox sees. */
export function receiptText(type: PecReceiptType, fields: DaticertFields): string {
  const to = fields.recipient ?? fields.addressees.map((addressee) => addressee.address).join(', ');
  return [
    TITLES[type],
    '',
    `Il giorno ${fields.issuedAt.day} alle ore ${fields.issuedAt.time} (${fields.issuedAt.zone}) il messaggio`,
    `"${fields.originalSubject}" proveniente da "${fields.sender}"`,
    `ed indirizzato a: ${to}`,
    OUTCOMES[type],
    ...(fields.errorDetail === null ? [] : [`Errore: ${fields.errorDetail}`]),
    `Identificativo messaggio: ${fields.identificativo}`,
    '',
  ].join('\n');
}
