import { describe, expect, it } from 'vitest';
import { embeddedHeader, normaliseMessageId } from './pec-headers.js';

describe('normaliseMessageId', () => {
  it('gives one <...> form', () => {
    expect(normaliseMessageId('<a@b>')).toBe('<a@b>');
    expect(normaliseMessageId('  a@b  ')).toBe('<a@b>');
    expect(normaliseMessageId('<a@b')).toBe('<a@b>');
    expect(normaliseMessageId('<<a@b>>')).toBe('<a@b>');
    expect(normaliseMessageId('<a@b> (comment)')).toBe('<a@b>');
    expect(normaliseMessageId('a@b (comment)')).toBe('<a@b>');
  });

  it('is null for nothing, and for an id longer than a header line may be', () => {
    expect(normaliseMessageId(null)).toBeNull();
    expect(normaliseMessageId(' <> ')).toBeNull();
    expect(normaliseMessageId(`<${'x'.repeat(999)}@b>`)).toBeNull();
    expect(normaliseMessageId('<'.repeat(1_000_000))).toBeNull();
  });
});

describe('embeddedHeader', () => {
  const message = Buffer.from(
    'From: a@b\r\nX-Genro-Mail-ID:\r\n\tm-1\r\nSubject: s\r\n\r\nX-Genro-Mail-ID: in-the-body\r\n',
  );

  it('reads a folded header of the message, case-insensitively', () => {
    expect(embeddedHeader(message, 'x-genro-mail-id')).toBe('m-1');
  });

  it('never reads the body', () => {
    expect(embeddedHeader(Buffer.from('From: a@b\n\nX-Genro-Mail-ID: body\n'), 'x-genro-mail-id')).toBeNull();
  });
});
