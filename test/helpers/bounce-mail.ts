/**
 * Bounce mail as remote MTAs write it, built around a message our relay really
 * sent (the sink's copy): an RFC 3464 DSN returning the original, and an RFC
 * 5965 (ARF) feedback report. CRLF line endings, as IMAP carries mail.
 */
import { randomUUID } from 'node:crypto';

const crlf = (text: string): string => text.replace(/\r?\n/g, '\r\n');

export interface DsnOptions {
  recipient: string;
  /** The mailbox the reporting MTA tried, when a forward or an alias took the message elsewhere (default `recipient`). */
  finalRecipient?: string;
  /** Whether the report keeps `recipient` as its Original-Recipient (default true). */
  withOriginalRecipient?: boolean;
  action?: 'failed' | 'delayed';
  status?: string;
  diagnostic?: string;
  /** Return only the headers (text/rfc822-headers) instead of the whole message. */
  headersOnly?: boolean;
}

export function dsnFor(original: Buffer, options: DsnOptions): Buffer {
  const action = options.action ?? 'failed';
  const status = options.status ?? (action === 'failed' ? '5.1.1' : '4.2.2');
  const diagnostic =
    options.diagnostic ??
    (action === 'failed'
      ? `550 5.1.1 <${options.finalRecipient ?? options.recipient}>: Recipient address rejected: User unknown in local recipient table`
      : '452 4.2.2 Mailbox full, will retry');
  const text = original.toString('utf8');
  const returned = options.headersOnly === true ? text.slice(0, text.search(/\r?\n\r?\n/)) : text;
  return Buffer.from(
    crlf(`From: Mail Delivery System <MAILER-DAEMON@mx.example.net>
To: bounces@proxy.example
Subject: Undelivered Mail Returned to Sender
Message-ID: <${randomUUID()}@mx.example.net>
Date: Mon, 23 Nov 2026 10:00:00 +0000
Auto-Submitted: auto-replied
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="dsn-boundary"

--dsn-boundary
Content-Type: text/plain; charset=us-ascii

This is the mail system at host mx.example.net.

I'm sorry to have to inform you that your message could not
be delivered to one or more recipients.

--dsn-boundary
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.example.net
Arrival-Date: Mon, 23 Nov 2026 09:59:58 +0000

Final-Recipient: rfc822; ${options.finalRecipient ?? options.recipient}
${options.withOriginalRecipient === false ? '' : `Original-Recipient: rfc822;${options.recipient}\n`}Action: ${action}
Status: ${status}
Remote-MTA: dns; inbound.example.net
Diagnostic-Code: smtp; ${diagnostic}

--dsn-boundary
Content-Type: ${options.headersOnly === true ? 'text/rfc822-headers' : 'message/rfc822'}

`) +
      returned.replace(/\r?\n/g, '\r\n') +
      '\r\n--dsn-boundary--\r\n',
  );
}

export function arfFor(original: Buffer, recipient: string): Buffer {
  const headers = original.toString('utf8').split(/\r?\n\r?\n/)[0] ?? '';
  return Buffer.from(
    crlf(`From: Feedback Loop <fbl@isp.example>
To: abuse@proxy.example
Subject: FW: complaint
Message-ID: <${randomUUID()}@isp.example>
Date: Mon, 23 Nov 2026 11:00:00 +0000
MIME-Version: 1.0
Content-Type: multipart/report; report-type=feedback-report; boundary="arf-boundary"

--arf-boundary
Content-Type: text/plain; charset=us-ascii

This is an email abuse report for an email message received from IP 192.0.2.1.

--arf-boundary
Content-Type: message/feedback-report

Feedback-Type: abuse
User-Agent: ExampleFBL/1.0
Version: 1
Original-Rcpt-To: ${recipient}
Arrival-Date: Mon, 23 Nov 2026 10:00:00 +0000

--arf-boundary
Content-Type: text/rfc822-headers

`) +
      headers.replace(/\r?\n/g, '\r\n') +
      '\r\n\r\n--arf-boundary--\r\n',
  );
}

/** Mail that is no bounce at all: a person writing to the bounce address. */
export function ordinaryMail(subject = 'Question about my invoice'): Buffer {
  return Buffer.from(
    crlf(`From: Carla <carla@example.org>
To: bounces@proxy.example
Subject: ${subject}
Message-ID: <${randomUUID()}@example.org>
Date: Mon, 23 Nov 2026 12:00:00 +0000

Hello, could you please resend my invoice?
`),
  );
}

/**
 * A multipart/report DSN as text (LF), one recipient group of `groupFields` failed with 5.1.1,
 * from `reportingMta`, with `original` (a message/rfc822 part, `--B` first) before the end.
 */
export const dsnReportText = (
  groupFields: string,
  options: { reportingMta?: string; original?: string } = {},
): string => {
  const mta = options.reportingMta ?? 'mx.example.net';
  return `From: Mail Delivery System <MAILER-DAEMON@${mta}>
To: app@acme.example
Subject: Undelivered Mail Returned to Sender
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="B"

--B
Content-Type: text/plain

Your message could not be delivered.

--B
Content-Type: message/delivery-status

Reporting-MTA: dns; ${mta}

${groupFields}
Action: failed
Status: 5.1.1
Diagnostic-Code: smtp; 550 5.1.1 User unknown

${options.original ?? ''}--B--
`;
};
