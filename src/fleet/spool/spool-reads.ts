/**
 * Reading a fleet node's spool back (an adopter's replay, a start's
 * reconciling): the records' subjects, an index of each record (which
 * messages it holds or ends) without its entries, one record whole with its
 * large entries' objects read back, and the records an erasure removes.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import type { StoredMsg } from '@nats-io/jetstream';
import type { SpoolRecordIndex } from '../../core/fleet/index.js';
import { isNotFound, managerOf } from '../../nats/index.js';
import type { HeldRecord, SpoolAccess, SpoolOwner } from './spool-access.js';
import { wireOf } from './spool-records.js';
import { spoolEntryCodec, type SpoolWireRecord } from './spool-wire-schemas.js';

/** A record as an erasure removes it: the messages it holds entries of, and the objects those keep their bytes in. */
export interface ErasableRecord {
  seq: number;
  subject: string;
  pks: number[];
  objects: string[];
}

/** The pk a large entry's record names in its subject's last token. */
const pkOfSubject = (subject: string): number => Number(subject.slice(subject.lastIndexOf('.') + 1));

/** Which messages a record holds (or ends), as a replay plan needs it. */
function indexOf(subject: string, message: StoredMsg): SpoolRecordIndex {
  const wire = wireOf(message);
  const { seq } = message;
  if ('entries' in wire) return { seq, pks: wire.entries.map((entry) => entry.origin_pk) };
  if ('ended' in wire) return { seq, ended: wire.ended };
  if ('object' in wire) return { seq, pks: [pkOfSubject(subject)] };
  return { seq, pks: [wire.origin_pk] };
}

/** What erasing a record takes: null for a record of no entry (ends name pks only) or not a spool record. */
function erasableOf(subject: string, message: StoredMsg): ErasableRecord | null {
  let wire: SpoolWireRecord;
  try {
    wire = wireOf(message);
  } catch {
    return null;
  }
  const { seq } = message;
  if ('ended' in wire) return null;
  if ('entries' in wire) return { seq, subject, pks: wire.entries.map((entry) => entry.origin_pk), objects: [] };
  if ('object' in wire) return { seq, subject, pks: [pkOfSubject(subject)], objects: [wire.object] };
  return { seq, subject, pks: [wire.origin_pk], objects: wire.raw_object === undefined ? [] : [wire.raw_object] };
}

export function createSpoolReads(access: SpoolAccess) {
  const { lastOn, subjectsOf, objects } = access;

  /**
   * A record as read off the stream, large entries' objects read back; null when its object is
   * gone (a finished message's object goes once its record was purged: it was, since the listing).
   */
  const readRecord = async (
    nc: NatsConnection,
    subject: string,
    seq: number,
    wire: SpoolWireRecord,
  ): Promise<HeldRecord | null> => {
    if ('entries' in wire) return { subject, record: { seq, entries: wire.entries }, objects: [] };
    if ('ended' in wire) return { subject, record: { seq, ended: wire.ended }, objects: [] };
    if ('object' in wire) {
      const bytes = await objects.bytes(nc, wire.object);
      if (bytes === null) return null;
      return { subject, record: { seq, entries: [spoolEntryCodec.decode(bytes)] }, objects: [wire.object] };
    }
    // An earlier version's record: one entry, its raw bytes perhaps in an object.
    const { raw_object: object, ...entry } = wire;
    if (object === undefined) return { subject, record: { seq, entries: [entry] }, objects: [] };
    const bytes = await objects.bytes(nc, object);
    if (bytes === null) return null;
    return {
      subject,
      record: { seq, entries: [{ ...entry, raw_base64: Buffer.from(bytes).toString('base64') }] },
      objects: [object],
    };
  };

  return {
    subjects: subjectsOf,
    /** The stream's last sequence now (every node's writes): any record written after has a higher one. */
    async lastSeq(nc: NatsConnection): Promise<number> {
      await access.provision(nc);
      return (await (await managerOf(nc)).streams.info(access.settings.stream)).state.last_seq;
    },
    /** The pks the spool holds a record of their own for (large entries). */
    async pks(nc: NatsConnection, owner: SpoolOwner): Promise<number[]> {
      return (await subjectsOf(nc, owner)).map(pkOfSubject).filter((pk) => Number.isSafeInteger(pk));
    },
    /** Whether the spool holds any record. */
    async holdsRecords(nc: NatsConnection, owner: SpoolOwner): Promise<boolean> {
      return (await subjectsOf(nc, owner)).length > 0;
    },
    /**
     * Every record of a spool, as an index (which messages each holds, or ends), oldest first:
     * what a replay plan needs, without holding the entries (a lost node's queue may be large).
     */
    async indexes(nc: NatsConnection, owner: SpoolOwner): Promise<Array<{ subject: string; index: SpoolRecordIndex }>> {
      const found: Array<{ subject: string; index: SpoolRecordIndex }> = [];
      for (const subject of await subjectsOf(nc, owner)) {
        const message = await lastOn(nc, subject);
        if (message !== null) found.push({ subject, index: indexOf(subject, message) });
      }
      return found.sort((a, b) => a.index.seq - b.index.seq);
    },
    /** One record whole (large entries read back from their objects); null once it was removed. */
    async read(nc: NatsConnection, subject: string): Promise<HeldRecord | null> {
      const message = await lastOn(nc, subject);
      return message === null ? null : readRecord(nc, subject, message.seq, wireOf(message));
    },
  };
}

/** The records an erasure removes (spool-erasure.ts): found by their sequence, or read off the stream. */
export function createErasableReads(access: SpoolAccess) {
  const { lastOn, subjectsOf, prefixOf } = access;
  return {
    /** The record at stream sequence `seq`, if it is one of the owner's holding entries; null once it was removed. */
    async recordAt(nc: NatsConnection, owner: SpoolOwner, seq: number): Promise<ErasableRecord | null> {
      await access.provision(nc);
      const message = await (await managerOf(nc)).streams.getMessage(access.settings.stream, { seq }).catch((error) => {
        if (isNotFound(error)) return null;
        throw error;
      });
      if (message === null || !message.subject.startsWith(`${prefixOf(owner)}.`)) return null;
      return erasableOf(message.subject, message);
    },
    /**
     * Every record of the owner's spool holding an entry of any of these messages, read off the
     * stream (one request per record): when the ledger cannot say where they all are.
     */
    async recordsHolding(nc: NatsConnection, owner: SpoolOwner, pks: readonly number[]): Promise<ErasableRecord[]> {
      const wanted = new Set(pks);
      const found: ErasableRecord[] = [];
      for (const subject of await subjectsOf(nc, owner)) {
        const message = await lastOn(nc, subject);
        const record = message === null ? null : erasableOf(subject, message);
        if (record !== null && record.pks.some((pk) => wanted.has(pk))) found.push(record);
      }
      return found;
    },
  };
}
