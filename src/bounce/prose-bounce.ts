/**
 * A bounce in an MTA's own words (Exim, qmail, Postfix's text part, Gmail,
 * Exchange, webmail providers): which address failed and the lines that say
 * why. Finds text only; what the text means is core/bounce/classify.ts's.
 */
import { findReplyCode, findStatus, reasonOf } from '../core/bounce/index.js';
import { addressesIn } from './addresses.js';

/**
 * Where a bounce's prose ends: it starts quoting the original message (addresses
 * after it are not the failed recipient) or the report's fields begin.
 */
const ORIGINAL_MARKER =
  /^[ \t]*(?:reporting-mta:|final-recipient:|-{2,} ?(?:this is a copy of|original message|below this line is a copy|a copy of the original message|the header of the original message|returned message|forwarded message|message headers follow|headers of the original|original message headers|the original message)|original message:|original message follows|below is a copy of the original message|content-type: message\/rfc822|received: from |return-path: )/im;
/** Bounce text is short; its recipients and reasons are in the first lines. */
const MAX_PROSE_CHARS = 64 * 1024;
/** Lines that introduce the list of failed addresses. */
const LIST_CUE =
  /(following|these|the) (address(es)?|recipients?)|failed:|could not be delivered to|delivery to the following|undeliverable to|permanent fatal errors|delivery problems|unable to deliver|list of recipients|not delivered to|failed (for|to)|(recipient|destination|address|rcpt to)s?:/i;
/** Addresses on such lines are the sender's or a contact, not the failed recipient. */
const NOT_RECIPIENT_LINE =
  /^[ \t>]{0,8}(from|reply-to|sender|return-path|mail from|envelope-from|x-sender)\b|contact|please (send|write|mail)|mail from:|envelope-from|sent by|by .{1,80} for <|helpdesk|support at/i;
