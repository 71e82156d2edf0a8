/**
 * Offloaded attachments' links served by any node of a fleet sharing its body store: a file's
 * record (its object, wrapped key and expiry) is kept by the node that sent its message, in its
 * database. A link followed on another node asks every live node for the record, reads the
 * object from the shared store itself, and has the download counted where the record is. A
 * node that may keep it and does not answer makes the link unavailable (503), not unknown.
 */
import { AppError, type Logger } from '../../core/index.js';
import type { FileFinder, FileRecord } from '../../core/message/index.js';
import { createFleetAsker, missingOf } from '../link/fleet-asker.js';
import type { FleetLink } from '../link/fleet-service.js';
import { ASK_DEADLINE_MS } from './fleet-messages.js';
import { fileWireSchema, type FileWire } from './view-wire-schemas.js';

/** This node's files (store/message-files.ts). */
export interface LocalFiles {
  find(fileId: string): FileRecord | null;
  downloaded(fileId: string, at: number): void;
}

export const fileToWire = (file: FileRecord | null): FileWire | null =>
  file === null
    ? null
    : {
        file_id: file.fileId,
        object: file.object,
        key: file.key === null ? null : Buffer.from(file.key).toString('base64'),
        expires_at: file.expiresAt,
      };

const fileFromWire = (wire: FileWire, node: string): FileRecord => ({
  fileId: wire.file_id,
  object: wire.object,
  key: wire.key === null ? null : Buffer.from(wire.key, 'base64'),
  expiresAt: wire.expires_at,
  node,
});

export function createFleetFiles(deps: {
  link: FleetLink;
  /** Every node the membership knows of (alive or not). */
  known(): string[];
  local: LocalFiles;
  log: Logger;
}): FileFinder {
  const { local, log } = deps;
  const asker = createFleetAsker({ link: deps.link, known: deps.known, log, deadlineMs: ASK_DEADLINE_MS });
  return {
    async find(fileId) {
      const here = local.find(fileId);
      if (here !== null) return here;
      const { others, absent } = asker.reach();
      const answers = await Promise.all(others.map((node) => asker.ask(node, 'file', { file_id: fileId })));
      // A node that answered with an error, or with what is not a file, may keep it as much as a silent one.
      const failed: string[] = [];
      for (const answer of answers) {
        if (!('reply' in answer)) continue;
        const read = 'ok' in answer.reply ? fileWireSchema.safeParse(answer.reply.ok) : null;
        if (read === null || !read.success) {
          log.warn({ node: answer.node }, 'a fleet node did not answer a file lookup with a file record');
          failed.push(answer.node);
        } else if (read.data !== null) return fileFromWire(read.data, answer.node);
      }
      const missing = [...missingOf(answers, absent), ...failed];
      if (missing.length === 0) return null;
      // Named in the log, not to the caller: the route is public, and node names are the operator's.
      log.warn({ missing_nodes: missing }, 'a file link could not be looked up on every node');
      throw new AppError('FLEET_UNAVAILABLE', 'the node that keeps this file may be one that does not answer');
    },
    async downloaded(file, at) {
      if (file.node === undefined) return local.downloaded(file.fileId, at);
      const answer = await asker.ask(file.node, 'file-downloaded', { file_id: file.fileId, at });
      // The file is served all the same: a count lost with a node is better than a download refused.
      if ('missing' in answer)
        log.warn({ node: file.node }, 'a download was not counted: the node that keeps the file did not answer');
    },
  };
}
