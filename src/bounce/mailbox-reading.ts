/**
 * Reading one message of the bounce mailbox: the parser's verdict in core
 * terms, bounded in time (a message it cannot understand in time is
 * `unreadable`, never a stalled poller), and the few header fields the record
 * of a mailbox message keeps.
 */
import type { BounceFindings } from '../core/bounce.js';
import type { BounceAnalysis } from './bounce-parser.js';
import { errorText } from '../core/app-error.js';

/**
 * Verdicts kept of one message: a real DSN names a handful of recipients; one
 * naming thousands would otherwise become thousands of events and report items.
 */
export const MAX_VERDICTS = 100;

export function toFindings(analysis: BounceAnalysis): BounceFindings {
  return {
    kind: analysis.kind,
    recipients: analysis.recipients.slice(0, MAX_VERDICTS).map((verdict) => ({
      recipient: verdict.recipient,
      alternates: verdict.alternates,
      action: verdict.action,
      bounceType: verdict.bounceType,
      enhancedStatus: verdict.status,
      replyCode: verdict.replyCode,
      reason: verdict.reason,
      diagnostic: verdict.diagnostic,
    })),
    mailId: analysis.mailId,
    originalMessageId: analysis.originalMessageId,
    originalEnvelopeId: analysis.originalEnvelopeId,
    feedbackType: analysis.feedbackType,
    verpMessagePk: null,
  };
}

export const UNREADABLE: BounceFindings = {
  kind: 'unreadable',
  recipients: [],
  mailId: null,
  originalMessageId: null,
  originalEnvelopeId: null,
  feedbackType: null,
  verpMessagePk: null,
};

/**
 * What `parse` makes of a message, or the problem: it threw, or it took
 * longer than `timeoutMs` (the parser's thread keeps its own, shorter,
 * timeout; this is the backstop that keeps a poller from stalling).
 */
export async function parseWithin<T>(parse: () => Promise<T>, timeoutMs: number): Promise<{ value: T; problem: null } | { value: null; problem: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  try {
    const result = await Promise.race([parse(), timeout]);
    return result === 'timeout' ? { value: null, problem: `not understood within ${timeoutMs} ms` } : { value: result, problem: null };
  } catch (error) {
    return { value: null, problem: errorText(error) };
  } finally {
    clearTimeout(timer);
  }
}

/** The parser's findings, or `unreadable` when it throws or takes longer than `timeoutMs`. */
export async function readFindings(
  raw: Buffer,
  timeoutMs: number,
  analyse: (raw: Buffer) => Promise<BounceAnalysis>,
): Promise<{ findings: BounceFindings; problem: string | null }> {
  const read = await parseWithin(() => analyse(raw), timeoutMs);
  return read.problem === null ? { findings: toFindings(read.value), problem: null } : { findings: UNREADABLE, problem: read.problem };
}

/** Most of a header section worth scanning: a header bomb is not read to its end. */
const HEADER_SCAN_BYTES = 64 * 1024;
const MAX_FIELD_LENGTH = 300;

export interface HeaderSummary {
  messageId: string | null;
  from: string | null;
  subject: string | null;
  /** Where the message was delivered: a VERP address is among them. */
  deliveredTo: string[];
}

/** Headers that name the address a bounce was delivered to (set by the MTAs on its way). */
const DELIVERY_HEADERS = ['to', 'delivered-to', 'x-original-to', 'envelope-to', 'x-envelope-to', 'x-rcpt-to'];
const ADDRESS = /[^\s<>(),;:"']+@[^\s<>(),;:"']+/g;

/** Message-ID, From and Subject of the message itself, as they stand (for the operator's list, not for logic). */
export function summariseHeaders(raw: Buffer): HeaderSummary {
  const text = raw.subarray(0, HEADER_SCAN_BYTES).toString('latin1');
  const end = /\r?\n\r?\n/.exec(text);
  const section = (end === null ? text : text.slice(0, end.index)).replace(/\r?\n[ \t]+/g, ' ');
  const fields = (name: string): string[] =>
    [...section.matchAll(new RegExp(`^${name}:[ \\t]*(.*)$`, 'gim'))].map((match) => (match[1] ?? '').trim().slice(0, MAX_FIELD_LENGTH));
  const field = (name: string): string | null => fields(name).find((value) => value !== '') ?? null;
  const messageId = field('message-id');
  return {
    messageId: messageId === null ? null : (/<[^<>\s]+>/.exec(messageId)?.[0] ?? messageId),
    from: field('from'),
    subject: field('subject'),
    deliveredTo: DELIVERY_HEADERS.flatMap((name) => fields(name).flatMap((value) => value.match(ADDRESS) ?? [])).slice(0, 50),
  };
}
