import { describe, expect, it } from 'vitest';
import { isAddrSpec, parseMailbox } from './address.js';

describe('addr-spec validation', () => {
  it.each([
    'user@example.com',
    'first.last+tag@sub.example.co.uk',
    "o'brien@example.ie",
    '"john doe"@example.com',
    'użytkownik@przykład.pl',
    '用户@例子.广告',
    'user@[192.0.2.1]',
  ])('accepts %s', (address) => expect(isAddrSpec(address)).toBe(true));

  it.each([
    '',
    'plainaddress',
    '@example.com',
    'user@',
    'user@localhost',
    'user@@example.com',
    'user.@example.com',
    '.user@example.com',
    'us..er@example.com',
    'user@exa mple.com',
    'user@-example.com',
    'user@example.com\r\nBcc: victim@example.com',
    'user\n@example.com',
    'a'.repeat(65) + '@example.com',
    'user@' + 'a'.repeat(250) + '.com',
    'user@[300.1.1.1]',
    '<user@example.com>',
  ])('refuses %j', (address) => expect(isAddrSpec(address)).toBe(false));
});

describe('mailbox parsing', () => {
  it('reads a bare address and a display-name form', () => {
    expect(parseMailbox('user@example.com')).toEqual({ name: null, address: 'user@example.com' });
    expect(parseMailbox('ACME Billing <billing@acme.example>')).toEqual({
      name: 'ACME Billing',
      address: 'billing@acme.example',
    });
    expect(parseMailbox('"Doe, John" <john@example.com>')).toEqual({ name: 'Doe, John', address: 'john@example.com' });
  });

  it('refuses header injection and nested brackets', () => {
    expect(parseMailbox('Evil\r\nBcc: x@example.com <a@example.com>')).toBeNull();
    expect(parseMailbox('A <b@example.com> <c@example.com>')).toBeNull();
    expect(parseMailbox('Name <not an address>')).toBeNull();
  });
});
