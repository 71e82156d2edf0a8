/**
 * A well-formed, realistic DSN (RFC 3464) that the hostile generators then
 * break: quoted-printable notice, base64 delivery-status, and a returned
 * original with a base64 attachment, so there are boundaries and base64 to
 * cut through. Varies with the PRNG; always LF line ends.
 */
import type { Rng } from './seeded-rng.js';

const hex = (rng: Rng, length: number): string => Array.from({ length }, () => rng.int(0, 15).toString(16)).join('');

const base64Lines = (data: Buffer): string => data.toString('base64').replace(/.{76}/g, '$&\n').trimEnd();

export function sampleDsn(rng: Rng): string {
  const boundary = `=_hostile_${hex(rng, 12)}`;
  const inner = `${boundary}-orig`;
  const recipients = Array.from({ length: rng.int(1, 3) }, (_, i) => `user${i}.${hex(rng, 4)}@example.org`);
  const status = recipients
    .map((address) => {
      const [code, enhanced, text] = rng.pick([
        ['550', '5.1.1', 'User unknown'],
        ['452', '4.2.2', 'Mailbox full'],
        ['554', '5.7.1', 'blocked using zen.spamhaus.org'],
      ] as const);
      return `Final-Recipient: rfc822; ${address}\nAction: ${code.startsWith('4') ? 'delayed' : 'failed'}\nStatus: ${enhanced}\nDiagnostic-Code: smtp; ${code} ${enhanced} <${address}>: ${text}\n`;
    })
    .join('\n');
  const deliveryStatus = `Reporting-MTA: dns; mx.hostile.example\nArrival-Date: Mon, 1 Apr 2024 10:00:00 +0000\n\n${status}`;
  const notice = `Your message could not be delivered to ${recipients.join(', ')}. F=C3=BCr Details siehe unten; this line is long enough to need a soft=\n break.\n`;
  const attachment = base64Lines(rng.bytes(rng.int(600, 3000)));
  return `From: Mail Delivery System <MAILER-DAEMON@mx.hostile.example>
To: bounces@acme-shop.example
Subject: Undelivered Mail Returned to Sender
Message-ID: <${hex(rng, 16)}@mx.hostile.example>
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="${boundary}"

--${boundary}
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: quoted-printable

${notice}
--${boundary}
Content-Type: message/delivery-status
Content-Transfer-Encoding: base64

${base64Lines(Buffer.from(deliveryStatus, 'utf8'))}

--${boundary}
Content-Type: message/rfc822

From: Acme Shop <orders@acme-shop.example>
To: ${recipients.join(', ')}
Subject: Invoice ${hex(rng, 6)}
Message-ID: <invoice-${hex(rng, 8)}@acme-shop.example>
X-Genro-Mail-ID: acme-${hex(rng, 10)}
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="${inner}"

--${inner}
Content-Type: text/plain; charset=utf-8

Please find your invoice attached.

--${inner}
Content-Type: application/pdf; name="invoice.pdf"
Content-Transfer-Encoding: base64

${attachment}
--${inner}--

--${boundary}--
`;
}
