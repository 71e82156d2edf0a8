/**
 * The address we sent to, where a bounce names another mailbox or no proper
 * address at all: a forward or an alias (RFC 3464 §2.3.1-2.3.2: Final-Recipient
 * after it, Original-Recipient before), a source route (RFC 5321 §4.1.2,
 * Appendix C), a local delivery's spool file or pipe, a bare `@domain`, and a
 * report with no recipient field. Each message is written here from the format
 * it follows; LF and CRLF.
 */
import { describe, expect, it } from 'vitest';
import { analyseBounce } from '../../src/bounce/bounce-parser.js';
import { parseReportOf } from '../../src/bounce/parse-report.js';
import { dsnReportText } from '../helpers/bounce-mail.js';

const both = (text: string): Buffer[] => [
  Buffer.from(text, 'utf8'),
  Buffer.from(text.replace(/\r?\n/g, '\r\n'), 'utf8'),
];

async function printed(text: string): Promise<Array<{ recipient: string | null; alternates: string[] }>> {
  const found = [];
  for (const raw of both(text)) {
    const report = parseReportOf(await analyseBounce(raw));
    found.push({ recipient: report.recipient, alternates: report.recipients[0]?.alternates ?? [] });
  }
  return found;
}

const returned = (headers: string): string => `--B
Content-Type: message/rfc822

${headers}
From: App <app@acme.example>
Subject: Your receipt
Message-ID: <rcpt-7@acme.example>

Thanks.
`;

const report = (groupFields: string, original = ''): string => dsnReportText(groupFields, { original });

describe('the recipient of a forwarded or aliased message is the address we sent to', () => {
  it('prefers Original-Recipient to a Final-Recipient on another domain, and keeps that one as an alternate', async () => {
    const text = report(
      'Original-Recipient: rfc822;ann@example.net\nFinal-Recipient: rfc822;ann.lee@forward.example.org',
    );
    expect(await printed(text)).toEqual(
      Array(2).fill({ recipient: 'ann@example.net', alternates: ['ann.lee@forward.example.org'] }),
    );
  });

  it("takes the returned original's addressee when its first hop's envelope names it too and the report names a host-qualified mailbox", async () => {
    const original = returned(
      [
        'Received: from mx.example.net by store3.example.net for <ann@store3.example.net>; Mon, 2 Mar 2026 10:00:01 +0000',
        'Received: from relay.acme.example by mx.example.net for <ann@example.net>; Mon, 2 Mar 2026 10:00:00 +0000',
        'To: Ann <ann@example.net>',
      ].join('\n'),
    );
    const text = report('Final-Recipient: rfc822;ann@store3.example.net', original);
    expect(await printed(text)).toEqual(
      Array(2).fill({ recipient: 'ann@example.net', alternates: ['ann@store3.example.net'] }),
    );
  });
});

describe('never prints what is not an address', () => {
  it('reads the mailbox after a source route', async () => {
    const text = report('Final-Recipient: rfc822;<@hub.example.net,@mx.example.net:bea@example.net>');
    expect((await printed(text)).map((found) => found.recipient)).toEqual(['bea@example.net', 'bea@example.net']);
    // An internationalised mailbox (RFC 6533 §3), which the ASCII pattern does not find inside the route.
    const unicode = report('Final-Recipient: utf-8; <@hub.example.net:b\\x{E9}a@example.net>');
    expect((await printed(unicode)).map((found) => found.recipient)).toEqual(['béa@example.net', 'béa@example.net']);
  });

  it('names nobody for a spool file, a pipe or a bare @domain, and then takes the returned original', async () => {
    const original = returned(
      'Received: from relay.acme.example by mx.example.net for <cy@example.net>; Mon, 2 Mar 2026 10:00:00 +0000\nTo: cy@example.net',
    );
    for (const final of [
      'X-Unix; /var/spool/mail/cy',
      'rfc822; /var/mail/cy@mx.example.net',
      'rfc822; |/usr/bin/procmail@mx.example.net',
      'rfc822; @example.net',
    ]) {
      expect((await printed(report(`Final-Recipient: ${final}`))).map((found) => found.recipient)).toEqual([
        null,
        null,
      ]);
      expect((await printed(report(`Final-Recipient: ${final}`, original))).map((found) => found.recipient)).toEqual([
        'cy@example.net',
        'cy@example.net',
      ]);
    }
  });
});

describe('a report without a recipient field', () => {
  const noField = (
    prose: string,
    original = '',
  ): string => `From: Mail Delivery Subsystem <MAILER-DAEMON@mx.example.net>
To: app@acme.example
Subject: Returned mail: see transcript for details
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="B"

--B
Content-Type: text/plain

${prose}

--B
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.example.net

Action: failed
Status: 5.1.1

${original}--B--
`;

  it("takes the returned original's To", async () => {
    const text = noField('The message could not be delivered.', returned('To: Dee <dee@example.net>'));
    expect((await printed(text)).map((found) => found.recipient)).toEqual(['dee@example.net', 'dee@example.net']);
  });

  it('takes the address of a quoted RCPT TO', async () => {
    const text = noField(
      '   ----- Transcript of session follows -----\n>>> RCPT To:<eve@example.net>\n<<< 550 5.1.1 Mailbox unavailable',
    );
    expect((await printed(text)).map((found) => found.recipient)).toEqual(['eve@example.net', 'eve@example.net']);
  });
});
