/**
 * What following an offloaded attachment's link does (attachment-offload.ts). The token is checked
 * before anything is looked up: a guessed, forged or altered one, or one naming no file, gets the
 * same answer as any other, in the same time. A file whose link expired or whose message was
 * erased is gone. Each download of the whole file (or of a range from its first byte) is counted
 * and reported to the client as `downloaded`. In a fleet sharing its body store, a link works on
 * any node: the file's record is asked of the node that sent its message (fleet/view/fleet-files.ts).
 */
import type { Clock } from '../clock.js';
import type { FileLinks } from './attachment-offload.js';

/** A file as the store finds it by its id (store/message-files.ts). */
export interface FileRecord {
  fileId: string;
  /** Null once expired or erased. */
  object: string | null;
  key: Uint8Array | null;
  expiresAt: number;
  /** The fleet node that keeps the record, when another node serves the link; absent: this node. */
  node?: string;
}

/** Where downloads find files and count them: this node's store, or the fleet's nodes. */
export interface FileFinder {
  /** The file a link names, live or not; null when there is none. Throws FLEET_UNAVAILABLE when a node that may keep it did not answer. */
  find(fileId: string): FileRecord | null | Promise<FileRecord | null>;
  /** Counts a download where the record is kept. */
  downloaded(file: FileRecord, at: number): void | Promise<void>;
}

/** A file opened: its name, type and bytes. */
export interface OpenedFile {
  filename: string;
  contentType: string;
  sha256: string;
  content: Buffer;
}

export interface FileDownloadsDeps {
  links: FileLinks;
  files: FileFinder;
  /** The file's object opened under its key; null when the body store no longer has it. */
  open(file: FileRecord & { object: string; key: Uint8Array }): Promise<OpenedFile | null>;
  clock: Clock;
}

export type DownloadAnswer = { kind: 'file'; file: OpenedFile } | { kind: 'gone' } | { kind: 'unknown' };

export interface FileDownloads {
  /** `counted`: a download to count (a GET of the file or of a range from its start; not a HEAD). */
  download(token: string, counted: boolean): Promise<DownloadAnswer>;
}

export function createFileDownloads(deps: FileDownloadsDeps): FileDownloads {
  return {
    async download(token, counted) {
      const fileId = deps.links.open(token);
      const file = fileId === null ? null : await deps.files.find(fileId);
      if (file === null) return { kind: 'unknown' };
      const now = deps.clock.now();
      if (file.object === null || file.key === null || file.expiresAt <= now) return { kind: 'gone' };
      const opened = await deps.open({ ...file, object: file.object, key: file.key });
      if (opened === null) return { kind: 'gone' };
      if (counted) await deps.files.downloaded(file, now);
      return { kind: 'file', file: opened };
    },
  };
}
