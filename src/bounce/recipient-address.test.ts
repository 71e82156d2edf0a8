import { describe, expect, it } from 'vitest';
import { decodeUnitext, decodeXtext, normaliseRecipient } from './recipient-address.js';

// Values written for this test from RFC 3464 §2.3.1-2.3.2, RFC 3461 §4 and RFC 6533 §3.
describe("a report's recipient value as one comparable address", () => {
  it('strips the address type, brackets, a mailto: and a trailing dot, and lower-cases', () => {
    expect(normaliseRecipient('rfc822; <Ann.Lee@Example.NET.>')).toBe('ann.lee@example.net');
    expect(normaliseRecipient('RFC822;bob@example.org')).toBe('bob@example.org');
    expect(normaliseRecipient('mailto:carol@example.com')).toBe('carol@example.com');
    expect(normaliseRecipient('"Dan Brown" <dan@example.com>')).toBe('dan@example.com');
    expect(normaliseRecipient('x-unix; |/usr/local/bin/filter erin@example.net')).toBe('erin@example.net');
  });

  it('decodes an xtext ORCPT (RFC 3461 §4) only where the value is xtext', () => {
    expect(normaliseRecipient('rfc822;ann+2Bnews@example.net', true)).toBe('ann+news@example.net');
    expect(decodeXtext('a+3Db@example.net')).toBe('a=b@example.net');
    // A sub-address that is not xtext stays as written.
    expect(normaliseRecipient('rfc822;ann+news@example.net', true)).toBe('ann+news@example.net');
    expect(normaliseRecipient('rfc822;ann+2Bnews@example.net')).toBe('ann+2bnews@example.net');
  });

  it('decodes a utf-8 address (RFC 6533 §3) and keeps it whole', () => {
    expect(decodeUnitext('jos\\x{E9}@example.net')).toBe('josé@example.net');
    expect(normaliseRecipient('utf-8; jos\\x{E9}@example.net')).toBe('josé@example.net');
  });

  it('is null when the value holds no address', () => {
    expect(normaliseRecipient('rfc822; ')).toBeNull();
    expect(normaliseRecipient(undefined)).toBeNull();
    expect(normaliseRecipient('unknown')).toBeNull();
  });
});
