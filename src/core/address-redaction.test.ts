import { describe, expect, it } from 'vitest';
import { redactAddresses, redactDiagnostics, redactedText } from './address-redaction.js';

describe('redactAddresses', () => {
  it.each([
    // Postfix, angle-bracketed.
    [
      '550 5.1.1 <ann@example.net>: Recipient address rejected: User unknown in virtual mailbox table',
      '550 5.1.1 <…@example.net>: Recipient address rejected: User unknown in virtual mailbox table',
    ],
    // Exchange Online, bare.
    [
      '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient ann.rossi@contoso.com not found by SMTP address lookup',
      '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient …@contoso.com not found by SMTP address lookup',
    ],
    // Gmail's multi-line reply, the address ending a sentence.
    [
      "550-5.1.1 The email account that you tried to reach does not exist. Please try double-checking the recipient's email address ann@gmail.com.",
      "550-5.1.1 The email account that you tried to reach does not exist. Please try double-checking the recipient's email address …@gmail.com.",
    ],
    // Yahoo, in parentheses.
    [
      "554 delivery error: dd This user doesn't have a yahoo.com account (ann_r+news@yahoo.com) [0] - mta1003.mail.ir2.yahoo.com",
      "554 delivery error: dd This user doesn't have a yahoo.com account (…@yahoo.com) [0] - mta1003.mail.ir2.yahoo.com",
    ],
    // An envelope command and a Postfix log field.
    ['RCPT TO:<Ann.Rossi@Example.NET> 452 4.2.2 Mailbox full', 'RCPT TO:<…@Example.NET> 452 4.2.2 Mailbox full'],
    [
      'to=<ann@example.net>, relay=mx.example.net[192.0.2.1]:25',
      'to=<…@example.net>, relay=mx.example.net[192.0.2.1]:25',
    ],
    // Quoted local parts, with a space and with an escaped quote.
    ['550 5.1.1 <"ann rossi"@example.net>: unknown', '550 5.1.1 <…@example.net>: unknown'],
    ['550 <"ann\\"r"@example.net> unknown', '550 <…@example.net> unknown'],
    // Several addresses, and one in single quotes.
    [
      "550 5.7.1 'ann@example.net' and bob@example.org refused; forwarded from carl@mx.example.com",
      "550 5.7.1 '…@example.net' and …@example.org refused; forwarded from …@mx.example.com",
    ],
    // UTF-8 addresses (RFC 6531), in brackets, in guillemets and bare.
    ['553 5.6.7 <josé.müller@exämple.de>: SMTPUTF8 required', '553 5.6.7 <…@exämple.de>: SMTPUTF8 required'],
    ['550 «用户@例子.广告» inconnu', '550 «…@例子.广告» inconnu'],
    ['550 Ошибка: пользователь@почта.рф не найден', '550 Ошибка: …@почта.рф не найден'],
    // An address literal as the domain.
    ['550 <ann@[192.0.2.7]> no such user', '550 <…@[192.0.2.7]> no such user'],
  ])('hides the person in %j', (text, redacted) => {
    expect(redactAddresses(text)).toBe(redacted);
    expect(redactAddresses(text)).not.toMatch(/ann|josé|用户|пользователь|bob@|carl@/u);
  });

  it.each([
    '421 4.7.0 Try again later, closing connection.',
    '451 4.3.0 Temporary lookup failure @ mx.example.net',
    'user @ example.net',
    '550 5.7.1 Service unavailable; client [192.0.2.1] blocked using zen.spamhaus.org',
    '',
  ])('leaves a text without an address as it was: %j', (text) => {
    expect(redactAddresses(text)).toBe(text);
  });

  it('is stable: a redacted text redacts to itself', () => {
    const once = redactAddresses('550 5.1.1 <ann@example.net>: unknown, see "x y"@example.org');
    expect(once).toBe('550 5.1.1 <…@example.net>: unknown, see …@example.org');
    expect(redactAddresses(once)).toBe(once);
  });

  it('reads a long word without an address in linear time', () => {
    const text = `${'a'.repeat(200_000)} @ ${'b'.repeat(200_000)}@`;
    const started = performance.now();
    expect(redactAddresses(text)).toBe(text);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('redactedText and redactDiagnostics', () => {
  it('keep an absent text absent', () => {
    expect(redactedText(null)).toBeNull();
    expect(redactedText(undefined)).toBeNull();
    expect(redactedText('<ann@example.net> unknown')).toBe('<…@example.net> unknown');
  });

  it("redact an event's diagnostic fields and leave the others, the recipient included, to their own rules", () => {
    const data = {
      bounce_reason: '550 <ann@example.net> unknown',
      error: 'no-dest: ann@pec.example.it',
      error_detail: 'destinatario ann@pec.example.it sconosciuto',
      reason: 'ann@example.net',
      recipient: 'ann@example.net',
      reply_code: 550,
    };
    expect(redactDiagnostics(data)).toEqual({
      bounce_reason: '550 <…@example.net> unknown',
      error: 'no-dest: …@pec.example.it',
      error_detail: 'destinatario …@pec.example.it sconosciuto',
      reason: '…@example.net',
      recipient: 'ann@example.net',
      reply_code: 550,
    });
    const plain = { next_attempt_ts: 5 };
    expect(redactDiagnostics(plain)).toBe(plain);
  });
});
