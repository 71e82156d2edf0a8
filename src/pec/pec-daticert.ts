/**
 * A PEC message's certification data (daticert.xml, DM 2 novembre 2005 and
 * its postacert.dtd), read with fast-xml-parser: what kind of message the
 * gestore says it is and the facts it certifies. Knows nothing of MIME; never
 * throws (an unreadable or oversized file is null).
 */
import { XMLParser } from 'fast-xml-parser';
import type { PecAddressee } from '../core/pec/index.js';
import { pecInstant } from './pec-instant.js';

/** A daticert.xml is a few kilobytes; anything near this is not one and is not worth parsing. */
export const MAX_DATICERT_BYTES = 1024 * 1024;
/** Longest text kept from one element: identifiers, addresses and a subject are far shorter. */
const MAX_FIELD_CHARS = 4096;

export interface Daticert {
  /** `<postacert tipo>`, lower-cased: a receipt type, or `posta-certificata` for a transport envelope. */
  tipo: string | null;
  error: string | null;
  identificativo: string | null;
  msgid: string | null;
  recipient: string | null;
  addressees: PecAddressee[];
  errorDetail: string | null;
  issuer: string | null;
  issuedAt: number | null;
  receiptKind: string | null;
  originalSubject: string | null;
}

type XmlNode = Record<string, unknown>;

/**
 * The limits bound the work on hostile XML: nesting (the DTD is three levels
 * deep), and DOCTYPE entities, whose expansion (the "billion laughs") is
 * capped in count and size. Values stay strings (no number coercion of ids);
 * htmlEntities also decodes numeric character references (`&#224;`), which
 * are plain XML.
 */
const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  htmlEntities: true,
  maxNestedTags: 16,
  processEntities: {
    enabled: true,
    maxEntityCount: 16,
    maxEntitySize: 1024,
    maxTotalExpansions: 1000,
    maxExpandedLength: 64 * 1024,
  },
  isArray: (name) => name === 'destinatari',
});

const isNode = (value: unknown): value is XmlNode =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** An element repeated where the DTD allows one: the first counts. */
const single = (value: unknown): unknown => (Array.isArray(value) ? value[0] : value);

function child(node: unknown, name: string): XmlNode | null {
  if (!isNode(node)) return null;
  const found = single(node[name]);
  return isNode(found) ? found : null;
}

/** An element's text (with or without attributes), trimmed; null when empty or not text. */
function text(value: unknown): string | null {
  const found = single(value);
  const raw = isNode(found) ? found['#text'] : found;
  if (typeof raw !== 'string' && typeof raw !== 'number') return null;
  const trimmed = String(raw).trim();
  return trimmed === '' || trimmed.length > MAX_FIELD_CHARS ? null : trimmed;
}

const attribute = (node: XmlNode | null, name: string): string | null =>
  node === null ? null : text(node[`@${name}`]);
const lower = (value: string | null): string | null => (value === null ? null : value.toLowerCase());

/** The XML declaration's encoding: gestori write UTF-8, a few ISO-8859-1. */
function decode(bytes: Buffer): string {
  const head = bytes.subarray(0, 200).toString('latin1');
  const latin = /^\s*<\?xml[^>]{0,150}encoding\s*=\s*["'](iso-8859-1|iso-8859-15|latin1|windows-1252)["']/i.test(head);
  return latin ? new TextDecoder('windows-1252').decode(bytes) : bytes.toString('utf8');
}

function addresseesOf(header: XmlNode | null): PecAddressee[] {
  const listed = header === null ? [] : header['destinatari'];
  const entries = Array.isArray(listed) ? listed : [];
  return entries.flatMap((entry: unknown): PecAddressee[] => {
    const address = text(entry);
    if (address === null) return [];
    // `certificato`: a PEC mailbox; `esterno`: ordinary mail, where no delivery receipt will come.
    const tipo = isNode(entry) ? lower(text(entry['@tipo'])) : null;
    return [{ address, certified: tipo !== 'esterno' }];
  });
}

function issuedAtOf(data: XmlNode | null): number | null {
  if (data === null) return null;
  const day = text(data['giorno']);
  const time = text(data['ora']);
  const zone = attribute(data, 'zona');
  return day === null || time === null || zone === null ? null : pecInstant(day, time, zone);
}

/** The certification data of one daticert.xml, or null when it is too big, not XML, or no postacert. */
export function readDaticert(bytes: Buffer): Daticert | null {
  if (bytes.length > MAX_DATICERT_BYTES) return null;
  let document: unknown;
  try {
    document = parser.parse(decode(bytes));
  } catch {
    return null;
  }
  const root = child(document, 'postacert');
  if (root === null) return null;
  const header = child(root, 'intestazione');
  const data = child(root, 'dati');
  const error = lower(attribute(root, 'errore'));
  return {
    tipo: lower(attribute(root, 'tipo')),
    error: error === 'nessuno' ? null : error,
    identificativo: text(data?.['identificativo']),
    msgid: text(data?.['msgid']),
    recipient: text(data?.['consegna']),
    addressees: addresseesOf(header),
    errorDetail: text(data?.['errore-esteso']),
    issuer: text(data?.['gestore-emittente']),
    issuedAt: issuedAtOf(child(data, 'data')),
    receiptKind: lower(attribute(child(data, 'ricevuta'), 'tipo')),
    originalSubject: text(header?.['oggetto']),
  };
}
