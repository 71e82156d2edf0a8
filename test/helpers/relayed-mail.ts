/**
 * Reading what the sink received, to compare it with what a client sent: the
 * header section as a list of (name, raw value) after unfolding, and the
 * decoded fields through mailparser (a parser nobody on the team wrote).
 */
import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser';

export interface HeaderField {
  /** As written, case kept. */
  name: string;
  value: string;
}

/** The header fields of an RFC 5322 message, unfolded (RFC 5322 §2.2.3); a line without a colon is kept with name ''. */
export function headerFields(raw: Buffer): HeaderField[] {
  const text = raw.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  const head = end === -1 ? text : text.slice(0, end);
  return head
    .replace(/\r\n(?=[ \t])/g, '')
    .split('\r\n')
    .map((line) => {
      const colon = line.indexOf(':');
      return colon === -1
        ? { name: '', value: line }
        : { name: line.slice(0, colon), value: line.slice(colon + 1).trim() };
    });
}

/** The value of the first field called `name` (any case), or undefined. */
export function fieldValue(fields: HeaderField[], name: string): string | undefined {
  return fields.find((field) => field.name.toLowerCase() === name.toLowerCase())?.value;
}

const ENCODED_WORD = /=\?([^?]+)\?([bqBQ])\?([^?]*)\?=/g;

/**
 * An unstructured header value with its RFC 2047 encoded words decoded
 * (mailparser leaves those of unknown headers alone). Whitespace between two
 * encoded words is dropped (§6.2) and their bytes are joined before decoding,
 * since an encoder may split one character across words.
 */
export function decodeWords(value: string): string {
  let out = '';
  let pending: Buffer[] = [];
  let last = 0;
  const flush = (): void => {
    if (pending.length > 0) out += Buffer.concat(pending).toString('utf8');
    pending = [];
  };
  for (const match of value.matchAll(ENCODED_WORD)) {
    const between = value.slice(last, match.index);
    if (!(pending.length > 0 && /^[ \t]*$/.test(between))) {
      flush();
      out += between;
    }
    const [, , encoding = '', text = ''] = match;
    pending.push(
      encoding.toLowerCase() === 'b'
        ? Buffer.from(text, 'base64')
        : Buffer.from(
            text
              .replace(/_/g, ' ')
              .replace(/=([0-9a-fA-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))),
            'latin1',
          ),
    );
    last = (match.index ?? 0) + match[0].length;
  }
  flush();
  return out + value.slice(last);
}

export const parseRelayed = (raw: Buffer): Promise<ParsedMail> =>
  simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true });

/** Every address of a parsed address header, lower-cased, in order. */
export function addressesOf(header: AddressObject | AddressObject[] | undefined): string[] {
  const objects = header === undefined ? [] : Array.isArray(header) ? header : [header];
  return objects.flatMap((object) =>
    object.value.flatMap(function flatten(entry): string[] {
      return entry.group === undefined ? [(entry.address ?? '').toLowerCase()] : entry.group.flatMap(flatten);
    }),
  );
}

/** The first message a sink received with this X-Genro-Mail-ID, raw; undefined before it came. */
export const relayedWithId = (sink: { messages: readonly { raw: Buffer }[] }, id: string): Buffer | undefined =>
  sink.messages.find((received) => received.raw.includes(`X-Genro-Mail-ID: ${id}\r\n`))?.raw;
