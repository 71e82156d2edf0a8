/** The Received: trace header (RFC 5321 §4.4) the listener adds to each message it accepts. */
import type { SMTPServerSession } from 'smtp-server';
import type { Clock } from '../../core/index.js';
import { rfc5322Date } from './submission-headers.js';

/** For a session, the header line (without its CRLF) naming the message's `id`. */
export type ReceivedHeader = (session: SMTPServerSession) => (id: string) => string;

export function createReceivedHeader(hostname: string, clock: Clock): ReceivedHeader {
  // The trace's date changes once a second; formatting it for every message showed in profiles.
  let stamped = { second: -1, text: '' };
  const dateText = (now: number): string => {
    const second = Math.floor(now / 1000);
    if (second !== stamped.second) stamped = { second, text: rfc5322Date(now) };
    return stamped.text;
  };
  return (session) =>
    (id): string => {
      const helo = (session.hostNameAppearsAs || 'unknown').replace(/[^\w.:[\]-]/g, '').slice(0, 255) || 'unknown';
      // RFC 6531 §4.3: a transaction with SMTPUTF8 is UTF8SMTP(S)(A), not ESMTP(S)(A).
      const protocol =
        session.envelope.smtpUtf8 === true
          ? session.transmissionType.replace(/^E?SMTP/, 'UTF8SMTP')
          : session.transmissionType;
      return `Received: from ${helo} (${session.remoteAddress})\r\n\tby ${hostname} (mailproxy) with ${protocol} id ${id};\r\n\t${dateText(clock.now())}`;
    };
}
