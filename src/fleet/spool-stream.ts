/**
 * The fleet's replicated spool on JetStream (issue 25): one stream, one
 * subject per waiting message, `<prefix>.<node>.<instance>.<pk>`, holding only
 * its latest entry (max_msgs_per_subject 1), so that writing a message's entry
 * again replaces it and the stream holds what the fleet's queues hold. The
 * instance names the data directory: a node on a new disk starts its pks
 * again, and must never overwrite what its lost disk left to adopt.
 */
import { DiscardPolicy, RetentionPolicy, StorageType, type NatsConnection } from 'nats';
import type { StoredTransfer } from '../core/fleet-drain.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const NOT_FOUND = 10059;
/** Room left in a NATS message beside the entry (headers, subject). */
const HEADROOM = 4096;

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

/** An entry the server cannot carry as one message (`code` is stable). */
export class EntryTooLarge extends Error {
  readonly code = 'SPOOL_ENTRY_TOO_LARGE';

  constructor(
    readonly bytes: number,
    readonly maxPayload: number,
  ) {
    super(`a spool entry of ${bytes} bytes is more than the cluster's max_payload of ${maxPayload} bytes`);
    this.name = 'EntryTooLarge';
  }
}

export function createSpoolStream(settings: SpoolStreamSettings) {
  let provisioned: Promise<void> | null = null;
  const prefixOf = (owner: SpoolOwner): string => `${settings.subjectPrefix}.${owner.node}.${owner.instance}`;
  const subjectOf = (owner: SpoolOwner, pk: number): string => `${prefixOf(owner)}.${pk}`;

  const provision = (nc: NatsConnection): Promise<void> => {
    provisioned ??= (async () => {
      const jsm = await nc.jetstreamManager();
      try {
        await jsm.streams.info(settings.stream);
      } catch (error) {
        if ((error as { api_error?: { err_code?: number } }).api_error?.err_code !== NOT_FOUND) throw error;
        await jsm.streams.add({
          name: settings.stream,
          subjects: [`${settings.subjectPrefix}.>`],
          storage: StorageType.File,
          retention: RetentionPolicy.Limits,
          discard: DiscardPolicy.Old,
          num_replicas: settings.replicas,
          max_msgs_per_subject: 1,
        });
      }
    })().catch((error: unknown) => {
      provisioned = null;
      throw error;
    });
    return provisioned;
  };

  return {
    provision,
    /** Writes the message's entry (replacing an older one); answers its stream sequence once the cluster holds it. */
    async put(nc: NatsConnection, owner: SpoolOwner, entry: StoredTransfer): Promise<number> {
      await provision(nc);
      const data = encoder.encode(JSON.stringify(entry));
      const maxPayload = nc.info?.max_payload ?? 1024 * 1024;
      if (data.length + HEADROOM > maxPayload) throw new EntryTooLarge(data.length, maxPayload);
      return (await nc.jetstream().publish(subjectOf(owner, entry.origin_pk), data)).seq;
    },
    /** Removes the message's entry (it finished, or another node holds it now). */
    async remove(nc: NatsConnection, owner: SpoolOwner, pk: number): Promise<void> {
      await provision(nc);
      await (await nc.jetstreamManager()).streams.purge(settings.stream, { filter: subjectOf(owner, pk) });
    },
    /** Removes every entry of the spool. */
    async removeAll(nc: NatsConnection, owner: SpoolOwner): Promise<void> {
      await provision(nc);
      await (await nc.jetstreamManager()).streams.purge(settings.stream, { filter: `${prefixOf(owner)}.>` });
    },
    /** The pks the spool holds an entry for. */
    async pks(nc: NatsConnection, owner: SpoolOwner): Promise<number[]> {
      await provision(nc);
      const info = await (await nc.jetstreamManager()).streams.info(settings.stream, { subjects_filter: `${prefixOf(owner)}.>` });
      return Object.keys(info.state.subjects ?? {})
        .map((subject) => Number(subject.slice(subject.lastIndexOf('.') + 1)))
        .filter((pk) => Number.isSafeInteger(pk));
    },
    /** The entry the spool holds for the pk; null when none. */
    async read(nc: NatsConnection, owner: SpoolOwner, pk: number): Promise<StoredTransfer | null> {
      await provision(nc);
      try {
        const message = await (await nc.jetstreamManager()).streams.getMessage(settings.stream, { last_by_subj: subjectOf(owner, pk) });
        return JSON.parse(decoder.decode(message.data)) as StoredTransfer;
      } catch (error) {
        if ((error as { api_error?: { code?: number } }).api_error?.code === 404) return null;
        throw error;
      }
    },
  };
}

export type SpoolStream = ReturnType<typeof createSpoolStream>;
