/**
 * The header section of an RFC 5322 message as bytes: where it ends, its
 * fields, and a copy with some fields removed and lines put in front. Every
 * other byte is kept as it came (line endings, folding, 8-bit text), so that
 * signatures the application made (DKIM) stay valid.
 */

const LF = 0x0a;
const CR = 0x0d;

export interface HeaderField {
  /** As written. */
  name: string;
  /** Unfolded and trimmed, decoded as UTF-8. */
  value: string;
  /** Byte range of the whole field, continuation lines and line ending included. */
  start: number;
  end: number;
}

/**
 * Finds the end of the header section: the offset just after the empty line
 * that closes it, or -1 while it has not arrived. `from` is where the previous
 * call stopped (a line start), so a growing buffer is scanned once.
 */
export function headerEnd(bytes: Uint8Array, from: number): { end: number; scanned: number } {
  let lineStart = from;
  for (;;) {
    const lineEnd = bytes.indexOf(LF, lineStart);
    if (lineEnd === -1) return { end: -1, scanned: lineStart };
    const length = lineEnd - lineStart;
    if (length === 0 || (length === 1 && bytes[lineStart] === CR)) return { end: lineEnd + 1, scanned: lineEnd + 1 };
    lineStart = lineEnd + 1;
  }
}

/** The fields of a header section (`head` ends with its empty line, or is the whole message). */
export function parseFields(head: Buffer): HeaderField[] {
  const fields: HeaderField[] = [];
  let current: { name: string; start: number; valueStart: number } | null = null;
  const close = (end: number): void => {
    if (current === null) return;
    const value = head.toString('utf8', current.valueStart, end).replace(/\r?\n/g, '').trim();
    fields.push({ name: current.name, value, start: current.start, end });
    current = null;
  };
  let lineStart = 0;
  while (lineStart < head.length) {
    const newline = head.indexOf(LF, lineStart);
    const lineEnd = newline === -1 ? head.length : newline + 1;
    const first = head[lineStart];
    const empty = first === LF || (first === CR && head[lineStart + 1] === LF);
    if (empty) break;
    if (first === 0x20 || first === 0x09) {
      // A continuation line belongs to the field above (or to no field).
      lineStart = lineEnd;
      continue;
    }
    close(lineStart);
    const colon = head.indexOf(0x3a, lineStart);
    if (colon !== -1 && colon < lineEnd) {
      const name = head.toString('latin1', lineStart, colon);
      if (/^[!-9;-~]+$/.test(name)) current = { name, start: lineStart, valueStart: colon + 1 };
    }
    lineStart = lineEnd;
  }
  close(Math.min(lineStart, head.length));
  return fields;
}

/** `head` without `drop`ped fields, with `prepend` (whole lines) in front. */
export function rewriteHead(head: Buffer, drop: readonly HeaderField[], prepend: string): Buffer {
  const parts: Buffer[] = [Buffer.from(prepend, 'utf8')];
  let at = 0;
  for (const field of [...drop].sort((a, b) => a.start - b.start)) {
    parts.push(head.subarray(at, field.start));
    at = field.end;
  }
  parts.push(head.subarray(at));
  return Buffer.concat(parts);
}
