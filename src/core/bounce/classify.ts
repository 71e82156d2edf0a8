/**
 * What a bounce means, from what it says: hard or soft, and why. Pure and
 * data-driven (the tables are in bounce-reasons.ts), not a chain of ifs. The
 * order of judgement is the issue's: the enhanced status first, then the reply
 * code, then the diagnostic text.
 */
import {
  DECISIVE_PHRASES,
  EXPIRY_PHRASES,
  GENERIC_REASON_PHRASES,
  HARD_REASONS,
  PERMANENCE_PHRASES,
  REASON_OVERRIDES,
  REASON_PHRASES,
  SOFT_REASONS,
  type BounceReason,
} from './reasons.js';
import type { ReasonTable } from './reason.js';
import { REPLY_CODE_REASONS, statusMeaning } from './status-registry.js';
import { ANY_VENDOR_PHRASE, VENDOR_PHRASES } from './vendor-wording.js';

export {
  DECISIVE_PHRASES,
  GENERIC_REASON_PHRASES,
  GROUP_POSTING_REFUSALS,
  PERMANENCE_PHRASES,
  REASON_OVERRIDES,
  REASON_PHRASES,
  type BounceReason,
} from './reasons.js';
export { statusMeaning } from './status-registry.js';
export { ANY_VENDOR_PHRASE } from './vendor-wording.js';

