/**
 * Receives one message's DATA: the header section is held until it is complete
 * and rewritten (our trace and id headers in, control headers out); the rest is
 * passed through untouched. A message that outgrows `memoryBytes` goes to the
 * store's spool a part at a time as it arrives, so a connection never holds
 * more than about one part, whatever the message size.
 */
import type { Readable } from 'node:stream';
import type { MessageContent } from '../../core/message.js';
import type { MessageSpool } from '../../core/queue.js';
import { headerEnd, parseFields, rewriteHead, type HeaderField } from './header-section.js';
import { replies, SmtpReply } from './replies.js';

export interface ReceiverOptions {
  spool: MessageSpool;
  now: () => number;
  maxHeaderBytes: number;
  maxMessageBytes: number;
  /** Bytes held in memory before the message moves to the spool; also the spool's part size. */
  memoryBytes: number;
  /** Told of a spool write that failed (the message is then refused with 451). */
  onStoreError: (error: unknown) => void;
}

/** What to do with the header: lines to put in front and fields to remove, or a refusal. */
export type HeadDecision = { prepend: string; drop: readonly HeaderField[] } | SmtpReply;

export type Received = { ok: true; content: MessageContent; sizeBytes: number } | { ok: false; reply: SmtpReply };

/** smtp-server's DATA stream: a Readable that knows whether the size limit was passed. */
export type DataStream = Readable & { sizeExceeded?: boolean };

export async function receiveMessage(stream: DataStream, decideHead: (fields: HeaderField[]) => HeadDecision, options: ReceiverOptions): Promise<Received> {
  let head: Buffer | null = Buffer.alloc(0);
  let scanned = 0;
  let refusal: SmtpReply | null = null;
  let held: Buffer[] = [];
  let heldBytes = 0;
  let sizeBytes = 0;
  let spoolId: number | null = null;
  let nextPart = 0;

  const writePart = (): void => {
    spoolId ??= options.spool.open(options.now());
    options.spool.append(spoolId, nextPart, held.length === 1 ? (held[0] as Buffer) : Buffer.concat(held));
    nextPart += 1;
    held = [];
    heldBytes = 0;
  };
  const keep = (bytes: Buffer): void => {
    if (bytes.length === 0) return;
    held.push(bytes);
    heldBytes += bytes.length;
    sizeBytes += bytes.length;
    if (heldBytes >= options.memoryBytes) writePart();
  };
  const closeHead = (bytes: Buffer, end: number): void => {
    const decision = decideHead(parseFields(bytes.subarray(0, end)));
    if (decision instanceof SmtpReply) {
      refusal = decision;
      return;
    }
    keep(rewriteHead(bytes.subarray(0, end), decision.drop, decision.prepend));
    keep(bytes.subarray(end));
  };

  /** A spool write that fails (store full) refuses the message; the stream is still read to its end. */
  const guarded = (step: () => void): void => {
    try {
      step();
    } catch (error) {
      options.onStoreError(error);
      refusal = replies.storeFailed();
    }
  };
  const take = (chunk: Buffer): void => {
    if (head === null) {
      keep(chunk);
      return;
    }
    head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
    const found = headerEnd(head, scanned);
    scanned = found.scanned;
    if (found.end > options.maxHeaderBytes || (found.end === -1 && head.length > options.maxHeaderBytes)) {
      // Whether the section ended in this read or not: the limit is on the section, not on a read.
      refusal = replies.headerTooLarge(options.maxHeaderBytes);
    } else if (found.end !== -1) {
      const complete = head;
      head = null;
      closeHead(complete, found.end);
    }
  };

  try {
    await eachChunk(stream, (chunk) => {
      // Past a refusal or the size limit the rest is read and dropped: the reply comes after the final dot.
      if (refusal !== null || stream.sizeExceeded === true) return;
      guarded(() => take(chunk));
    });
    if (stream.sizeExceeded === true) refusal ??= replies.messageTooLarge(options.maxMessageBytes);
    // A message without an empty line is all header (RFC 5322 allows no body).
    const unfinished = head;
    if (refusal === null && unfinished !== null) guarded(() => closeHead(unfinished, unfinished.length));
    if (refusal === null && spoolId !== null && heldBytes > 0) guarded(writePart);
    if (refusal !== null) {
      discard(options.spool, spoolId);
      return { ok: false, reply: refusal };
    }
    if (spoolId === null) return { ok: true, content: { kind: 'raw', bytes: Buffer.concat(held) }, sizeBytes };
    return { ok: true, content: { kind: 'spooled', spoolId }, sizeBytes };
  } catch (error) {
    discard(options.spool, spoolId);
    throw error;
  }
}

/**
 * Reads the stream to its end. Listeners, not `for await`: the async iterator and
 * its end-of-stream watcher cost more than the rest of receiving a 2 KB message.
 * smtp-server destroys the stream with an ECONNECTION error when the client
 * leaves mid-DATA; a close without 'end' or an error is treated the same. When
 * `onChunk` throws, the promise rejects and the stream flows on unread, so that
 * smtp-server answers after the final dot.
 */
function eachChunk(stream: DataStream, onChunk: (chunk: Buffer) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      try {
        onChunk(chunk);
      } catch (error) {
        settle(error as Error);
      }
    };
    const settle = (error?: Error): void => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', settle);
      stream.off('close', onClose);
      if (error === undefined) resolve();
      else reject(error);
    };
    const onEnd = (): void => settle();
    const onClose = (): void => settle(Object.assign(new Error('Connection closed before the message was received in full'), { code: 'ECONNECTION' }));
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', settle);
    stream.once('close', onClose);
  });
}

/** Best effort: a spool left behind is swept later (MessageSpool.sweep). */
export function discard(spool: MessageSpool, spoolId: number | null): void {
  if (spoolId === null) return;
  try {
    spool.discard(spoolId);
  } catch {
    // The store cannot write now; the sweep removes it.
  }
}
