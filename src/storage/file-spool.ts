/**
 * The spool of large SMTP submissions when there is a body store (issue 46): each part sealed as
 * it arrives, as the database's spool seals it, and appended to a file of its own under the data
 * directory's `spool/`, never to the database, which then does not grow with the mail in transit.
 * Once the message is complete the body store takes its sealed parts (body-offload.ts) and the
 * file goes. The file needs no fsync: the 250 waits for the object the store keeps, not for it.
 * Its data key lives only in memory: after a stop every file left is unreadable, and removed at
 * the next start. The port is synchronous (the SMTP receiver writes a part as it reads one), as
 * the database's writes are.
 */
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { framedParts, type BodySeal, type DataKey, type MessageSpool } from '../core/message/index.js';

/**
 * A spool's key (wrapped) and its sealed parts framed as a body object holds them (framedParts),
 * so the store takes the file as it is; the key empty when the spool is gone.
 */
export interface SpoolContent {
  key: Uint8Array;
  framed: Buffer;
}

export interface FileSpool extends MessageSpool {
  read(spoolId: number): SpoolContent;
}

interface OpenSpool {
  key: DataKey;
  tenantId: string;
  fd: number;
  at: number;
}

export function createFileSpool(directory: string, seal: BodySeal): FileSpool {
  // Nothing is being received yet: whatever is here was left by a stop, and its keys are gone.
  rmSync(directory, { recursive: true, force: true });
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const open = new Map<number, OpenSpool>();
  let next = 0;
  const pathOf = (spoolId: number): string => join(directory, `${spoolId}.spool`);
  const close = (spoolId: number): void => {
    const spool = open.get(spoolId);
    if (spool === undefined) return;
    open.delete(spoolId);
    closeSync(spool.fd);
    rmSync(pathOf(spoolId), { force: true });
  };
  return {
    open(now, tenantId) {
      next += 1;
      const fd = openSync(pathOf(next), 'wx', 0o600);
      open.set(next, { key: seal.newKey(), tenantId, fd, at: now });
      return next;
    },
    append(spoolId, seq, bytes) {
      const spool = open.get(spoolId);
      if (spool === undefined) throw new Error(`spool ${spoolId} is not open for writing`);
      const framed = framedParts([seal.seal(spool.key, spool.tenantId, seq, bytes)]);
      for (let written = 0; written < framed.length;)
        written += writeSync(spool.fd, framed, written, framed.length - written);
    },
    read(spoolId) {
      const spool = open.get(spoolId);
      if (spool === undefined) return { key: Buffer.alloc(0), framed: Buffer.alloc(0) };
      return { key: spool.key.wrapped, framed: readFileSync(pathOf(spoolId)) };
    },
    discard: close,
    sweep(before) {
      let swept = 0;
      for (const [spoolId, spool] of open)
        if (spool.at < before) {
          close(spoolId);
          swept += 1;
        }
      // A file without an open spool was left by a failure between the two: nothing can read it.
      for (const name of readdirSync(directory))
        if (!open.has(Number.parseInt(name, 10))) rmSync(join(directory, name), { force: true });
      return swept;
    },
  };
}
