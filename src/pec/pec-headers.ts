/**
 * Header values a PEC receipt ties to our message: a Message-ID in one form,
 * and a header of the original a full receipt carries (its raw bytes, as
 * mailparser keeps an embedded message). Pure string work, linear in the input.
 */

/** RFC 5322 §2.1.1: no line is longer; no real Message-ID comes near it. */
const MAX_ID_CHARS = 998;
/** The original's header block is at its top; its body is never needed. */
const MAX_HEADER_BYTES = 64 * 1024;

/**
 * `<id@host>` whatever form it came in: with or without brackets, padded, or
 * followed by a comment. Null when nothing is left or it is absurdly long.
 */
export function normaliseMessageId(value: string | null): string | null {
  if (value === null) return null;
  let id = value.trim().slice(0, MAX_ID_CHARS * 4);
  let start = 0;
  while (id[start] === '<') start += 1;
  const close = id.indexOf('>', start);
  id =
    id
      .slice(start, close < 0 ? undefined : close)
      .trim()
      .split(/\s/, 1)[0] ?? '';
  return id === '' || id.length > MAX_ID_CHARS ? null : `<${id}>`;
}

/** One header of an embedded message (the first of that name), unfolded and trimmed; null when absent or empty. */
export function embeddedHeader(message: Buffer, name: string): string | null {
  const head = message.subarray(0, MAX_HEADER_BYTES).toString('utf8').replace(/\r\n?/g, '\n');
  const end = head.indexOf('\n\n');
  const block = (end < 0 ? head : head.slice(0, end)).replace(/\n[ \t]+/g, ' ');
  const wanted = `${name.toLowerCase()}:`;
  for (const line of block.split('\n')) {
    if (!line.toLowerCase().startsWith(wanted)) continue;
    const value = line.slice(wanted.length).trim();
    return value === '' ? null : value;
  }
  return null;
}
