/**
 * The object store beside the fleet's spool stream (`<stream>_large`): where an
 * entry larger than a NATS message keeps its JSON. It remembers the objects
 * this process wrote, so that a finished message's object goes without its
 * record being read first.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { StorageType } from '@nats-io/jetstream';
import { Objm, type ObjectStore } from '@nats-io/obj';

export interface SpoolObjects {
  /** Stores a large entry's JSON under `name`, remembered by its record's subject. */
  put(nc: NatsConnection, subject: string, name: string, json: Uint8Array): Promise<void>;
  /** An object's bytes, null when it is gone. */
  bytes(nc: NatsConnection, name: string): Promise<Uint8Array | null>;
  remove(nc: NatsConnection, name: string): Promise<void>;
  /** Whether this process wrote an object for the record on `subject`. */
  wrote(subject: string): boolean;
  /** The object this process wrote for the record on `subject`, removed; nothing when it wrote none. */
  release(nc: NatsConnection, subject: string): Promise<void>;
  /** The record on `subject` went with its object, whoever wrote it. */
  forget(subject: string): void;
}

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

  return {
    async put(nc, subject, name, json) {
      await (await store(nc)).putBlob({ name }, json);
      written.set(subject, name);
    },
    bytes: async (nc, name) => (await store(nc)).getBlob(name),
    remove,
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
