/**
 * A stream of the fleet's own (the claim log, the spool), made once per
 * process: created when absent (file storage, limits retention, the fleet's
 * replicas, its subjects under one prefix), found when present. A failed
 * attempt (the cluster electing, unreachable) is forgotten, so the next use
 * tries again.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { jetstreamManager, DiscardPolicy, RetentionPolicy, StorageType, type StreamConfig } from '@nats-io/jetstream';
import { isStreamNotFound } from '../../nats/index.js';

export interface FleetStreamSettings {
  name: string;
  subjectPrefix: string;
  replicas: number;
  /** Limits beyond the common ones (max_age, max_msgs_per_subject). */
  limits: Partial<StreamConfig>;
  /** The JetStream API's timeout for the check; JetStream's own when absent. */
  timeoutMs?: number;
}

/** Answers a function that makes sure the stream exists; it resolves true the one time it created it. */
export function fleetStream(settings: FleetStreamSettings): (nc: NatsConnection) => Promise<boolean> {
  let provisioned: Promise<boolean> | null = null;
  return (nc) => {
    provisioned ??= (async () => {
      const jsm = await jetstreamManager(nc, settings.timeoutMs === undefined ? {} : { timeout: settings.timeoutMs });
      try {
        await jsm.streams.info(settings.name);
        return false;
      } catch (error) {
        if (!isStreamNotFound(error)) throw error;
      }
      await jsm.streams.add({
        name: settings.name,
        subjects: [`${settings.subjectPrefix}.>`],
        storage: StorageType.File,
        retention: RetentionPolicy.Limits,
        discard: DiscardPolicy.Old,
        num_replicas: settings.replicas,
        ...settings.limits,
      });
      return true;
    })().catch((error: unknown) => {
      provisioned = null;
      throw error;
    });
    return provisioned;
  };
}
