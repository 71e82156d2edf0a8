/**
 * The subject prefixes the technical rules (DM 2 novembre 2005) give each PEC
 * receipt: the last way to know a receipt's type, when neither X-Ricevuta nor
 * daticert.xml says it. Pure; the subject comes MIME-decoded.
 */
import type { PecReceiptType } from '../core/pec/index.js';

/**
 * Each prefix ends with its colon, so none is a prefix of another
 * ("AVVISO DI MANCATA CONSEGNA:" does not match "AVVISO DI MANCATA CONSEGNA PER VIRUS:").
 * Not receipts, so absent: "POSTA CERTIFICATA:" (a transport envelope) and
 * "ANOMALIA MESSAGGIO:" (mail the gestore could not certify).
 */
const PREFIXES: ReadonlyArray<readonly [string, PecReceiptType]> = [
  ['ACCETTAZIONE:', 'accettazione'],
  ['AVVISO DI NON ACCETTAZIONE:', 'non-accettazione'],
  ['AVVISO DI NON ACCETTAZIONE PER VIRUS:', 'non-accettazione'],
  ['PRESA IN CARICO:', 'presa-in-carico'],
  ['CONSEGNA:', 'avvenuta-consegna'],
  ['AVVISO DI MANCATA CONSEGNA:', 'errore-consegna'],
  ['AVVISO DI MANCATA CONSEGNA PER VIRUS:', 'errore-consegna'],
  // Ambiguous: the 12-hour notice (preavviso) and the 24-hour final notice of a
  // delivery that timed out carry this same wording. Read alone it is taken for
  // the warning, the weaker claim; X-Ricevuta or daticert decide when present.
  ['AVVISO DI MANCATA CONSEGNA PER SUP. TEMPO MASSIMO:', 'preavviso-errore-consegna'],
  ['PROBLEMA DI SICUREZZA:', 'rilevazione-virus'],
];

/** Longer than any prefix: the rest of a subject never matters. */
const HEAD_CHARS = 80;

/** The receipt type a subject's prefix names, case-insensitive and with any run of whitespace as one space. */
export function receiptTypeBySubject(subject: string): PecReceiptType | null {
  const head = subject
    .slice(0, HEAD_CHARS * 2)
    .replace(/\s+/g, ' ')
    .trimStart()
    .slice(0, HEAD_CHARS)
    .toUpperCase();
  return PREFIXES.find(([prefix]) => head.startsWith(prefix))?.[1] ?? null;
}
