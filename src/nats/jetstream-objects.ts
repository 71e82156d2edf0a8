/**
 * The fleet's JetStream object store as the body store (`[storage] backend = "jetstream"`, fleet
 * mode only): every node reads the objects every other node wrote, replicated by the cluster
 * (R `fleet.replicas`, file storage), so a fleet needs no S3 service to hand its large bodies
 * over by name. The objects hold sealed bytes only, as in any body store. The store has its own
 * connection, made at the first use and again after a failed one; a cluster that does not answer
 * within the timeout fails the operation (the submission is refused, the send retried).
 */
import { jetstream, StorageType } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { Objm, type ObjectStore } from '@nats-io/obj';
import { connect } from '@nats-io/transport-node';
import type { BodyObjects } from '../core/message/index.js';

export interface JetStreamObjectSettings {
  /** The cluster's server URLs, comma-separated (`nats.url`). */
  url: string;
  /** The object store's bucket (its stream is `OBJ_<bucket>`). */
  bucket: string;
  replicas: number;
  timeoutMs: number;
}

/** `ownNames` begins the names of the objects this node writes: `list` answers only those (its sweep's). */
export function createJetStreamObjects(
  settings: JetStreamObjectSettings,
  ownNames: string,
): Omit<BodyObjects, 'health'> {
  let connection: NatsConnection | null = null;
  let opened: Promise<ObjectStore> | null = null;
  const open = async (): Promise<ObjectStore> => {
    connection ??= await connect({
      servers: settings.url.split(','),
      name: 'mailproxy-body-store',
      timeout: settings.timeoutMs,
      // Once made, the connection comes back by itself; an operation meanwhile fails at its timeout.
      maxReconnectAttempts: -1,
    });
    const js = jetstream(connection, { timeout: settings.timeoutMs });
    return new Objm(js).create(settings.bucket, { replicas: settings.replicas, storage: StorageType.File });
  };
  const store = (): Promise<ObjectStore> =>
    (opened ??= open().catch((error: unknown) => {
      // Forgotten, so the next operation tries again (the cluster unreachable, electing a leader).
      opened = null;
      throw error;
    }));

  return {
    async put(name, bytes) {
      // The put resolves once the cluster acknowledged every chunk and the object's meta: durable on its replicas.
      await (await store()).putBlob({ name }, bytes);
    },
    async get(name) {
      const bytes = await (await store()).getBlob(name);
      return bytes === null ? null : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
    async remove(name) {
      // Deleting purges the chunks; the client answers one already gone as done (it looks the object up itself).
      await (await store()).delete(name);
    },
    async list(before) {
      const found = await (await store()).list();
      return found
        .filter((info) => !info.deleted && info.name.startsWith(ownNames) && Date.parse(info.mtime) < before)
        .map((info) => info.name);
    },
    async probe() {
      await (await store()).status();
      return true;
    },
    async close() {
      const closing = connection;
      connection = null;
      opened = null;
      await closing?.close();
    },
  };
}
