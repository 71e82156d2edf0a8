import { describe, expect, it } from 'vitest';
import { CLIENT_ID_MAX_LENGTH, isClientId, MAIL_ID_FIELD, MAIL_ID_HEADER } from './client-id.js';

describe('client id', () => {
  it('takes printable ASCII without spaces, 1 to 255 characters', () => {
    expect(isClientId('invoice-2026/07:#1')).toBe(true);
    expect(isClientId('x'.repeat(CLIENT_ID_MAX_LENGTH))).toBe(true);
  });

  it('refuses what would not fit on a header line: empty, too long, spaces, controls, non-ASCII', () => {
    for (const bad of ['', 'x'.repeat(CLIENT_ID_MAX_LENGTH + 1), 'has space', 'tab\there', 'line\r\nBcc: x', 'caffè'])
      expect(isClientId(bad)).toBe(false);
  });

  it('is carried in X-Genro-Mail-ID, looked up lower-cased', () => {
    expect(MAIL_ID_HEADER).toBe('X-Genro-Mail-ID');
    expect(MAIL_ID_FIELD).toBe('x-genro-mail-id');
  });
});
