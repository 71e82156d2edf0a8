/**
 * Receives one message's DATA: the header section is held until it is complete
 * and rewritten (our trace and id headers in, control headers out); the rest is
 * passed through untouched. A message that outgrows `memoryBytes` goes to the
 * store's spool a part at a time as it arrives, so a connection never holds
 * more than about one part, whatever the message size.
 */
import type { Readable } from 'node:stream';
import type { MessageContent, MessageSpool } from '../../core/message/index.js';
import { headerEnd, parseFields, rewriteHead, type HeaderField } from './header-section.js';
import { replies, SmtpReply } from './replies.js';

export interface ReceiverOptions {
  spool: MessageSpool;
  /** The tenant whose message this is: its spool's key is bound to it. */
  tenantId: string;
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

export async function receiveMessage(
  stream: DataStream,
  decideHead: (fields: HeaderField[]) => HeadDecision,
  options: ReceiverOptions,
): Promise<Received> {
  const receiver = new MessageReceiver(decideHead, options);
  try {
    await eachChunk(stream, (chunk) => {
      // Past a refusal or the size limit the rest is read and dropped: the reply comes after the final dot.
      if (receiver.refused || stream.sizeExceeded === true) return;
      receiver.take(chunk);
    });
    return receiver.finish(stream.sizeExceeded === true);
  } catch (error) {
    receiver.discard();
    throw error;
  }
}

/**
 * One message on its way in: the header section until it is complete, then
 * the parts held in memory, moved to the spool once they pass `memoryBytes`.
 */
class MessageReceiver {
  /** The header section read so far; null once it is complete and rewritten. */
  private head: Buffer | null = Buffer.alloc(0);
  /** How far `head` was searched for its end already. */
  private scanned = 0;
  private refusal: SmtpReply | null = null;
  private held: Buffer[] = [];
  private heldBytes = 0;
  private sizeBytes = 0;
  private spoolId: number | null = null;
  private nextPart = 0;

  constructor(
    private readonly decideHead: (fields: HeaderField[]) => HeadDecision,
    private readonly options: ReceiverOptions,
  ) {}

  get refused(): boolean {
    return this.refusal !== null;
  }

  /** One chunk of DATA, guarded: a failure refuses the message. */
  take(chunk: Buffer): void {
    this.guarded(() => this.takeChunk(chunk));
  }

  /** After the final dot: the message as received, or the reply that refuses it (its spool discarded). */
  finish(sizeExceeded: boolean): Received {
    if (sizeExceeded) this.refusal ??= replies.messageTooLarge(this.options.maxMessageBytes);
    // A message without an empty line is all header (RFC 5322 allows no body).
    const unfinished = this.head;
    if (this.refusal === null && unfinished !== null) this.guarded(() => this.closeHead(unfinished, unfinished.length));
    if (this.refusal === null && this.spoolId !== null && this.heldBytes > 0) this.guarded(() => this.writePart());
    if (this.refusal !== null) {
      this.discard();
      return { ok: false, reply: this.refusal };
    }
    if (this.spoolId === null)
      return { ok: true, content: { kind: 'raw', bytes: Buffer.concat(this.held) }, sizeBytes: this.sizeBytes };
    return { ok: true, content: { kind: 'spooled', spoolId: this.spoolId }, sizeBytes: this.sizeBytes };
  }

  discard(): void {
    discard(this.options.spool, this.spoolId);
  }

  private takeChunk(chunk: Buffer): void {
    if (this.head === null) {
      this.keep(chunk);
      return;
    }
    const head = this.head.length === 0 ? chunk : Buffer.concat([this.head, chunk]);
    this.head = head;
    const found = headerEnd(head, this.scanned);
    this.scanned = found.scanned;
    const { maxHeaderBytes } = this.options;
    if (found.end > maxHeaderBytes || (found.end === -1 && head.length > maxHeaderBytes)) {
      // Whether the section ended in this read or not: the limit is on the section, not on a read.
      this.refusal = replies.headerTooLarge(maxHeaderBytes);
    } else if (found.end !== -1) {
      this.head = null;
      this.closeHead(head, found.end);
    }
  }

  private closeHead(bytes: Buffer, end: number): void {
    const decision = this.decideHead(parseFields(bytes.subarray(0, end)));
    if (decision instanceof SmtpReply) {
      this.refusal = decision;
      return;
    }
    this.keep(rewriteHead(bytes.subarray(0, end), decision.drop, decision.prepend));
    this.keep(bytes.subarray(end));
  }

  private keep(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.held.push(bytes);
    this.heldBytes += bytes.length;
    this.sizeBytes += bytes.length;
    if (this.heldBytes >= this.options.memoryBytes) this.writePart();
  }

  private writePart(): void {
    const spoolId = (this.spoolId ??= this.options.spool.open(this.options.now(), this.options.tenantId));
    this.options.spool.append(
      spoolId,
      this.nextPart,
      this.held.length === 1 ? (this.held[0] as Buffer) : Buffer.concat(this.held),
    );
    this.nextPart += 1;
    this.held = [];
    this.heldBytes = 0;
  }

  /** A spool write that fails (store full) refuses the message; the stream is still read to its end. */
  private guarded(step: () => void): void {
    try {
      step();
    } catch (error) {
      this.options.onStoreError(error);
      this.refusal = replies.storeFailed();
    }
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
    const onClose = (): void =>
      settle(
        Object.assign(new Error('Connection closed before the message was received in full'), { code: 'ECONNECTION' }),
      );
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
