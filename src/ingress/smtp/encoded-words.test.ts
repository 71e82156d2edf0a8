import { describe, expect, it } from 'vitest';
import { decodeEncodedWords } from './encoded-words.js';

describe('decodeEncodedWords', () => {
  it('decodes B and Q words and drops the whitespace between adjacent words (RFC 2047 §6.2)', () => {
    expect(decodeEncodedWords('=?utf-8?B?w6nDqA==?= =?utf-8?Q?_caf=C3=A9?=')).toBe('éè café');
    expect(decodeEncodedWords('a =?utf-8?q?x?=  =?utf-8?q?y?= b')).toBe('a xy b');
  });

  it('reads legacy charsets and an RFC 2231 language suffix', () => {
    expect(decodeEncodedWords('=?ISO-2022-JP?B?GyRCJUYlOSVIGyhC?=')).toBe('テスト');
    expect(decodeEncodedWords('=?iso-8859-1?Q?caf=E9?= and =?windows-1252?Q?=80?=')).toBe('café and €');
    expect(decodeEncodedWords('=?utf-8*en?Q?hi_there?=')).toBe('hi there');
  });

  it('leaves plain text and an unterminated word as written', () => {
    expect(decodeEncodedWords('plain = text ?= here')).toBe('plain = text ?= here');
    expect(decodeEncodedWords('=?utf-8?B?w6k')).toBe('=?utf-8?B?w6k');
  });
});
