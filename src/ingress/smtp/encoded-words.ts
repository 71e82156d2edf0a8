/**
 * RFC 2047 encoded-words (`=?utf-8?B?...?=`), decoded for display and search
 * (the stored subject); the relayed bytes are never changed. An unknown
 * charset or a malformed word is left as it was written.
 */

const WORD = /=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=/g;
/** Whitespace between two adjacent encoded-words is not part of the text (RFC 2047 §6.2). */
const BETWEEN_WORDS = /(\?=)\s+(?==\?)/g;

export function decodeEncodedWords(text: string): string {
  if (!text.includes('=?')) return text;
  return text.replace(BETWEEN_WORDS, '$1').replace(WORD, (word, charset: string, encoding: string, data: string) => {
    const bytes = encoding.toUpperCase() === 'B' ? Buffer.from(data, 'base64') : decodeQ(data);
    try {
      // RFC 2231 language suffix: utf-8*en
      return new TextDecoder(charset.split('*')[0] ?? charset, { fatal: false }).decode(bytes);
    } catch {
      return word;
    }
  });
}

function decodeQ(data: string): Buffer {
  const text = data.replace(/_/g, ' ');
  const bytes: number[] = [];
  for (let index = 0; index < text.length; index += 1) {
    const hex = text[index] === '=' ? text.slice(index + 1, index + 3) : '';
    if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      index += 2;
    } else {
      bytes.push(text.charCodeAt(index) & 0xff);
    }
  }
  return Buffer.from(bytes);
}
