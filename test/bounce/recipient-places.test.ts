/**
 * Every place a bounce may name its failed recipient, each on a
 * message written here from the format it follows: RFC 3464 report fields
 * (Final-Recipient, Original-Recipient as xtext per RFC 3461), Exim's
 * X-Failed-Recipients, an Exchange-style NDR table in HTML only, an SMTP
 * transcript quoting RCPT TO, and the returned original's single To. LF and CRLF.
 */
import { describe, expect, it } from 'vitest';
import { analyseBounce } from '../../src/bounce/bounce-parser.js';
import { dsnReportText } from '../helpers/bounce-mail.js';

const both = (text: string): Buffer[] => [
  Buffer.from(text, 'utf8'),
  Buffer.from(text.replace(/\r?\n/g, '\r\n'), 'utf8'),
];

async function recipientOf(text: string): Promise<Array<string | null>> {
  const found = [];
  for (const raw of both(text)) found.push((await analyseBounce(raw)).recipients[0]?.recipient ?? null);
  return found;
}

const dsn = (groupFields: string): string => dsnReportText(groupFields, { reportingMta: 'mx.acme.example' });

describe('where a bounce names its failed recipient', () => {
  it('Final-Recipient, normalised: type, brackets and the case of the domain', async () => {
    expect(await recipientOf(dsn('Final-Recipient: RFC822; <Gina@Example.NET>'))).toEqual([
      'gina@example.net',
      'gina@example.net',
    ]);
  });

  it('Original-Recipient when Final-Recipient is missing, its xtext decoded', async () => {
    expect(await recipientOf(dsn('Original-Recipient: rfc822;hal+2Bnews@example.net'))).toEqual([
      'hal+news@example.net',
      'hal+news@example.net',
    ]);
  });

  it('X-Failed-Recipients when the bounce has no report', async () => {
    const text = `From: Mail Delivery System <Mailer-Daemon@mx.acme.example>
To: app@acme.example
X-Failed-Recipients: ida@example.org
Subject: Mail delivery failed: returning message to sender

This message was created automatically by mail delivery software.

A message that you sent could not be delivered to one or more of its
recipients. This is a permanent error.
`;
    expect(await recipientOf(text)).toEqual(['ida@example.org', 'ida@example.org']);
  });

  it("an NDR's HTML table when the NDR has no text part and no report", async () => {
    const text = `From: Microsoft Outlook <postmaster@acme.example>
To: app@acme.example
Subject: Undeliverable: Your receipt
MIME-Version: 1.0
Content-Type: text/html; charset=utf-8

<html><body><p>Delivery has failed to these recipients or groups:</p>
<table><tr><td><a href="mailto:jo@example.com">jo@example.com</a></td></tr></table>
<p>The email address you entered couldn't be found.</p>
<p>Diagnostic information for administrators:</p>
<p>Remote Server returned '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup'</p>
</body></html>
`;
    expect(await recipientOf(text)).toEqual(['jo@example.com', 'jo@example.com']);
  });

  it('the address of a quoted RCPT TO in the SMTP transcript', async () => {
    const text = `From: Mail Delivery Subsystem <MAILER-DAEMON@mx.acme.example>
To: app@acme.example
Subject: Returned mail: see transcript for details

   ----- The following addresses had permanent fatal errors -----
(reason: 550 5.1.1 Mailbox unavailable)

   ----- Transcript of session follows -----
... while talking to mx.example.net.:
>>> RCPT To:<kai@example.net>
<<< 550 5.1.1 Mailbox unavailable
`;
    expect(await recipientOf(text)).toEqual(['kai@example.net', 'kai@example.net']);
  });

  it("the returned original's To when it names one recipient, and no guess among several", async () => {
    const returned = (to: string): string => `From: MAILER-DAEMON@mx.acme.example
To: app@acme.example
Subject: failure notice
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="Q"

--Q
Content-Type: text/plain

Your message was not delivered: 550 mailbox unavailable.

--Q
Content-Type: message/rfc822

From: App <app@acme.example>
To: ${to}
Subject: Your receipt
Message-ID: <rcpt-9@acme.example>

Thanks.

--Q--
`;
    expect(await recipientOf(returned('Lea <lea@example.com>'))).toEqual(['lea@example.com', 'lea@example.com']);
    expect(await recipientOf(returned('lea@example.com, max@example.com'))).toEqual([null, null]);
  });
});
