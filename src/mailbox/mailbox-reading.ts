/**
 * Reading one message of a watched mailbox: a parser's answer bounded in time
 * (a message it cannot understand in time is a problem, never a stalled
 * poller), and the few header fields the record of a mailbox message keeps.
 */
import { errorText } from '../core/index.js';

/**
 * What `parse` makes of a message, or the problem: it threw, or it took
 * longer than `timeoutMs` (the parser's thread keeps its own, shorter,
 * timeout; this is the backstop that keeps a poller from stalling).
 */
export async function parseWithin<T>(
  parse: () => Promise<T>,
  timeoutMs: number,
): Promise<{ value: T; problem: null } | { value: null; problem: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  try {
    const result = await Promise.race([parse(), timeout]);
    return result === 'timeout'
      ? { value: null, problem: `not understood within ${timeoutMs} ms` }
      : { value: result, problem: null };
  } catch (error) {
    return { value: null, problem: errorText(error) };
  } finally {
    clearTimeout(timer);
  }
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
    [...section.matchAll(new RegExp(`^${name}:[ \\t]*(.*)$`, 'gim'))].map((match) =>
      (match[1] ?? '').trim().slice(0, MAX_FIELD_LENGTH),
    );
  const field = (name: string): string | null => fields(name).find((value) => value !== '') ?? null;
  const messageId = field('message-id');
  return {
    messageId: messageId === null ? null : (/<[^<>\s]+>/.exec(messageId)?.[0] ?? messageId),
    from: field('from'),
    subject: field('subject'),
    deliveredTo: DELIVERY_HEADERS.flatMap((name) => fields(name).flatMap((value) => value.match(ADDRESS) ?? [])).slice(
      0,
      50,
    ),
  };
}
