/**
 * The fleet's replicated spool on JetStream (the records' encoding
 * is spool-records.ts): one stream, each node's records under
 * `<prefix>.<node>.<instance>.>` (the instance names the
 * data directory: a node on a new disk starts its pks again, and must never
 * overwrite what its lost disk left to adopt). Records (core/fleet/cluster-spool.ts):
 *
 * - `g<life>-<n>`: the entries of messages written together, as many as one
 *   NATS message holds: one replicated write for a whole commit's messages
 *   rather than one each (the write is what a fleet node's intake pays for).
 * - `e<life>-<n>`: the messages whose end was recorded.
 * - `<pk>`: an entry larger than a NATS message (a large SMTP submission): its
 *   JSON is kept in the object store `<stream>_large` (R as the stream,
 *   chunked by nats.js) and the record names the object, written after it.
 *
 * `life` is random per process, so that no record of an earlier life is
 * replaced by a later one's; `max_msgs_per_subject` 1 lets a large entry
 * written again replace its record. Writing is spool-writes.ts, reading back
 * spool-reads.ts; this file joins them with the removals (an erased
 * message's records overwritten rather than purged).
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { managerOf } from '../../nats/index.js';
import { createSpoolAccess, type HeldRecord, type SpoolOwner, type SpoolStreamSettings } from './spool-access.js';
import { createErasableReads, createSpoolReads, type ErasableRecord } from './spool-reads.js';
import { wireOf } from './spool-records.js';
import { createSpoolWrites } from './spool-writes.js';

export type { HeldRecord, SpoolOwner, SpoolStreamSettings } from './spool-access.js';
export type { ErasableRecord } from './spool-reads.js';

export function createSpoolStream(settings: SpoolStreamSettings) {
  const access = createSpoolAccess(settings);
  const { provision, purge, prefixOf, subjectOf, objects } = access;
  return {
    provision,
    ...createSpoolWrites(access),
    ...createSpoolReads(access),
    ...createErasableReads(access),
    /**
     * Removes every record of the spool below stream sequence `seq`: a node's finished messages go
     * together, below the oldest entry it still needs, rather than one request each.
     */
    removeBelow: (nc: NatsConnection, owner: SpoolOwner, seq: number): Promise<void> =>
      purge(nc, `${prefixOf(owner)}.>`, seq),
    /** Whether this process wrote an object for the message's entry. */
    holdsObject: (owner: SpoolOwner, pk: number): boolean => objects.wrote(subjectOf(owner, pk)),
    /** A finished message's object, if this process wrote one, goes at once; its record goes with removeBelow. */
    release: (nc: NatsConnection, owner: SpoolOwner, pk: number): Promise<void> =>
      objects.release(nc, subjectOf(owner, pk)),
    /** Removes a large entry's record this process may not have written (a start's reconciling), its object read off the record first. */
    async removeStale(nc: NatsConnection, owner: SpoolOwner, pk: number): Promise<void> {
      await provision(nc);
      const subject = subjectOf(owner, pk);
      const wire = await (
        await managerOf(nc)
      ).streams
        .getMessage(settings.stream, { last_by_subj: subject })
        .then((message) => (message === null ? null : wireOf(message)))
        .catch(() => null);
      await purge(nc, subject);
      const object =
        wire === null ? undefined : 'object' in wire ? wire.object : 'raw_object' in wire ? wire.raw_object : undefined;
      if (object !== undefined) await objects.remove(nc, object);
      objects.forget(subject);
    },
    /**
     * Removes a record for good (an erasure): JetStream's secure delete overwrites the message on
     * every server, where a purge only marks it deleted and the file store keeps its bytes until it
     * compacts; its entries' objects are overwritten likewise. A record already gone is done.
     */
    async eraseRecord(nc: NatsConnection, record: Pick<ErasableRecord, 'seq' | 'subject' | 'objects'>): Promise<void> {
      await provision(nc);
      const jsm = await managerOf(nc);
      await jsm.streams.deleteMessage(settings.stream, record.seq, true).catch(async (error: unknown) => {
        // The server answers a sequence not there with the code of any failed delete (10057): asked whether it is.
        if ((await jsm.streams.getMessage(settings.stream, { seq: record.seq })) !== null) throw error;
      });
      for (const name of record.objects) await objects.erase(nc, name);
      objects.forget(record.subject);
    },
    /** Removes one record and the objects its entries kept their bytes in. */
    async removeRecord(nc: NatsConnection, held: Pick<HeldRecord, 'subject' | 'objects'>): Promise<void> {
      await purge(nc, held.subject);
      for (const name of held.objects) await objects.remove(nc, name);
    },
  };
}

export type SpoolStream = ReturnType<typeof createSpoolStream>;
