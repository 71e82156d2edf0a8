/**
 * The bounce parser on messages this project writes itself, modelled on the
 * formats of RFC 3464, RFC 5965, RFC 3834 and the wording of common MTAs.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyseBounce } from '../../src/bounce/bounce-parser.js';
import { CLI } from '../helpers/daemon-process.js';

const crlf = (text: string): Buffer => Buffer.from(text.replace(/\r?\n/g, '\r\n'), 'utf8');

const ORIGINAL = `From: app@acme.example
To: ann@example.net
Subject: Your invoice
Message-ID: <inv-42@acme.example>
X-Genro-Mail-ID: inv-42

Hello Ann.
`;

const DSN = crlf(`From: Mail Delivery System <MAILER-DAEMON@mx.acme.example>
To: app@acme.example
Subject: Undelivered Mail Returned to Sender
Message-ID: <bounce-1@mx.acme.example>
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="B"

--B
Content-Type: text/plain

I'm sorry to have to inform you that your message could not be delivered.

--B
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.acme.example
Original-Envelope-Id: env-42

Final-Recipient: rfc822; ann@example.net
Original-Recipient: rfc822;ann@example.net
Action: failed
Status: 5.1.1
Remote-MTA: dns; mx.example.net
Diagnostic-Code: smtp; 550 5.1.1 <ann@example.net>: Recipient address rejected:
 User unknown in local recipient table

Final-Recipient: rfc822; bob@example.net
Action: delayed
Status: 4.2.2
Diagnostic-Code: smtp; 452 4.2.2 Mailbox full, try again later

--B
Content-Type: message/rfc822

${ORIGINAL}
--B--
`);

describe('the bounce parser', () => {
  it('reads an RFC 3464 report: one verdict per recipient, the envelope id, and the returned original', async () => {
    const analysis = await analyseBounce(DSN);
    expect(analysis).toMatchObject({
      kind: 'bounce',
      originalMessageId: '<inv-42@acme.example>',
      mailId: 'inv-42',
      originalEnvelopeId: 'env-42',
    });
    expect(analysis.recipients).toEqual([
      expect.objectContaining({
        recipient: 'ann@example.net',
        action: 'failed',
        status: '5.1.1',
        replyCode: '550',
        remoteMta: 'mx.example.net',
        bounceType: 'hard',
        reason: 'user_unknown',
      }),
      expect.objectContaining({
        recipient: 'bob@example.net',
        action: 'delayed',
        status: '4.2.2',
        replyCode: '452',
        bounceType: 'soft',
        reason: 'mailbox_full',
      }),
    ]);
  });

  it('a report of delays only is soft and does not fail the message', async () => {
    const delayed = Buffer.from(
      DSN.toString('utf8')
        .replace('Action: failed\r\nStatus: 5.1.1', 'Action: delayed\r\nStatus: 4.4.7')
        .replace('550 5.1.1', '451 4.4.7'),
    );
    const analysis = await analyseBounce(delayed);
    expect(analysis.kind).toBe('delayed');
    expect(analysis.recipients.every((recipient) => recipient.bounceType === 'soft')).toBe(true);
  });

  it('a report that says delivered is not a bounce', async () => {
    const delivered = Buffer.from(
      DSN.toString('utf8')
        .replace(/Action: (failed|delayed)/g, 'Action: delivered')
        .replace(/Status: [45]\.\d\.\d/g, 'Status: 2.0.0'),
    );
    expect((await analyseBounce(delivered)).kind).toBe('delivered');
  });

  it('an ARF feedback report is a complaint, not a bounce', async () => {
    const arf = crlf(`From: feedback@isp.example
To: abuse@acme.example
Subject: FW: Your invoice
MIME-Version: 1.0
Content-Type: multipart/report; report-type=feedback-report; boundary="F"

--F
Content-Type: text/plain

This is an email abuse report.

--F
Content-Type: message/feedback-report

Feedback-Type: abuse
User-Agent: SomeISP-FBL/1.0
Version: 1

--F
Content-Type: message/rfc822

${ORIGINAL}
--F--
`);
    const analysis = await analyseBounce(arf);
    expect(analysis).toMatchObject({
      kind: 'complaint',
      method: 'arf',
      feedbackType: 'abuse',
      mailId: 'inv-42',
      recipients: [],
    });
    // A provider that does not redact the complainant names it in Original-Rcpt-To.
    const named = await analyseBounce(
      Buffer.from(
        arf
          .toString('utf8')
          .replace('User-Agent: SomeISP-FBL/1.0', 'User-Agent: SomeISP-FBL/1.0\r\nOriginal-Rcpt-To: <Ann@Example.net>'),
      ),
    );
    expect(named.recipients.map((verdict) => verdict.recipient)).toEqual(['ann@example.net']);
  });

  it('an out-of-office reply is not a bounce', async () => {
    const reply = crlf(`From: Ann <ann@example.net>
To: app@acme.example
Subject: Out of Office: Your invoice
Auto-Submitted: auto-replied

I am away until Monday.
`);
    expect((await analyseBounce(reply)).kind).toBe('auto_reply');
  });

  it("reads a bounce in an MTA's own words: the failed address, the codes and why", async () => {
    const prose = crlf(`From: MAILER-DAEMON@mx.acme.example
To: app@acme.example
Subject: failure notice

This is the mail system at host mx.acme.example.
I'm sorry to have to inform you that your message could not be delivered to one or more recipients.

<carl@example.org>: host mx.example.org[192.0.2.7] said: 552 5.2.2 <carl@example.org>:
    Mailbox is full (in reply to RCPT TO command)

------ This is a copy of the message, including all the headers. ------

${ORIGINAL}`);
    const analysis = await analyseBounce(prose);
    expect(analysis.kind).toBe('bounce');
    expect(analysis.recipients[0]).toMatchObject({
      recipient: 'carl@example.org',
      status: '5.2.2',
      replyCode: '552',
      reason: 'mailbox_full',
      bounceType: 'hard',
    });
    expect(analysis).toMatchObject({ mailId: 'inv-42', originalMessageId: '<inv-42@acme.example>' });
  });

  it('ordinary mail is not a bounce', async () => {
    expect((await analyseBounce(crlf(ORIGINAL))).kind).toBe('not_bounce');
  });

  it('mailproxy bounce parse FILE prints the verdict as one JSON object', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailproxy-bounce-'));
    try {
      const file = join(dir, 'dsn.eml');
      writeFileSync(file, DSN);
      const printed = JSON.parse(
        execFileSync(process.execPath, [CLI, 'bounce', 'parse', file], { encoding: 'utf8' }),
      ) as Record<string, unknown>;
      expect(printed).toMatchObject({
        is_bounce: true,
        kind: 'dsn',
        category: 'bounce',
        bounce_type: 'hard',
        smtp_code: '550',
        enhanced_status: '5.1.1',
        recipient: 'ann@example.net',
        reason: 'user_unknown',
        original_message_id: '<inv-42@acme.example>',
        mail_id: 'inv-42',
        diagnostic: '550 5.1.1 <ann@example.net>: Recipient address rejected: User unknown in local recipient table',
      });
      expect(printed.recipients).toHaveLength(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