const ROLE_ACCOUNT = /^(mailer-daemon|postmaster|post_master|root|abuse|no-?reply|bounces?|daemon|mail-?daemon)@/i;
/** A line carrying a failure's reply code or enhanced status (`550 5.1.1`, `said: 452`, `(reason: 550 ...)`). */
const CODED_LINE = /(?:^|[\s:(<'"=\]])[45][0-5]\d(?:[ :,-]|$)|(?<![\d.])[45]\.\d{1,3}\.\d{1,3}(?![\d]|\.\d)/;
/** The smallest slice of a header block quoted in the prose that is not a diagnostic. */
const HEADER_LINE =
  /^[ \t>]{0,8}(date|received|message-id|subject|x-[a-z-]{1,40}|dkim-signature|arrival-date|last-attempt-date):/i;

export interface ProseFindings {
  recipient: string | null;
  /** The line(s) that say why it failed, or the whole text when no line stands out. */
  diagnostic: string;
  /** The text of the bounce before the quoted original (for a reason not said on the coded line). */
  body: string;
  /** The quoted original, where the prose quotes it. */
  quotedOriginal: string;
}

/** The bounce's own words, cut where the quoted original begins. */
export function proseBody(text: string): { body: string; quotedOriginal: string } {
  const plain = text.slice(0, MAX_PROSE_CHARS).replace(/\r\n?/g, '\n');
  const marker = ORIGINAL_MARKER.exec(plain);
  return marker === null
    ? { body: plain, quotedOriginal: '' }
    : { body: plain.slice(0, marker.index), quotedOriginal: plain.slice(marker.index) };
}

interface Candidate {
  address: string;
  line: number;
  score: number;
}

/** Scores every address of the body by where it stands; the best one is the failed recipient. */
function candidates(lines: string[], exclude: ReadonlySet<string>): Candidate[] {
  const found: Candidate[] = [];
  let cue = false;
  lines.forEach((line, index) => {
    for (const { address, index: at } of addressesIn(line)) {
      if (exclude.has(address)) continue;
      let score = 0;
      if (/^[\s*>"'<(-]{0,12}$/.test(line.slice(0, at))) score += 4; // the line starts with it: a list of failed addresses
      if (cue) score += 2;
      if (CODED_LINE.test(line) || /rcpt to|recipient|delivery to|to:/i.test(line)) score += 2;
      if (NOT_RECIPIENT_LINE.test(line)) score -= 6;
      if (ROLE_ACCOUNT.test(address)) score -= 3;
      found.push({ address, line: index, score });
    }
    if (LIST_CUE.test(line)) cue = true;
    else if (line.trim() === '' && found.length > 0) cue = false;
  });
  return found;
}

/** The lines about one recipient: its line and what follows until a blank line or the next address (at most 8). */
function blockAt(lines: string[], start: number): string {
  const block = [lines[start] as string];
  for (let index = start + 1; index < Math.min(lines.length, start + 8); index += 1) {
    const line = lines[index] as string;
    // A blank line or a line that starts with another address ends what is said about this one.
    if (line.trim() === '' || /^[\s<*"-]{0,4}[^\s@<>:]{1,64}@[^\s@<>]{1,255}/.test(line)) break;
    block.push(line);
  }
  return block.join(' ').replace(/\s+/g, ' ').trim();
}

const hasCodes = (text: string): boolean => findStatus(text) !== null || findReplyCode(text) !== null;

/**
 * The failed recipient and the lines that say why, from the bounce's text.
 * `preferred` are addresses known to have failed (X-Failed-Recipients);
 * `fallback` are the original's recipients, used when the text names none.
 */
export function readProseText(
  text: string,
  exclude: ReadonlySet<string>,
  preferred: string[],
  fallback: string[],
): ProseFindings {
  const { body, quotedOriginal } = proseBody(text);
  const lines = body.split('\n');
  const scored = candidates(lines, exclude);
  const best = scored.reduce<Candidate | null>(
    (top, next) => (top === null || next.score > top.score ? next : top),
    null,
  );
  // A header that lists the failed addresses is the MTA's own statement: it wins even over our own addresses.
  const listed = preferred[0];
  const recipient =
    listed ??
    (best !== null && best.score >= 0
      ? best.address
      : (fallback.find((address) => !exclude.has(address)) ?? best?.address ?? null));
  const recipientLine = recipient === null ? -1 : lines.findIndex((line) => line.toLowerCase().includes(recipient));
  const near = recipientLine < 0 ? '' : blockAt(lines, recipientLine);
  // The reply: coded lines near the recipient first, else the first coded line that is not a quoted header.
  const codedNear =
    recipientLine < 0
      ? -1
      : lines
          .slice(recipientLine, recipientLine + 12)
          .findIndex((line) => CODED_LINE.test(line) && !HEADER_LINE.test(line));
  const codedAny = lines.findIndex((line) => CODED_LINE.test(line) && !HEADER_LINE.test(line));
  const coded = codedNear >= 0 ? recipientLine + codedNear : codedAny;
  let diagnostic = near;
  if (!hasCodes(near) && coded >= 0) diagnostic = `${near} ${blockAt(lines, coded)}`.trim();
  if (diagnostic === '' || (!hasCodes(diagnostic) && reasonOf(null, diagnostic) === null))
    diagnostic = `${diagnostic} ${body.replace(/\s+/g, ' ').trim().slice(0, 2000)}`.trim();
  return { recipient, diagnostic, body, quotedOriginal };
}

/** The text a report's human-readable part says about one recipient (for a DSN group without a diagnostic). */
export function proseAbout(text: string, recipient: string): string | null {
  const { body } = proseBody(text);
  const lines = body.split('\n');
  const at = lines.findIndex((line) => line.toLowerCase().includes(recipient.toLowerCase()) && !HEADER_LINE.test(line));
  if (at < 0) return null;
  const block = blockAt(lines, at);
  if (hasCodes(block) || reasonOf(null, block) !== null) return block;
  const next = lines.slice(at + 1, at + 12).findIndex((line) => CODED_LINE.test(line) && !HEADER_LINE.test(line));
  return next < 0 ? null : blockAt(lines, at + 1 + next);
}
