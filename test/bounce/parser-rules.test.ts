/**
 * The general rules of the bounce parser, each on a message written here,
 * modelled on the formats (RFC 3464, SES notifications) and on the wording of
 * common MTAs; and its behaviour on hostile input.
 */
import { describe, expect, it } from 'vitest';
import { analyseBounce } from '../../src/bounce/bounce-parser.js';

const crlf = (text: string): Buffer => Buffer.from(text.replace(/\r?\n/g, '\r\n'), 'utf8');
const both = (text: string): Buffer[] => [Buffer.from(text, 'utf8'), crlf(text)];

const QUOTED_ORIGINAL = `Return-Path: <app@acme.example>
From: App <app@acme.example>
To: Dora <dora@example.com>
Subject: Your receipt
Message-ID: <rcpt-7@acme.example>

Thanks.
`;

describe('bounce parser rules', () => {
  it("gives a report group without a diagnostic the prose's words about its recipient", async () => {
    const text = `From: Mailer Daemon <MAILER-DAEMON@relay.acme.example>
To: app@acme.example
Subject: Delivery status notification: failed
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="R"

--R
Content-Type: text/plain

    An error has occurred while attempting to deliver a message for
    the following list of recipients:

eve@example.com: 552 5.2.2 <eve@example.com>: Recipient address rejected: Mailbox full
finn@example.com: 550 5.1.1 <finn@example.com>: Recipient address rejected: User unknown

--R
Content-Type: message/delivery-status

Reporting-MTA: dns; relay.acme.example

Final-Recipient: rfc822; eve@example.com
Action: failed
Status: 5.0.0

Final-Recipient: rfc822; finn@example.com
Action: failed
Status: 5.0.0

--R--
`;
    for (const raw of both(text)) {
      const { recipients } = await analyseBounce(raw);
      expect(recipients).toEqual([
        expect.objectContaining({
          recipient: 'eve@example.com',
          status: '5.2.2',
          replyCode: '552',
          reason: 'mailbox_full',
          bounceType: 'hard',
        }),
        expect.objectContaining({
          recipient: 'finn@example.com',
          status: '5.1.1',
          replyCode: '550',
          reason: 'user_unknown',
          bounceType: 'hard',
        }),
      ]);
    }
  });

  it('reads report fields from the text when the MIME boundaries never come, and a pipe recipient as its address', async () => {
    const text = `From: Mail Delivery Subsystem <MAILER-DAEMON@mx.example.net>
To: <app@acme.example>
Subject: Returned mail: Service unavailable
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="NEVER"

   ----- The following addresses had permanent fatal errors -----
<gus@example.net>

   ----- Transcript of session follows -----
554 <gus@example.net>... Service unavailable

Reporting-MTA: dns; mx.example.net

Final-Recipient: X-Unix; |/usr/bin/procmail -f- gus@example.net
Action: failed
Status: 5.5.0
`;
    for (const raw of both(text)) {
      const analysis = await analyseBounce(raw);
      expect(analysis.kind).toBe('bounce');
      expect(analysis.recipients[0]).toMatchObject({
        recipient: 'gus@example.net',
        status: '5.5.0',
        replyCode: '554',
        bounceType: 'hard',
      });
    }
  });

  it('reads a bounce forwarded inline with > quoting', async () => {
    const text = `From: Ann <ann@acme.example>
To: it@acme.example
Subject: Fwd: Returned mail: see transcript for details

Look at this one.

> ----- The following addresses had permanent fatal errors -----
> <hal@example.org>
>
> Final-Recipient: RFC822; hal@example.org
> Action: failed
> Status: 5.1.1
> Diagnostic-Code: SMTP; 550 5.1.1 <hal@example.org>... User unknown
`;
    const { recipients } = await analyseBounce(crlf(text));
    expect(recipients[0]).toMatchObject({
      recipient: 'hal@example.org',
      status: '5.1.1',
      reason: 'user_unknown',
      bounceType: 'hard',
    });
  });

  it('takes the failed address from X-Failed-Recipients, else from the returned original', async () => {
    const listed = `From: Mail Delivery System <Mailer-Daemon@relay.acme.example>
To: app@acme.example
Subject: Mail delivery failed: returning message to sender
X-Failed-Recipients: ivy@example.com

A message that you sent could not be delivered to one or more of its
recipients. This is a permanent error. Please contact postmaster@relay.acme.example for help.

------ This is a copy of the message, including all the headers. ------
${QUOTED_ORIGINAL}`;
    expect((await analyseBounce(crlf(listed))).recipients[0]).toMatchObject({
      recipient: 'ivy@example.com',
      bounceType: 'hard',
    });
    const unnamed = listed.replace('X-Failed-Recipients: ivy@example.com\n', '');
    expect((await analyseBounce(crlf(unnamed))).recipients[0]).toMatchObject({ recipient: 'dora@example.com' });
  });

  it('a prose warning that the message is still queued is a delay; a returned message without codes is hard', async () => {
    const warning = `From: Mail Delivery Subsystem <mailer-daemon@mail.example.net>
To: app@acme.example
Subject: Delivery Status Notification (Delay)

THIS IS A WARNING MESSAGE ONLY.
Delivery to the following recipient has been delayed:

     jo@example.com

Message will be retried for 2 more day(s)
`;
    const delayed = await analyseBounce(crlf(warning));
    expect(delayed.kind).toBe('delayed');
    expect(delayed.recipients[0]).toMatchObject({ recipient: 'jo@example.com', action: 'delayed', bounceType: 'soft' });

    const failure = `From: MAILER-DAEMON@mail.example.net
To: app@acme.example
Subject: Mail delivery failed

The following address failed:

<kim@example.com>

Reason:
delivery retry timeout exceeded
`;
    const failed = await analyseBounce(crlf(failure));
    expect(failed.kind).toBe('bounce');
    expect(failed.recipients[0]).toMatchObject({ recipient: 'kim@example.com', reason: 'expired', bounceType: 'hard' });
  });

  it('reads an SES bounce notification, also inside an SNS envelope', async () => {
    const inner =
      '{"notificationType":"Bounce","bounce":{"bounceType":"Permanent","bouncedRecipients":[{"emailAddress":"lea@example.com","action":"failed","status":"5.1.1","diagnosticCode":"smtp; 550 5.1.1 user unknown"}]},"mail":{"source":"app@acme.example"}}';
    const direct = `From: Notifications <no-reply@notifications.example>
To: app@acme.example
Subject: Notification Message
Content-Type: text/plain

${inner}
`;
    const wrapped = direct.replace(inner, `{"Type" : "Notification", "Message" : ${JSON.stringify(inner)}}`);
    for (const raw of [crlf(direct), crlf(wrapped)]) {
      const analysis = await analyseBounce(raw);
      expect(analysis.kind).toBe('bounce');
      expect(analysis.recipients[0]).toMatchObject({
        recipient: 'lea@example.com',
        status: '5.1.1',
        replyCode: '550',
        reason: 'user_unknown',
        bounceType: 'hard',
      });
    }
    expect((await analyseBounce(crlf(direct.replace('"Bounce"', '"Delivery"')))).kind).toBe('delivered');
  });

  it("reads an SES notification's bounce subtype when a recipient has no diagnostic (Amazon SES notification contents)", async () => {
    const notification = (subType: string): string => `From: Notifications <no-reply@notifications.example>
To: app@acme.example
Subject: Notification Message
Content-Type: text/plain

{"notificationType":"Bounce","bounce":{"bounceType":"Transient","bounceSubType":"${subType}","bouncedRecipients":[{"emailAddress":"mia@example.com"}]}}
`;
    const reasons = [];
    for (const subType of ['MailboxFull', 'MessageTooLarge', 'ContentRejected', 'General'])
      reasons.push((await analyseBounce(crlf(notification(subType)))).recipients[0]?.reason ?? null);
    expect(reasons).toEqual(['mailbox_full', 'message_too_large', 'policy_block', null]);
  });

  it("takes the returned original's own Message-ID, not one of a message it carries", async () => {
    const text = `From: MAILER-DAEMON@mx.example.net
To: app@acme.example
Subject: Undelivered Mail Returned to Sender
Message-ID: <same@acme.example>
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="B"

--B
Content-Type: message/delivery-status

Final-Recipient: rfc822; ned@example.net
Action: failed
Status: 5.1.1

--B
Content-Type: message/rfc822

From: app@acme.example
To: ned@example.net
Message-ID: <same@acme.example>
Content-Type: multipart/mixed; boundary="I"

--I
Content-Type: message/rfc822

Message-ID: <carried@elsewhere.example>

--I--
--B--
`;
    expect(await analyseBounce(crlf(text))).toMatchObject({ originalMessageId: '<same@acme.example>' });
  });

  it('mail that merely forwards a message as an attachment is not a bounce', async () => {
    const forward = `From: Max <max@example.com>
To: app@acme.example
Subject: have a look
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="F"

--F
Content-Type: text/plain

Here is the mail I talked about.

--F
Content-Type: message/rfc822

${QUOTED_ORIGINAL}
--F--
`;
    for (const raw of both(forward))
      expect(await analyseBounce(raw)).toMatchObject({ kind: 'not_bounce', originalMessageId: null, mailId: null });
  });

  it('reads an auto-reply by its encoded subject prefix, and ties no original to it', async () => {
    const reply = `From: Ines <ines@example.com>
To: app@acme.example
Subject: =?utf-8?Q?R=C3=A9ponse_automatique=3A_Your_receipt?=
In-Reply-To: <rcpt-7@acme.example>
Content-Type: text/plain; charset=utf-8

Je suis absente jusqu'au 3 avril.

> Message-ID: <rcpt-7@acme.example>
`;
    for (const raw of both(reply))
      expect(await analyseBounce(raw)).toMatchObject({ kind: 'auto_reply', originalMessageId: null, recipients: [] });
  });

  it('decodes ISO-2022-JP written as it is into a Diagnostic-Code, so the diagnostic reads as Japanese', async () => {
    // "ユーザー" and "は" in ISO-2022-JP (JIS X 0208 between ESC $ B and ESC ( B), as a Japanese Domino writes its field.
    const user = '\u001b$B%f!<%6!<\u001b(B';
    const wa = '\u001b$B$O\u001b(B';
    const text = `From: Mail Router <postmaster@mx.example.jp>
To: app@acme.example
Subject: DELIVERY FAILURE
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="J"

--J
Content-Type: text/plain

Your message was not delivered.

--J
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.example.jp

Final-Recipient: rfc822; ann@example.jp
Action: failed
Status: 5.0.0
Diagnostic-Code: X-Notes; ${user} Ann (ann@example.jp) ${wa} not here

--J--
`;
    for (const raw of both(text)) {
      const { recipients } = await analyseBounce(raw);
      expect(recipients).toEqual([
        expect.objectContaining({
          recipient: 'ann@example.jp',
          diagnostic: 'ユーザー Ann (ann@example.jp) は not here',
        }),
      ]);
    }
  });
});

