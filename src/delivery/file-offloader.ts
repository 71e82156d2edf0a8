/**
 * Where a composition puts the attachments it offloads (core/message/attachment-offload.ts): each
 * file sealed under a data key of its own and written to the body store, durable before the
 * message that links to it is relayed. Its object holds two sealed parts, the file's name and
 * type and then its bytes, each bound to the file's id: moved under another file's row, neither
 * opens. The object's name is new on every attempt, so that the sweep of objects no row names
 * never takes one a later attempt wrote; the one the relay accepted is recorded with the outcome.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  framedParts,
  partsOf,
  type BodyObjects,
  type BodySeal,
  type FileLinks,
  type OffloadedFile,
} from '../core/message/index.js';

/** What a download serves besides the bytes. */
export interface FileFacts {
  filename: string;
  contentType: string;
  sha256: string;
}

export interface FileOffloader {
  /** The daemon's `files.retention_seconds`: the longest a link lives. */
  maxLifetimeSeconds: number;
  offload(
    request: { tenantId: string; clientId: string; index: number },
    file: { filename: string; contentType: string; content: Buffer },
  ): Promise<{ file: OffloadedFile; token: string }>;
}

const factsContext = (fileId: string): string => `file:${fileId}:facts`;
const bytesContext = (fileId: string): string => `file:${fileId}:bytes`;

/** Writes offloaded files to an opened body store (the lifetime of their links is the settings', handoff.ts). */
export function createFileOffloader(deps: {
  links: FileLinks;
  seal: BodySeal;
  objects: BodyObjects;
  /** What begins the names of the objects this daemon writes: in a fleet, the node's own, which its sweep looks at. */
  ownNames: string;
}): Pick<FileOffloader, 'offload'> {
  return {
    async offload({ tenantId, clientId, index }, { filename, contentType, content }) {
      const fileId = deps.links.fileId(tenantId, clientId, index);
      const key = deps.seal.newKey();
      const facts: FileFacts = { filename, contentType, sha256: createHash('sha256').update(content).digest('hex') };
      const object = `${deps.ownNames}${fileId}${randomBytes(8).toString('hex')}`;
      await deps.objects.put(
        object,
        framedParts([
          deps.seal.sealField(key, factsContext(fileId), Buffer.from(JSON.stringify(facts), 'utf8')),
          deps.seal.sealField(key, bytesContext(fileId), content),
        ]),
      );
      return {
        file: { index, fileId, object, key: key.wrapped, sizeBytes: content.length },
        token: deps.links.token(fileId),
      };
    },
  };
}

/** A file as a download serves it, opened; throws when the object is not this file's, or was altered. */
export function openFile(
  seal: BodySeal,
  fileId: string,
  key: Uint8Array,
  object: Buffer,
): { facts: FileFacts; content: Buffer } {
  const [facts, bytes] = partsOf(object);
  if (facts === undefined || bytes === undefined)
    throw new Error('an offloaded file object holds fewer than two parts');
  return {
    facts: JSON.parse(seal.openField(key, factsContext(fileId), facts).toString('utf8')) as FileFacts,
    content: seal.openField(key, bytesContext(fileId), bytes),
  };
}