// Not inside an address or a version number (192.2.3.4, 1.2.3.4).
export const ENHANCED_STATUS = /(?<![\d.])([245])\.(\d{1,3})\.(\d{1,3})(?![\d]|\.\d)/;
// RFC 5321 §4.2: the second digit of a reply code is 0 to 5 (so "port 587" is no reply).
export const REPLY_CODE = /(?:^|[^\d.])([245][0-5]\d)(?:[ :,-]|$)/;
/** A reply code with its enhanced status right after it: `550 5.1.1`, `550-'5.7.1`, `421 4.4.2`. */
const CODE_AND_STATUS = /(?<![\d.])([245][0-5]\d)[ :-]{1,3}['"(]?([245])\.(\d{1,3})\.(\d{1,3})(?![\d]|\.\d)/g;

export function findStatus(text: string): string | null {
  const match = ENHANCED_STATUS.exec(text);
  return match === null ? null : `${match[1]}.${match[2]}.${match[3]}`;
}

export function findReplyCode(text: string): string | null {
  return REPLY_CODE.exec(text)?.[1] ?? null;
}

/**
 * The reply code and enhanced status a diagnostic reports. When it quotes
 * several replies (a relay's summary, then the remote server's own words:
 * `554 4.4.7 Message expired <421 4.4.2 Connection timed out>`), the last
 * code-and-status pair is the remote server's verbatim answer and the most
 * precise (and its words, from there on, say why); without a pair, the
 * first status and the first code.
 */
export function findCodes(text: string): {
  status: string | null;
  replyCode: string | null;
  remoteWords: string | null;
} {
  let last: RegExpExecArray | null = null;
  for (const match of text.matchAll(CODE_AND_STATUS)) last = match;
  if (last !== null)
    return {
      status: `${last[2]}.${Number(last[3])}.${Number(last[4])}`,
      replyCode: last[1] as string,
      remoteWords: text.slice(last.index),
    };
  return { status: findStatus(text), replyCode: findReplyCode(text), remoteWords: null };
}

function phraseReason(table: ReasonTable, texts: readonly string[]): BounceReason | null {
  for (const text of texts) for (const [reason, pattern] of table) if (pattern.test(text)) return reason;
  return null;
}

/**
 * A vendor's documented code or message, in any of the texts (most specific first). The union is
 * case-blind while some codes keep their case, so a text it matches may still name none: the next
 * text is read then.
 */
function vendorReason(texts: readonly string[]): BounceReason | null {
  for (const text of texts) {
    const reason = ANY_VENDOR_PHRASE.test(text) ? phraseReason(VENDOR_PHRASES, [text]) : null;
    if (reason !== null) return reason;
  }
  return null;
}

/** What else is known of a refusal than its words: its class, the report's action, the texts to read its phase in. */
interface Circumstances {
  klass: string | null;
  action: string | null;
  transcript: string;
}

function corrected(reason: BounceReason, vague: boolean, about: Circumstances): BounceReason {
  const { klass, transcript } = about;
  for (const rule of REASON_OVERRIDES) {
    if (!rule.from.has(reason) || (rule.klass !== undefined && rule.klass !== klass) || (rule.vague === true && !vague))
      continue;
    if (rule.action !== undefined && rule.action !== about.action?.toLowerCase()) continue;
    if (
      (rule.when === undefined || rule.when.test(transcript)) &&
      (rule.also === undefined || rule.also.test(transcript)) &&
      (rule.unless === undefined || !rule.unless.test(transcript))
    )
      return rule.to;
  }
  return reason;
}

/**
 * Why, in the order the codes are specific: wording that names the recipient's own filter; a vendor's
 * own documented code or message (bounce-vendor-*.ts), whatever status it comes with; a status
 * detail that names one reason (5.1.1, 5.2.2, 5.7.13: bounce-status-registry.ts); a reply code that
 * does (521, 535), when there is no status; else the wording, corrected by the SMTP phase and the
 * class; else what the generic status (5.7.1, x.0.0) or reply code (550) stands for. The wording is
 * read from the remote server's own words (`primary`) first, then from the other texts, most
 * specific first (the diagnostic, the prose about the recipient), precise phrases before vague
 * words. `transcript` (with the texts) and the report's `action` are read only for the corrections
 * of REASON_OVERRIDES: the SMTP phase, and a queue that gave up after network troubles.
 */
export function reasonIn(input: {
  status: string | null;
  replyCode?: string | null;
  primary?: string | null;
  texts: readonly string[];
  transcript?: string;
  action?: string | null;
}): BounceReason | null {
  const { status, texts } = input;
  const primary = input.primary === null || input.primary === undefined ? [] : [input.primary];
  const decisive = phraseReason(DECISIVE_PHRASES, [...primary, ...texts]);
  if (decisive !== null) return decisive;
  const klass = status?.[0] ?? input.replyCode?.[0] ?? null;
  const about = (): Circumstances => ({
    klass,
    action: input.action ?? null,
    transcript: [input.transcript ?? '', ...texts].join('\n'),
  });
  // A vendor's own code is more specific than the status it is sent with (Facebook sends its
  // "recipient's preferences" refusal, RCP-P2, as 5.1.1).
  const vendor = vendorReason([...primary, ...texts]);
  if (vendor !== null) return corrected(vendor, false, about());
  const byStatus = status === null ? null : statusMeaning(status);
  // A status naming the mailbox (5.1.1) is still read in its SMTP phase: refused after the
  // message was read, it is the recipient's filter answering, not a dead address.
  if (byStatus?.decides === true)
    return byStatus.reason === 'user_unknown' ? corrected(byStatus.reason, false, about()) : byStatus.reason;
  const byCode =
    input.replyCode === null || input.replyCode === undefined
      ? null
      : (REPLY_CODE_REASONS.get(input.replyCode) ?? null);
  if (byStatus === null && byCode?.decides === true) return byCode.reason;
  const precise = phraseReason(REASON_PHRASES, primary);
  const vague = precise === null ? phraseReason(GENERIC_REASON_PHRASES, primary) : null;
  const fromPrecise = precise ?? (vague === null ? phraseReason(REASON_PHRASES, texts) : null);
  const fromText = fromPrecise ?? vague ?? phraseReason(GENERIC_REASON_PHRASES, texts);
  if (fromText !== null) return corrected(fromText, fromPrecise === null, about());
  return byStatus?.reason ?? byCode?.reason ?? null;
}

/**
 * One diagnostic read alone, as a recipient's verdict reads it without context: its codes found,
 * the remote server's own words first.
 */
export function reasonOfDiagnostic(diagnostic: string): BounceReason | null {
  const { status, replyCode, remoteWords } = findCodes(diagnostic);
  return reasonIn({ status, replyCode, primary: remoteWords, texts: [diagnostic] });
}

/** `reasonIn` for a status and texts alone. */
export function reasonOf(status: string | null, ...texts: string[]): BounceReason | null {
  return reasonIn({ status, texts });
}

/** What the wording says of the delivery's future: 'soft' (still queued), 'hard' (abandoned), or null. */
export function permanenceOf(text: string): 'hard' | 'soft' | null {
  for (const [type, pattern] of PERMANENCE_PHRASES) if (pattern.test(text)) return type;
  return null;
}

/**
 * Hard or soft: a delay or an MTA's expiry is soft; then the enhanced status's class, the reply
 * code's, the wording (a warning or a notice of abandonment), a failed action
 * (the message came back), and last the reason. Null when nothing says (then
 * nobody should act on it).
 */
export function bounceTypeOf(input: {
  action: string | null;
  status: string | null;
  replyCode: string | null;
  reason: BounceReason | null;
  text?: string;
}): 'hard' | 'soft' | null {
  const action = input.action?.toLowerCase() ?? null;
  if (action === 'delayed') return 'soft';
  if (input.text !== undefined && EXPIRY_PHRASES.test(input.text)) return 'soft';
  const klass = input.status?.[0] ?? input.replyCode?.[0] ?? null;
  if (klass === '5') return 'hard';
  if (klass === '4') return 'soft';
  const worded = input.text === undefined ? null : permanenceOf(input.text);
  if (worded !== null) return worded;
  if (action === 'failed') return 'hard';
  if (input.reason === null) return null;
  if (SOFT_REASONS.has(input.reason)) return 'soft';
  return HARD_REASONS.has(input.reason) ? 'hard' : 'soft';
}

/**
 * What a DSN says happened to one recipient: a failure (its hard or soft from
 * bounceTypeOf), a delay, or a delivery. Delivered only on positive evidence:
 * an action of delivery (delivered, relayed, expanded) with a 2.x.x status, or,
 * when the Status is missing or broken, an action or reply of success with
 * nothing in the diagnostic or the prose about the recipient (`evidence`) that
 * says it failed. Anything else a report says of a recipient is a failure: a
 * real bounce read as a delivery would be lost, and its address never suppressed.
 */
export function dsnOutcomeOf(group: {
  action: string | null;
  status: string | null;
  evidence: string;
}): 'failed' | 'delayed' | 'delivered' {
  const { action, evidence } = group;
  if (action === 'failed' || action === 'delayed') return action;
  const delivery = action === 'delivered' || action === 'relayed' || action === 'expanded';
  const klass = group.status === null ? null : (findStatus(group.status)?.[0] ?? null);
  if (klass === '2' && delivery) return 'delivered';
  if (klass === '4' || klass === '5') return 'failed';
  const codes = findCodes(evidence);
  const said = codes.status?.[0] ?? codes.replyCode?.[0] ?? null;
  if (said === '4' || said === '5' || permanenceOf(evidence) !== null) return 'failed';
  return delivery || klass === '2' || said === '2' ? 'delivered' : 'failed';
}
