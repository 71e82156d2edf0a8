/**
 * RFC 2047 encoded-words (`=?utf-8?B?...?=`), decoded for display and search
 * (the stored subject); the relayed bytes are never changed.
 *
 * libmime (nodemailer's, already underneath mailparser and imapflow) does the
 * decoding: it joins adjacent words (RFC 2047 §6.2), reads RFC 2231 language
 * suffixes and knows the legacy charsets (ISO-2022-JP, GB2312, ...) through
 * iconv-lite. A word it cannot read is left as it was written.
 */
import libmime from 'libmime';

export function decodeEncodedWords(text: string): string {
  if (!text.includes('=?')) return text;
  try {
    return libmime.decodeWords(text);
  } catch {
    return text;
  }
}