describe('bounce parser on hostile input', () => {
  const header = 'From: MAILER-DAEMON@mx.example\r\nSubject: Undelivered Mail\r\n';
  const timed = async (raw: Buffer): Promise<number> => {
    const started = performance.now();
    const analysis = await analyseBounce(raw);
    expect(analysis.kind).toMatch(/^(bounce|delayed|complaint|auto_reply|delivered|not_bounce)$/);
    return performance.now() - started;
  };

  it('returns for garbage, truncated MIME and absurdly nested multiparts', async () => {
    const garbage = Buffer.from(Array.from({ length: 200_000 }, (_, index) => (index * 7919) % 256));
    const truncated = Buffer.from(
      `${header}Content-Type: multipart/report; report-type=delivery-status; boundary="B"\r\n\r\n--B\r\nContent-Type: message/delivery-status\r\nContent-Transfer-Encoding: base64\r\n\r\nRmluYWwtUmVj`,
    );
    let nested = `${header}Content-Type: multipart/mixed; boundary="b0"\r\n\r\n`;
    for (let depth = 0; depth < 3000; depth += 1)
      nested += `--b${depth}\r\nContent-Type: multipart/mixed; boundary="b${depth + 1}"\r\n\r\n`;
    for (const raw of [garbage, truncated, Buffer.from(nested), Buffer.alloc(0), Buffer.from('\r\n\r\n')])
      expect(await timed(raw)).toBeLessThan(5000);
  });

  it('stays linear on a 5 MB line of repeated characters', async () => {
    for (const unit of ['a', 'a@', 'a.', ' ', '5.', '<a@b.example>: 550 ']) {
      const body = unit.repeat(Math.ceil(5_000_000 / unit.length));
      expect(await timed(Buffer.from(`${header}\r\n${body}`))).toBeLessThan(5000);
      expect(
        await timed(
          Buffer.from(`${header}Content-Type: message/delivery-status\r\n\r\nFinal-Recipient: rfc822; ${body}\r\n`),
        ),
      ).toBeLessThan(5000);
    }
  }, 120_000);
});
