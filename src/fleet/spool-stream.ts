/**
 * The fleet's replicated spool on JetStream (issue 25; the records' encoding
 * is spool-records.ts): one stream, each node's records under
 * `<prefix>.<node>.<instance>.>` (the instance names the
 * data directory: a node on a new disk starts its pks again, and must never
 * overwrite what its lost disk left to adopt). Records (core/cluster-spool.ts):
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
 * written again replace its record.
 */
import { randomBytes } from 'node:crypto';
import { headers, StorageType, type NatsConnection, type ObjectStore, type StoredMsg } from 'nats';
import type { SpoolRecord, SpoolRecordIndex } from '../core/cluster-spool.js';
import type { StoredTransfer } from '../core/fleet-drain.js';
import { createAckPublisher, type AckPublisher } from '../outbox/ack-publisher.js';
import { fleetStream } from './fleet-stream.js';
import { deflate, ENCODING, entriesRecord, packEntries, wireOf, type WireRecord } from './spool-records.js';

/** A record read back, with what removing it takes. */
export interface HeldRecord {
  subject: string;
  record: SpoolRecord;
  /** The objects its entries keep their bytes in. */
  objects: string[];
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** Room left in a NATS message beside a record (headers, subject). */
const HEADROOM = 4096;
/** A record not acknowledged by then is written again by the spool's next round. */
const ACK_TIMEOUT_MS = 5000;

export interface SpoolStreamSettings {
  stream: string;
  subjectPrefix: string;
  replicas: number;
}

/** What a write of entries left on the stream: the sequence holding each pk's entry, and each record's subject by sequence. */
export interface WrittenRecords {
  seqs: Map<number, number>;
  subjects: Map<number, string>;
}

/** One node's spool on one data directory. */
export interface SpoolOwner {
  node: string;
  instance: string;
}

export function createSpoolStream(settings: SpoolStreamSettings) {
  const life = randomBytes(4).toString('hex');
  let written = 0;
  const recordName = (kind: 'g' | 'e'): string => `${kind}${life}-${(written += 1).toString(36)}`;
  let objects: Promise<ObjectStore> | null = null;
  /** The objects this process wrote, by pk subject: a finished message's object goes without reading its record first. */
  const objectsWritten = new Map<string, string>();
  const objectStore = (nc: NatsConnection): Promise<ObjectStore> => {
    objects ??= nc
      .jetstream()
      .views.os(`${settings.stream}_large`, { replicas: settings.replicas, storage: StorageType.File })
      .catch((error: unknown) => {
        objects = null;
        throw error;
      });
    return objects;
  };
  const prefixOf = (owner: SpoolOwner): string => `${settings.subjectPrefix}.${owner.node}.${owner.instance}`;
  const subjectOf = (owner: SpoolOwner, pk: number): string => `${prefixOf(owner)}.${pk}`;

  let publisher: { nc: NatsConnection; acks: AckPublisher } | null = null;
  const acks = (nc: NatsConnection): AckPublisher => {
    if (publisher?.nc !== nc) {
      publisher?.acks.close();
      publisher = { nc, acks: createAckPublisher(nc, ACK_TIMEOUT_MS) };
    }
    return publisher.acks;
  };
  const ensureStream = fleetStream({
    name: settings.stream,
    subjectPrefix: settings.subjectPrefix,
    replicas: settings.replicas,
    limits: { max_msgs_per_subject: 1 },
  });
  const provision = async (nc: NatsConnection): Promise<void> => void (await ensureStream(nc));
  const purge = async (nc: NatsConnection, filter: string, seq?: number): Promise<void> => {
    await provision(nc);
    await (await nc.jetstreamManager()).streams.purge(settings.stream, seq === undefined ? { filter } : { filter, seq });
  };
  const deleteObject = async (nc: NatsConnection, name: string): Promise<void> => void (await (await objectStore(nc)).delete(name));

  /** A large entry: its JSON in an object, then the record naming it. */
  const putLarge = async (nc: NatsConnection, owner: SpoolOwner, pk: number, json: Uint8Array): Promise<number> => {
    const subject = subjectOf(owner, pk);
    const name = subject.slice(settings.subjectPrefix.length + 1);
    await (await objectStore(nc)).putBlob({ name }, json);
    objectsWritten.set(subject, name);
    return acks(nc).publish(subject, encoder.encode(JSON.stringify({ object: name } satisfies WireRecord)));
  };

  const objectBytes = async (nc: NatsConnection, name: string): Promise<Uint8Array | null> => (await objectStore(nc)).getBlob(name);

  /**
   * A record as read off the stream, large entries' objects read back; null when its object is
   * gone (a finished message's object goes once its record was purged: it was, since the listing).
   */
  const readRecord = async (nc: NatsConnection, subject: string, seq: number, wire: WireRecord): Promise<HeldRecord | null> => {
    if ('entries' in wire) return { subject, record: { seq, entries: wire.entries }, objects: [] };
    if ('ended' in wire) return { subject, record: { seq, ended: wire.ended }, objects: [] };
    if ('object' in wire) {
      const bytes = await objectBytes(nc, wire.object);
      if (bytes === null) return null;
      return { subject, record: { seq, entries: [JSON.parse(decoder.decode(bytes)) as StoredTransfer] }, objects: [wire.object] };
    }
    // An earlier version's record: one entry, its raw bytes perhaps in an object.
    const { raw_object: object, ...entry } = wire;
    if (object === undefined) return { subject, record: { seq, entries: [entry] }, objects: [] };
    const bytes = await objectBytes(nc, object);
    if (bytes === null) return null;
    return { subject, record: { seq, entries: [{ ...entry, raw_base64: Buffer.from(bytes).toString('base64') }] }, objects: [object] };
  };

  /** The record on a subject, null when there is none (purged since it was listed). */
  const lastOn = async (nc: NatsConnection, subject: string): Promise<StoredMsg | null> => {
    try {
      return await (await nc.jetstreamManager()).streams.getMessage(settings.stream, { last_by_subj: subject });
    } catch (error) {
      if ((error as { api_error?: { code?: number } }).api_error?.code === 404) return null;
      throw error;
    }
  };

  /** The subjects of every record a spool holds now. */
  const subjectsOf = async (nc: NatsConnection, owner: SpoolOwner): Promise<string[]> => {
    await provision(nc);
    const info = await (await nc.jetstreamManager()).streams.info(settings.stream, { subjects_filter: `${prefixOf(owner)}.>` });
    return Object.keys(info.state.subjects ?? {});
  };

  return {
    provision,
    /**
     * Writes these messages' entries (each already encoded, as SpoolRows.entriesOf gives it):
     * together, in as few records as NATS messages allow (a large one in an object of its own).
     * Answers the stream sequence holding each pk's entry, and each record's subject by sequence.
     */
    async putMany(nc: NatsConnection, owner: SpoolOwner, entries: ReadonlyArray<readonly [pk: number, json: Uint8Array]>): Promise<WrittenRecords> {
      await provision(nc);
      const limit = (nc.info?.max_payload ?? 1024 * 1024) - HEADROOM;
      const seqs = new Map<number, number>();
      const subjects = new Map<number, string>();
      const small: Array<readonly [number, Uint8Array]> = [];
      const writes: Array<Promise<void>> = [];
      for (const [pk, json] of entries) {
        if (json.length + 16 <= limit) small.push([pk, json]);
        else
          writes.push(
            putLarge(nc, owner, pk, json).then((seq) => {
              seqs.set(pk, seq);
              subjects.set(seq, subjectOf(owner, pk));
            }),
          );
      }
      for (const group of packEntries(
        small.map(([, json]) => json.length),
        limit - 16,
      )) {
        const members = group.map((position) => small[position] as readonly [number, Uint8Array]);
        const record = entriesRecord(members.map(([, json]) => json));
        const subject = `${prefixOf(owner)}.${recordName('g')}`;
        const deflated = headers();
        deflated.set(ENCODING, 'deflate');
        writes.push(
          // Deflated off the main thread (zlib's pool), level 1: most of the gain for little CPU.
          deflate(record, { level: 1 })
            .then((bytes) => acks(nc).publish(subject, bytes, deflated))
            .then((seq) => {
              subjects.set(seq, subject);
              for (const [pk] of members) seqs.set(pk, seq);
            }),
        );
      }
      await Promise.all(writes);
      return { seqs, subjects };
    },
    /** Records the end of these messages (their entries sit above the node's oldest waiting one); answers its sequence. */
    async putEnded(nc: NatsConnection, owner: SpoolOwner, pks: readonly number[]): Promise<number> {
      await provision(nc);
      return acks(nc).publish(`${prefixOf(owner)}.${recordName('e')}`, encoder.encode(JSON.stringify({ ended: [...pks] } satisfies WireRecord)));
    },
    /**
     * Removes every record of the spool below stream sequence `seq`: a node's finished messages go
     * together, below the oldest entry it still needs, rather than one request each.
     */
    removeBelow: (nc: NatsConnection, owner: SpoolOwner, seq: number): Promise<void> => purge(nc, `${prefixOf(owner)}.>`, seq),
    /** Whether this process wrote an object for the message's entry. */
    holdsObject: (owner: SpoolOwner, pk: number): boolean => objectsWritten.has(subjectOf(owner, pk)),
    /** A finished message's object, if this process wrote one, goes at once; its record goes with removeBelow. */
    async release(nc: NatsConnection, owner: SpoolOwner, pk: number): Promise<void> {
      const subject = subjectOf(owner, pk);
      const name = objectsWritten.get(subject);
      if (name === undefined) return;
      await deleteObject(nc, name);
      objectsWritten.delete(subject);
    },
    subjects: subjectsOf,
    /** The stream's last sequence now (every node's writes): any record written after has a higher one. */
    async lastSeq(nc: NatsConnection): Promise<number> {
      await provision(nc);
      return (await (await nc.jetstreamManager()).streams.info(settings.stream)).state.last_seq;
    },
    /** The pks the spool holds a record of their own for (large entries). */
    async pks(nc: NatsConnection, owner: SpoolOwner): Promise<number[]> {
      return (await subjectsOf(nc, owner)).map((subject) => Number(subject.slice(subject.lastIndexOf('.') + 1))).filter((pk) => Number.isSafeInteger(pk));
    },
    /** Whether the spool holds any record. */
    async holdsRecords(nc: NatsConnection, owner: SpoolOwner): Promise<boolean> {
      return (await subjectsOf(nc, owner)).length > 0;
    },
    /** Removes a large entry's record this process may not have written (a start's reconciling), its object read off the record first. */
    async removeStale(nc: NatsConnection, owner: SpoolOwner, pk: number): Promise<void> {
      await provision(nc);
      const subject = subjectOf(owner, pk);
      const wire = await (
        await nc.jetstreamManager()
      ).streams
        .getMessage(settings.stream, { last_by_subj: subject })
        .then(wireOf)
        .catch(() => null);
      await purge(nc, subject);
      const object = wire === null ? undefined : 'object' in wire ? wire.object : 'raw_object' in wire ? wire.raw_object : undefined;
      if (object !== undefined) await deleteObject(nc, object);
      objectsWritten.delete(subject);
    },
    /**
     * Every record of a spool, as an index (which messages each holds, or ends), oldest first:
     * what a replay plan needs, without holding the entries (a lost node's queue may be large).
     */
    async indexes(nc: NatsConnection, owner: SpoolOwner): Promise<Array<{ subject: string; index: SpoolRecordIndex }>> {
      await provision(nc);
      const jsm = await nc.jetstreamManager();
      const info = await jsm.streams.info(settings.stream, { subjects_filter: `${prefixOf(owner)}.>` });
      const found: Array<{ subject: string; index: SpoolRecordIndex }> = [];
      for (const subject of Object.keys(info.state.subjects ?? {})) {
        const message = await lastOn(nc, subject);
        if (message === null) continue;
        const wire = wireOf(message);
        const { seq } = message;
        const index: SpoolRecordIndex =
          'entries' in wire
            ? { seq, pks: wire.entries.map((entry) => entry.origin_pk) }
            : 'ended' in wire
              ? { seq, ended: wire.ended }
              : 'object' in wire
                ? { seq, pks: [Number(subject.slice(subject.lastIndexOf('.') + 1))] }
                : { seq, pks: [wire.origin_pk] };
        found.push({ subject, index });
      }
      return found.sort((a, b) => a.index.seq - b.index.seq);
    },
    /** One record whole (large entries read back from their objects); null once it was removed. */
    async read(nc: NatsConnection, subject: string): Promise<HeldRecord | null> {
      const message = await lastOn(nc, subject);
      return message === null ? null : readRecord(nc, subject, message.seq, wireOf(message));
    },
    /** Removes one record and the objects its entries kept their bytes in. */
    async removeRecord(nc: NatsConnection, held: Pick<HeldRecord, 'subject' | 'objects'>): Promise<void> {
      await purge(nc, held.subject);
      for (const name of held.objects) await deleteObject(nc, name);
    },
  };
}

export type SpoolStream = ReturnType<typeof createSpoolStream>;
