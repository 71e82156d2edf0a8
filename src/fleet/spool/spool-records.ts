/**
 * How the fleet's replicated spool (spool-stream.ts) writes its records: a
 * group of entries as one JSON document built around entries already encoded
 * (each is measured once, to pack the groups), stored deflated; ends as a list
 * of pks; a large entry as the name of its object. Records written by an
 * earlier version (one entry each) are still read.
 */
import type { StoredMsg } from '@nats-io/jetstream';
import { promisify } from 'node:util';
import { deflateRaw, inflateRawSync } from 'node:zlib';
import { spoolWireRecordCodec, type SpoolWireRecord } from './spool-wire-schemas.js';

const encoder = new TextEncoder();

/** Packs encoded entries, in order, into groups of at most `limit` bytes (an entry alone over it is the caller's). */
export function packEntries(sizes: readonly number[], limit: number): number[][] {
  const groups: number[][] = [];
  let group: number[] = [];
  let bytes = 0;
  sizes.forEach((size, index) => {
    // The separator and the envelope: `{"entries":[` … `]}`.
    if (group.length > 0 && bytes + size + 1 > limit) {
      groups.push(group);
      group = [];
      bytes = 0;
    }
    group.push(index);
    bytes += size + 1;
  });
  if (group.length > 0) groups.push(group);
  return groups;
}

export const deflate = promisify(deflateRaw);
/** A group record is stored deflated (mail text shrinks about threefold): fewer bytes for the cluster to write three times. */
export const ENCODING = 'Content-Encoding';

/** A record as stored, inflated when it was deflated; throws a WireError when it is not one of the spool's records. */
export function wireOf(message: StoredMsg): SpoolWireRecord {
  const data = message.header?.get(ENCODING) === 'deflate' ? inflateRawSync(message.data) : message.data;
  return spoolWireRecordCodec.decode(data);
}

const OPEN = encoder.encode('{"entries":[');
const CLOSE = encoder.encode(']}');

/** `{"entries":[…]}` around entries already encoded, without encoding them again. */
export function entriesRecord(parts: readonly Uint8Array[]): Uint8Array {
  const record = new Uint8Array(
    OPEN.length + CLOSE.length + parts.reduce((sum, part) => sum + part.length, 0) + Math.max(0, parts.length - 1),
  );
  record.set(OPEN);
  let at = OPEN.length;
  parts.forEach((part, position) => {
    if (position > 0) record[at++] = 0x2c;
    record.set(part, at);
    at += part.length;
  });
  record.set(CLOSE, at);
  return record;
}
