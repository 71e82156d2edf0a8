/**
 * Large bodies go to the body store before the commit (issue 46): every submission, whichever
 * edge it came by (HTTP, SMTP, a JetStream command), has each body above `inlineMaxBytes` sealed
 * (if its edge did not already seal it) and written to the store, and reaches the queue naming
 * its object instead of carrying its bytes. A body SMTP spooled as it arrived (sealed part by
 * part in a file beside the store: file-spool.ts) goes to the store in its sealed parts whatever
 * its size, and its spool is discarded once the message is committed. The 250/200 still waits for the commit, which now
 * comes after the object is durable; a store that does not take a body refuses the whole
 * submission (503 / 451 4.3.0), so nothing is accepted that cannot be kept.
 *
 * An object whose message was then not stored (rejected, or a repeat of an id already sent) is
 * removed at once. One whose submission failed after the write is left: its key was never
 * committed, so it can never be read, only swept.
 */
import { AppError, type Logger } from '../core/index.js';
import {
  framedParts,
  type BodyObjects,
  type BodySeal,
  type MessageContent,
  type SubmissionItem,
  type SubmissionService,
} from '../core/message/index.js';
import type { Principal } from '../core/tenant/index.js';
import type { FileSpool } from './file-spool.js';

export interface BodyOffloadDeps {
  objects: Pick<BodyObjects, 'put' | 'remove'>;
  seal: BodySeal;
  /** A body larger than this (sealed) goes to the store; one as large or smaller stays in the database. */
  inlineMaxBytes: number;
  /** A new object name: unique, made of lower-case hex. */
  newName: () => string;
  /** The spool of large SMTP submissions (file-spool.ts): their sealed parts and key, read to move them. */
  spools: Pick<FileSpool, 'read' | 'discard'>;
  log: Logger;
}

/** The size a body is stored at (about: a sealed part adds a few dozen bytes); 0 for one in the store already. */
function sizeOf(content: MessageContent): number {
  switch (content.kind) {
    case 'sealed':
      return content.body.byteLength;
    case 'raw':
      return content.bytes.byteLength;
    case 'payload':
      return Buffer.byteLength(content.json, 'utf8');
    case 'spooled':
      // Spooled beside the body store, never in the database: it always goes to the store.
      return Number.POSITIVE_INFINITY;
    case 'stored':
      return 0;
  }
}

const goesToStore = (item: SubmissionItem, inlineMaxBytes: number): boolean =>
  item.message !== undefined && sizeOf(item.message.content) > inlineMaxBytes;

/** A body sealed for its tenant as its object holds it (framedParts), with its wrapped key and source; null to leave it where it is. */
type Sealed = { key: Uint8Array; framed: Uint8Array; source?: 'smtp' } | null;

function sealedOf(content: MessageContent, tenantId: string, deps: BodyOffloadDeps): Sealed {
  switch (content.kind) {
    case 'sealed':
      // Sealed for another tenant than the one it is admitted to: the store seals it again, inline.
      if (content.tenantId !== tenantId) return null;
      return {
        key: content.key,
        framed: framedParts([content.body]),
        ...(content.source === undefined ? {} : { source: 'smtp' }),
      };
    case 'raw':
    case 'payload': {
      const key = deps.seal.newKey();
      const bytes = content.kind === 'raw' ? content.bytes : Buffer.from(content.json, 'utf8');
      const framed = framedParts([deps.seal.seal(key, tenantId, 0, bytes)]);
      return { key: key.wrapped, framed, ...(content.kind === 'raw' ? { source: 'smtp' as const } : {}) };
    }
    case 'spooled': {
      // The spool's file is framed already: the store takes it as it is.
      const { key, framed } = deps.spools.read(content.spoolId);
      // Gone (swept as abandoned): nothing of it can be kept, and the database has no spool of that number.
      if (key.length === 0) throw new Error('the spooled message is gone');
      return { key, framed, source: 'smtp' };
    }
    case 'stored':
      return null;
  }
}

export function createBodyOffload(inner: SubmissionService, deps: BodyOffloadDeps): SubmissionService {
  const { objects, log } = deps;
  const removeLater = (names: readonly string[]): void => {
    for (const name of names)
      objects.remove(name).catch((error: unknown) => {
        log.warn({ err: error }, 'an unused body object could not be removed; it holds nothing readable');
      });
  };

  /** The item with its body in the store, or as it was; `written` collects what was put. */
  const offload = async (
    item: SubmissionItem,
    principal: Principal,
    written: Map<number, string>,
  ): Promise<SubmissionItem> => {
    const message = item.message;
    if (message === undefined || !goesToStore(item, deps.inlineMaxBytes)) return item;
    const tenantId = principal.kind === 'tenant' ? principal.tenantId : item.tenantId;
    // A spooled body must reach the store: the database has no spool of its number.
    if (tenantId === undefined && message.content.kind === 'spooled')
      throw new Error('a spooled message names no tenant');
    if (tenantId === undefined) return item;
    const sealed = sealedOf(message.content, tenantId, deps);
    if (sealed === null) return item;
    const object = deps.newName();
    await objects.put(object, sealed.framed);
    written.set(item.index, object);
    const { key, source } = sealed;
    const content: MessageContent = {
      kind: 'stored',
      tenantId,
      key,
      object,
      ...(source === undefined ? {} : { source }),
    };
    return { ...item, message: { ...message, content } };
  };

  return {
    async enqueue(principal, items, defaultPriority, correlationId, alongside) {
      // Most mail is small: it goes on as it came, without a promise per message.
      if (!items.some((item) => goesToStore(item, deps.inlineMaxBytes)))
        return inner.enqueue(principal, items, defaultPriority, correlationId, alongside);
      const written = new Map<number, string>();
      let offloaded: SubmissionItem[];
      try {
        offloaded = await Promise.all(items.map((item) => offload(item, principal, written)));
      } catch (error) {
        removeLater([...written.values()]);
        // What failed stays here (it may name paths or the bucket): the client learns that the store did not answer.
        log.warn({ err: error }, 'the body store did not take a submission; refused');
        throw new AppError('STORE_UNAVAILABLE', 'the body store did not take the message; nothing was accepted', {
          transient: true,
          details: { reason: 'body_store' },
          cause: error,
        });
      }
      const result = await inner.enqueue(principal, offloaded, defaultPriority, correlationId, alongside);
      // The spools moved to the store: no message names them any more (a rejected one's too).
      for (const item of items)
        if (item.message?.content.kind === 'spooled' && written.has(item.index))
          deps.spools.discard(item.message.content.spoolId);
      if (written.size > 0) {
        const unused = result.rejected.flatMap((rejection) => {
          const name = written.get(rejection.index);
          return name === undefined ? [] : [name];
        });
        removeLater(unused);
      }
      return result;
    },
  };
}
