/**
 * What every part of the fleet's spool stream shares: its subjects (each
 * node's records under `<prefix>.<node>.<instance>.>`), the stream made once
 * per process, a purge by subject, and the object store for large entries.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import type { StoredMsg } from '@nats-io/jetstream';
import type { SpoolRecord } from '../../core/fleet/index.js';
import { isNotFound, managerOf } from '../../nats/index.js';
import { fleetStream } from '../link/fleet-stream.js';
import { createSpoolObjects, type SpoolObjects } from './spool-objects.js';

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

/** A record read back, with what removing it takes. */
export interface HeldRecord {
  subject: string;
  record: SpoolRecord;
  /** The objects its entries keep their bytes in. */
  objects: string[];
}

export interface SpoolAccess {
  settings: SpoolStreamSettings;
  /** Makes sure the stream exists (once per process). */
  provision(nc: NatsConnection): Promise<void>;
  /** Removes the records on `filter`, those below `seq` only when given. */
  purge(nc: NatsConnection, filter: string, seq?: number): Promise<void>;
  /** The record on a subject, null when there is none (purged since it was listed). */
  lastOn(nc: NatsConnection, subject: string): Promise<StoredMsg | null>;
  /** The subjects of every record a spool holds now. */
  subjectsOf(nc: NatsConnection, owner: SpoolOwner): Promise<string[]>;
  /** Where an owner's records sit: `<prefix>.<node>.<instance>`. */
  prefixOf(owner: SpoolOwner): string;
  /** The subject of a large entry's record of its own. */
  subjectOf(owner: SpoolOwner, pk: number): string;
  objects: SpoolObjects;
}

export function createSpoolAccess(settings: SpoolStreamSettings): SpoolAccess {
  const ensureStream = fleetStream({
    name: settings.stream,
    subjectPrefix: settings.subjectPrefix,
    replicas: settings.replicas,
    limits: { max_msgs_per_subject: 1 },
  });
  const provision = async (nc: NatsConnection): Promise<void> => void (await ensureStream(nc));
  const prefixOf = (owner: SpoolOwner): string => `${settings.subjectPrefix}.${owner.node}.${owner.instance}`;
  return {
    settings,
    provision,
    async purge(nc, filter, seq) {
      await provision(nc);
      await (await managerOf(nc)).streams.purge(settings.stream, seq === undefined ? { filter } : { filter, seq });
    },
    async lastOn(nc, subject) {
      try {
        // Null when no message is on the subject: nats.js answers JetStream's "no message found" so.
        return await (await managerOf(nc)).streams.getMessage(settings.stream, { last_by_subj: subject });
      } catch (error) {
        // Nor is there one in a stream that is not there (yet, or any more).
        if (isNotFound(error)) return null;
        throw error;
      }
    },
    async subjectsOf(nc, owner) {
      await provision(nc);
      const info = await (
        await managerOf(nc)
      ).streams.info(settings.stream, { subjects_filter: `${prefixOf(owner)}.>` });
      return Object.keys(info.state.subjects ?? {});
    },
    prefixOf,
    subjectOf: (owner, pk) => `${prefixOf(owner)}.${pk}`,
    objects: createSpoolObjects(settings),
  };
}
