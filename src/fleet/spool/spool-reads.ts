/**
 * Reading a fleet node's spool back (an adopter's replay, a start's
 * reconciling): the records' subjects, an index of each record (which
 * messages it holds or ends) without its entries, one record whole with its
 * large entries' objects read back.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import type { StoredMsg } from '@nats-io/jetstream';
import type { SpoolRecordIndex } from '../../core/fleet/index.js';
import { managerOf } from '../../nats/index.js';
import type { HeldRecord, SpoolAccess, SpoolOwner } from './spool-access.js';
import { wireOf } from './spool-records.js';
import { spoolEntryCodec, type SpoolWireRecord } from './spool-wire-schemas.js';

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
