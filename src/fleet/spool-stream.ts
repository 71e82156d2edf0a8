/**
 * The fleet's replicated spool on JetStream (issue 25): one stream, one
 * subject per waiting message, `<prefix>.<node>.<instance>.<pk>`, holding only
 * its latest entry (max_msgs_per_subject 1), so that writing a message's entry
 * again replaces it and the stream holds what the fleet's queues hold. The
 * instance names the data directory: a node on a new disk starts its pks
 * again, and must never overwrite what its lost disk left to adopt.
 *
 * An entry larger than one NATS message (a large SMTP submission) keeps its
 * bytes in the object store `<stream>_large` (R as the stream, chunked by
 * nats.js) and names the object in the entry; the entry is written after the
 * object, and the object removed after the entry.
 */
import { StorageType, type NatsConnection, type ObjectStore } from 'nats';
import type { StoredTransfer } from '../core/fleet-drain.js';
import { createAckPublisher, type AckPublisher } from './ack-publisher.js';
import { fleetStream } from './fleet-stream.js';

/** An entry as the stream holds it: the bytes inline, or in the object store under `raw_object`. */
type HeldEntry = StoredTransfer & { raw_object?: string };

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** Room left in a NATS message beside the entry (headers, subject). */
const HEADROOM = 4096;
/** An entry not acknowledged by then is written again by the spool's next round. */
const ACK_TIMEOUT_MS = 5000;

export interface SpoolStreamSettings {
  stream: string;
  subjectPrefix: string;
  replicas: number;
}

/** One node's spool on one data directory. */
export interface SpoolOwner {
  node: string;
  instance: string;
}

export function createSpoolStream(settings: SpoolStreamSettings) {
  let objects: Promise<ObjectStore> | null = null;
  /** The objects this process wrote, by entry subject: a removal knows them without reading the entry first. */
  const written = new Map<string, string>();
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

  const remove = async (nc: NatsConnection, owner: SpoolOwner, pk: number, object?: string): Promise<void> => {
    await provision(nc);
    const subject = subjectOf(owner, pk);
    await (await nc.jetstreamManager()).streams.purge(settings.stream, { filter: subject });
    const name = object ?? written.get(subject);
    if (name === undefined) return;
    await (await objectStore(nc)).delete(name);
    written.delete(subject);
  };

  return {
    provision,
    /** Writes the message's entry (replacing an older one); answers its stream sequence once the cluster holds it. */
    async put(nc: NatsConnection, owner: SpoolOwner, entry: StoredTransfer): Promise<number> {
      await provision(nc);
      const subject = subjectOf(owner, entry.origin_pk);
      let data = encoder.encode(JSON.stringify(entry));
      if (data.length + HEADROOM > (nc.info?.max_payload ?? 1024 * 1024) && entry.raw_base64 !== null) {
        const name = subject.slice(settings.subjectPrefix.length + 1);
        await (await objectStore(nc)).putBlob({ name }, Buffer.from(entry.raw_base64, 'base64'));
        written.set(subject, name);
        data = encoder.encode(JSON.stringify({ ...entry, raw_base64: null, raw_object: name } satisfies HeldEntry));
      }
      return acks(nc).publish(subject, data);
    },
    /** Removes the message's entry (it finished, or another node holds it now), and its object when it has one. */
    remove,
    /**
     * Removes every entry of the spool below stream sequence `seq`: a node's finished messages go
     * together, below the oldest entry it still needs, rather than one request each.
     */
    async removeBelow(nc: NatsConnection, owner: SpoolOwner, seq: number): Promise<void> {
      await provision(nc);
      await (await nc.jetstreamManager()).streams.purge(settings.stream, { filter: `${prefixOf(owner)}.>`, seq });
    },
    /** Whether this process wrote an object for the message's entry. */
    holdsObject: (owner: SpoolOwner, pk: number): boolean => written.has(subjectOf(owner, pk)),
    /** A finished message's object, if this process wrote one, goes at once; its entry goes with removeBelow. */
    async release(nc: NatsConnection, owner: SpoolOwner, pk: number): Promise<void> {
      const subject = subjectOf(owner, pk);
      const name = written.get(subject);
      if (name === undefined) return;
      await (await objectStore(nc)).delete(name);
      written.delete(subject);
    },
    /** The pks the spool holds an entry for. */
    async pks(nc: NatsConnection, owner: SpoolOwner): Promise<number[]> {
      await provision(nc);
      const info = await (await nc.jetstreamManager()).streams.info(settings.stream, { subjects_filter: `${prefixOf(owner)}.>` });
      return Object.keys(info.state.subjects ?? {})
        .map((subject) => Number(subject.slice(subject.lastIndexOf('.') + 1)))
        .filter((pk) => Number.isSafeInteger(pk));
    },
    /** Removes an entry this process may not have written (a start's reconciling): its object, if any, is read off the entry first. */
    async removeStale(nc: NatsConnection, owner: SpoolOwner, pk: number): Promise<void> {
      await provision(nc);
      const object = await (
        await nc.jetstreamManager()
      ).streams
        .getMessage(settings.stream, { last_by_subj: subjectOf(owner, pk) })
        .then((message) => (JSON.parse(decoder.decode(message.data)) as HeldEntry).raw_object)
        .catch(() => undefined);
      await remove(nc, owner, pk, object);
    },
    /** The entry the spool holds for the pk, whole (an object's bytes read back), with the object's name; null when none. */
    async read(nc: NatsConnection, owner: SpoolOwner, pk: number): Promise<{ entry: StoredTransfer; object: string | undefined } | null> {
      await provision(nc);
      let held: HeldEntry;
      try {
        const message = await (await nc.jetstreamManager()).streams.getMessage(settings.stream, { last_by_subj: subjectOf(owner, pk) });
        held = JSON.parse(decoder.decode(message.data)) as HeldEntry;
      } catch (error) {
        if ((error as { api_error?: { code?: number } }).api_error?.code === 404) return null;
        throw error;
      }
      const { raw_object: object, ...entry } = held;
      if (object === undefined) return { entry, object };
      const bytes = await (await objectStore(nc)).getBlob(object);
      if (bytes === null) throw new Error(`the spool entry's object ${object} is missing`);
      return { entry: { ...entry, raw_base64: Buffer.from(bytes).toString('base64') }, object };
    },
  };
}

export type SpoolStream = ReturnType<typeof createSpoolStream>;
