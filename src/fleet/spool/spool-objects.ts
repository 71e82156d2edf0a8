/**
 * The object store beside the fleet's spool stream (`<stream>_large`): where an
 * entry larger than a NATS message keeps its JSON. It remembers the objects
 * this process wrote, so that a finished message's object goes without its
 * record being read first; an erased message's object is overwritten before it goes.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { StorageType, type MsgRequest } from '@nats-io/jetstream';
import { Objm, type ObjectStore } from '@nats-io/obj';
import { managerOf } from '../../nats/index.js';

export interface SpoolObjects {
  /** Stores a large entry's JSON under `name`, remembered by its record's subject. */
  put(nc: NatsConnection, subject: string, name: string, json: Uint8Array): Promise<void>;
  /** An object's bytes, null when it is gone. */
  bytes(nc: NatsConnection, name: string): Promise<Uint8Array | null>;
  remove(nc: NatsConnection, name: string): Promise<void>;
  /** Removes an object for good: its chunks overwritten on the servers (a secure delete each), then the object deleted. */
  erase(nc: NatsConnection, name: string): Promise<void>;
  /** Whether this process wrote an object for the record on `subject`. */
  wrote(subject: string): boolean;
  /** The object this process wrote for the record on `subject`, removed; nothing when it wrote none. */
  release(nc: NatsConnection, subject: string): Promise<void>;
  /** The record on `subject` went with its object, whoever wrote it. */
  forget(subject: string): void;
}

/**
 * The first message on `subject` after `after`, asked of the stream's leader (STREAM.MSG.GET takes
 * `next_by_subj` since 2.9; nats.js types it for the direct get only, which a lagging replica may answer).
 */
const nextOn = (subject: string, after: number): MsgRequest =>
  ({ seq: after + 1, next_by_subj: subject }) as unknown as MsgRequest;

export function createSpoolObjects(settings: { stream: string; replicas: number }): SpoolObjects {
  let objects: Promise<ObjectStore> | null = null;
  /** The objects this process wrote, by pk subject. */
  const written = new Map<string, string>();
  const store = (nc: NatsConnection): Promise<ObjectStore> => {
    objects ??= new Objm(nc)
      .create(`${settings.stream}_large`, { replicas: settings.replicas, storage: StorageType.File })
      .catch((error: unknown) => {
        // Forgotten, so the next use tries again (the cluster electing, unreachable).
        objects = null;
        throw error;
      });
    return objects;
  };
  const remove = async (nc: NatsConnection, name: string): Promise<void> => void (await (await store(nc)).delete(name));
  const bucket = `${settings.stream}_large`;

  /**
   * A delete purges the chunks, and the file store keeps a purged message's bytes until it
   * compacts: each chunk (the object store's stream `OBJ_<bucket>`, subject `$O.<bucket>.C.<nuid>`,
   * ADR-20) is overwritten first, found one after the other by `next_by_subj`.
   */
  const erase = async (nc: NatsConnection, name: string): Promise<void> => {
    const info = await (await store(nc)).info(name);
    if (info === null || info.deleted) return;
    const jsm = await managerOf(nc);
    const chunks = `$O.${bucket}.C.${info.nuid}`;
    for (let after = 0; ;) {
      const chunk = await jsm.streams.getMessage(`OBJ_${bucket}`, nextOn(chunks, after));
      if (chunk === null) break;
      await jsm.streams.deleteMessage(`OBJ_${bucket}`, chunk.seq, true);
      after = chunk.seq;
    }
    await remove(nc, name);
  };

  return {
    async put(nc, subject, name, json) {
      await (await store(nc)).putBlob({ name }, json);
      written.set(subject, name);
    },
    bytes: async (nc, name) => (await store(nc)).getBlob(name),
    remove,
    erase,
    wrote: (subject) => written.has(subject),
    async release(nc, subject) {
      const name = written.get(subject);
      if (name === undefined) return;
      await remove(nc, name);
      written.delete(subject);
    },
    forget: (subject) => void written.delete(subject),
  };
}
