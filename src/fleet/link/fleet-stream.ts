/**
 * A stream of the fleet's own (the claim log, the spool), made once per
 * process: created when absent (file storage, limits retention, the fleet's
 * replicas, its subjects under one prefix), found when present. A failed
 * attempt (the cluster electing, unreachable) is forgotten, so the next use
 * tries again.
 */
import { DiscardPolicy, RetentionPolicy, StorageType, type NatsConnection, type StreamConfig } from 'nats';

const NOT_FOUND = 10059;

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
      const jsm = await nc.jetstreamManager(settings.timeoutMs === undefined ? {} : { timeout: settings.timeoutMs });
      try {
        await jsm.streams.info(settings.name);
        return false;
      } catch (error) {
        if ((error as { api_error?: { err_code?: number } }).api_error?.err_code !== NOT_FOUND) throw error;
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
