import { describe, expect, it } from 'vitest';
import { tlsModeOfUseTls } from './account.js';

describe("genro-mail-proxy's use_tls", () => {
  it('is implicit TLS on port 465, STARTTLS on any other port, and plain text when false', () => {
    expect(tlsModeOfUseTls(true, 465)).toBe('implicit');
    expect(tlsModeOfUseTls(true, 587)).toBe('starttls');
    expect(tlsModeOfUseTls(true, 25)).toBe('starttls');
    expect(tlsModeOfUseTls(false, 465)).toBe('none');
    expect(tlsModeOfUseTls(false, 587)).toBe('none');
  });

  it('means implicit TLS when no port is known, which then defaults to 465', () => {
    expect(tlsModeOfUseTls(true, null)).toBe('implicit');
    expect(tlsModeOfUseTls(false, null)).toBe('none');
  });
});
